package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	files, err := scanMigrations(fsys)
	if err != nil {
		return nil, err
	}
	// Up to date, what every start of a replica but the first after a release finds: one
	// connection and one query say so, instead of three connections, goose's provider and
	// the repeatable migrations' transaction (upToDate). Anything else, or any doubt, takes
	// the full path below, which decides and reports as it always did.
	if current, err := upToDate(ctx, url, files); err == nil && current {
		return nil, nil
	}
	var applied []Migration
	early, err := applyRepeatable(ctx, url, files, nil, repeatKnownOnly)
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
		if _, rerr := applyRepeatable(ctx, url, files, now, repeatRecordOnly); rerr != nil {
			return applied, errors.Join(err, rerr)
		}
		return applied, err
	}
	rerun, err := applyRepeatable(ctx, url, files, now, repeatAll)
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
	_, err := scanMigrations(fsys)
	return err
}

// migrationFiles is what Migrate reads of the migration files before it connects.
type migrationFiles struct {
	// versions are goose's versions of the files (NNNNN_name.sql), ok false when a name has
	// none, two files share one, or there are Go files: goose then decides (and refuses).
	versions []int64
	ok       bool
	// repeatable are the repeatable migrations (see applyRepeatable).
	repeatable []repeatableFile
}

// repeatableFile is a repeatable migration: its name, the SHA-256 of its text (hex) and its
// Up section.
type repeatableFile struct{ name, sum, up string }

// scanMigrations reads the migration files of fsys once: it refuses one that opts out of
// transactions (requireTransactional) and returns their versions and repeatable migrations.
func scanMigrations(fsys fs.FS) (migrationFiles, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return migrationFiles{}, fmt.Errorf("store: list migrations: %w", err)
	}
	out := migrationFiles{ok: true}
	if gos, err := fs.Glob(fsys, "*.go"); err != nil || len(gos) > 0 {
		out.ok = false
	}
	seen := map[int64]bool{}
	for _, name := range names {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return migrationFiles{}, fmt.Errorf("store: read migration %s: %w", name, err)
		}
		if optsOutOfTransactions(b) {
			return migrationFiles{}, fmt.Errorf("store: migration %s opts out of transactions (+goose NO TRANSACTION); refused", name)
		}
		if v, err := goose.NumericComponent(name); err != nil || seen[v] {
			out.ok = false
		} else {
			seen[v] = true
			out.versions = append(out.versions, v)
		}
		// The marker is case-sensitive: a file without its literal text cannot match.
		if !bytes.Contains(b, []byte("+neemias")) || !repeatableMarker.Match(b) {
			continue
		}
		up, err := upSection(string(b))
		if err != nil {
			return migrationFiles{}, fmt.Errorf("store: repeatable migration %s: %w", name, err)
		}
		sum := sha256.Sum256(b)
		out.repeatable = append(out.repeatable, repeatableFile{name, hex.EncodeToString(sum[:]), up})
	}
	return out, nil
}

// noTransaction is goose's opt-out of transactions, anywhere a line starts with it; \A
// instead of (?m)^ because optsOutOfTransactions tries it only where a line starts with "--",
// so that the whole text is not run through a regexp without a literal prefix (1.5 ms for
// the 27 files, at every start).
var noTransaction = regexp.MustCompile(`(?i)\A--\s*\+goose\s+NO\s+TRANSACTION\b`)

// optsOutOfTransactions reports whether a line of b starts with `-- +goose NO TRANSACTION`
// (any case, any spacing): (?mi)^--\s*\+goose\s+NO\s+TRANSACTION\b over the whole text.
func optsOutOfTransactions(b []byte) bool {
	for i := 0; i < len(b); {
		j := bytes.Index(b[i:], []byte("--"))
		if j < 0 {
			return false
		}
		i += j
		if (i == 0 || b[i-1] == '\n') && noTransaction.Match(b[i:]) {
			return true
		}
		i++
	}
	return false
}

// upToDate reports whether the database at url has every migration of files and the text of
// every repeatable one: then Migrate has nothing to do, as its full path would find (goose's
// HasPending false: every version of the files is in goose_db_version; applyRepeatable: each
// repeatable file's SHA-256 recorded). One connection, one statement, in one snapshot, so a
// migration another replica is applying (uncommitted) reads as missing and the full path,
// with its locks, takes over. A missing table, an error, an unreadable file name: false.
func upToDate(ctx context.Context, url string, files migrationFiles) (bool, error) {
	if !files.ok || len(files.versions) == 0 {
		return false, nil
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return false, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	names, sums := make([]string, 0, len(files.repeatable)), make([]string, 0, len(files.repeatable))
	for _, f := range files.repeatable {
		names, sums = append(names, f.name), append(sums, f.sum)
	}
	var current bool
	// Simple protocol: one round trip, no statement to prepare on a connection used once.
	err = conn.QueryRow(ctx, `SELECT NOT EXISTS (SELECT unnest($1::bigint[]) EXCEPT SELECT version_id FROM goose_db_version)
		AND NOT EXISTS (SELECT * FROM unnest($2::text[], $3::text[]) EXCEPT SELECT name, sha256 FROM repeatable_migrations)`,
		pgx.QueryExecModeSimpleProtocol, files.versions, names, sums).Scan(&current)
	return current, err
}
