package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/neemias/neemias-mcp/queries"
)

// Migration is one migration of the schema and whether the database has it.
type Migration struct {
	// Version is the number the file name starts with (00004_... is 4).
	Version int64
	// Name is the file name, for example "00004_row_level_security.sql".
	Name string
	// Applied reports whether the database has the migration; AppliedAt says since when.
	Applied   bool
	AppliedAt time.Time
}

// MigrationsFS returns the embedded migrations (queries/schema), rooted at the directory that
// holds the .sql files.
func MigrationsFS() fs.FS {
	sub, err := fs.Sub(queries.Migrations, queries.MigrationsDir)
	if err != nil {
		panic(err) // the directory is embedded at build time; fs.Sub fails only on a bad name
	}
	return sub
}

// Migrate applies the pending embedded migrations to the database at url, in order, and
// returns the ones it applied (none when the schema is current: applying twice is a no-op).
// Each migration runs in its own transaction together with its version bookkeeping, so a
// failing migration leaves nothing of itself behind; the ones before it stay applied. A
// PostgreSQL advisory lock serializes concurrent migrators (several replicas starting at once).
// Then the repeatable migrations (the generated row-filter functions; see applyRepeatable)
// whose text changed since they were applied run again; they are in the result too.
// Run it as the schema owner.
func Migrate(ctx context.Context, url string) ([]Migration, error) {
	return MigrateFS(ctx, url, MigrationsFS())
}

// MigrationStatus lists every embedded migration and whether the database at url has it.
func MigrationStatus(ctx context.Context, url string) ([]Migration, error) {
	return MigrationStatusFS(ctx, url, MigrationsFS())
}

// MigrateFS is [Migrate] with the migrations of fsys (goose .sql files at its root): for tests
// and tools. Migrations that opt out of transactions (-- +goose NO TRANSACTION) are refused.
func MigrateFS(ctx context.Context, url string, fsys fs.FS) ([]Migration, error) {
	var applied []Migration
	early, err := applyRepeatable(ctx, url, fsys, nil, repeatKnownOnly)
	if err != nil {
		return nil, err
	}
	applied = append(applied, repeatedMigrations(early)...)
	err = withProvider(ctx, url, fsys, func(p *goose.Provider) error {
		// Up to date: done without the migration lock, a session-level advisory lock that a
		// pooler in transaction mode (PgBouncer) cannot keep on one server connection. Every
		// replica starting behind PgBouncer takes this path once a migration job (or the
		// first replica, on a direct connection) has applied the migrations.
		if pending, err := p.HasPending(ctx); err == nil && !pending {
			return nil
		}
		results, err := p.Up(ctx)
		var perr *goose.PartialError
		if errors.As(err, &perr) {
			results = perr.Applied
		}
		for _, r := range results {
			if r.Error == nil {
				applied = append(applied, Migration{
					Version: r.Source.Version, Name: path.Base(r.Source.Path), Applied: true,
				})
			}
		}
		if perr != nil && perr.Failed != nil {
			return fmt.Errorf("store: migration %s failed: %w", path.Base(perr.Failed.Source.Path), perr.Err)
		}
		if err != nil {
			return fmt.Errorf("store: migrate: %w", err)
		}
		return nil
	})
	var now []string
	for _, m := range applied {
		now = append(now, m.Name)
	}
	if err != nil {
		// Record what goose did apply, so the next run does not re-run it needlessly.
		if _, rerr := applyRepeatable(ctx, url, fsys, now, repeatRecordOnly); rerr != nil {
			return applied, errors.Join(err, rerr)
		}
		return applied, err
	}
	rerun, err := applyRepeatable(ctx, url, fsys, now, repeatAll)
	return append(applied, repeatedMigrations(rerun)...), err
}

// repeatedMigrations are the re-run repeatable migrations of names, as Migrate reports them.
func repeatedMigrations(names []string) []Migration {
	out := make([]Migration, 0, len(names))
	for _, name := range names {
		var v int64
		_, _ = fmt.Sscanf(name, "%d_", &v) // every name has passed goose's own version parsing
		out = append(out, Migration{Version: v, Name: name, Applied: true})
	}
	return out
}

// MigrationStatusFS is [MigrationStatus] with the migrations of fsys.
func MigrationStatusFS(ctx context.Context, url string, fsys fs.FS) ([]Migration, error) {
	var out []Migration
	err := withProvider(ctx, url, fsys, func(p *goose.Provider) error {
		status, err := p.Status(ctx)
		if err != nil {
			return fmt.Errorf("store: migration status: %w", err)
		}
		for _, s := range status {
			out = append(out, Migration{
				Version:   s.Source.Version,
				Name:      path.Base(s.Source.Path),
				Applied:   s.State == goose.StateApplied,
				AppliedAt: s.AppliedAt,
			})
		}
		return nil
	})
	return out, err
}

func withProvider(ctx context.Context, url string, fsys fs.FS, fn func(*goose.Provider) error) error {
	if err := requireTransactional(fsys); err != nil {
		return err
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return errors.New("store: invalid database URL")
	}
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	if err := db.PingContext(ctx); err != nil {
		return fmt.Errorf("store: connect: %w", err)
	}
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return fmt.Errorf("store: migration lock: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys,
		goose.WithSessionLocker(locker),
		goose.WithDisableGlobalRegistry(true),
	)
	if err != nil {
		return fmt.Errorf("store: load migrations: %w", err)
	}
	defer p.Close()
	return fn(p)
}

// requireTransactional refuses a migration that would run outside a transaction: such a
// migration could fail half-way and leave the schema half-applied.
func requireTransactional(fsys fs.FS) error {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return fmt.Errorf("store: list migrations: %w", err)
	}
	for _, name := range names {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return fmt.Errorf("store: read migration %s: %w", name, err)
		}
		if noTransaction.Match(b) {
			return fmt.Errorf("store: migration %s opts out of transactions (+goose NO TRANSACTION); refused", name)
		}
	}
	return nil
}

var noTransaction = regexp.MustCompile(`(?mi)^--\s*\+goose\s+NO\s+TRANSACTION\b`)
