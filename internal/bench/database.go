package bench

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store"
	signing "github.com/neemias/neemias-mcp/internal/tokens" // bench has a func tokens
)

// DefaultAdminURL is the admin connection when neither --database-url nor $DATABASE_URL says
// otherwise: this project's development PostgreSQL.
const DefaultAdminURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// Database is the bench's own database: created fresh, migrated, seeded and ANALYZEd, with
// its signing key.
type Database struct {
	URL  string // of the bench database, connecting as the admin role (owner, bypasses RLS)
	Pool *pgxpool.Pool
	// SigningKeyIn is how long making the database's first signing key took (an RSA-2048
	// key, tokens.KeyStore.Active): the work of a new database's first server start, done
	// here so that start to ready measures what every restart and every added replica pays.
	SigningKeyIn time.Duration
}

// databaseURL is adminURL with its database name replaced by name. Only URLs (postgres://),
// not libpq key=value strings: the bench rewrites the database part.
func databaseURL(adminURL, name string) (string, error) {
	u, err := url.Parse(adminURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		// The parse error can quote the URL, password included: do not wrap it.
		return "", errors.New("bench: the admin database URL must be a postgres:// URL")
	}
	u.Path = "/" + name
	return u.String(), nil
}

// CreateDatabase drops and recreates database name through adminURL, migrates it and seeds
// the demo church (scale churches), then runs ANALYZE: the server's plans are those of current
// statistics, as in production with autovacuum (which is off on this machine). Last it makes
// the signing key the server's first start would (Database.SigningKeyIn).
func CreateDatabase(ctx context.Context, adminURL, name string, scale int) (*Database, error) {
	if !validIdent(name) {
		return nil, fmt.Errorf("bench: database name %q must be lower-case letters, digits and _", name)
	}
	dbURL, err := databaseURL(adminURL, name)
	if err != nil {
		return nil, err
	}
	admin, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return nil, fmt.Errorf("bench: admin connection: %w", err)
	}
	defer admin.Close(context.WithoutCancel(ctx))
	for _, q := range []string{
		"DROP DATABASE IF EXISTS " + name + " WITH (FORCE)",
		"CREATE DATABASE " + name,
	} {
		if _, err := admin.Exec(ctx, q); err != nil {
			return nil, fmt.Errorf("bench: %s: %w", q, err)
		}
	}
	if _, err := store.Migrate(ctx, dbURL); err != nil {
		return nil, fmt.Errorf("bench: migrate: %w", err)
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return nil, fmt.Errorf("bench: open pool: %w", err)
	}
	d := &Database{URL: dbURL, Pool: pool}
	if _, err := d.Seed(ctx, scale); err != nil {
		pool.Close()
		return nil, err
	}
	start := time.Now()
	if _, err := (&signing.KeyStore{Pool: pool}).Active(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("bench: signing key: %w", err)
	}
	d.SigningKeyIn = time.Since(start)
	return d, nil
}

// Seed brings the database to scale churches (the existing ones are kept, so growing from 1×
// to 10× seeds only the nine new ones) and runs ANALYZE.
func (d *Database) Seed(ctx context.Context, scale int) (time.Duration, error) {
	start := time.Now()
	if _, err := seed.Run(ctx, d.Pool, seed.Options{Churches: scale}); err != nil {
		return 0, fmt.Errorf("bench: seed %d×: %w", scale, err)
	}
	if _, err := d.Pool.Exec(ctx, "ANALYZE"); err != nil {
		return 0, fmt.Errorf("bench: analyze: %w", err)
	}
	return time.Since(start), nil
}

// Close closes the pool; the database stays for inspection until the next run drops it.
func (d *Database) Close() { d.Pool.Close() }

func validIdent(s string) bool {
	return s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789_") == "" && (s[0] < '0' || s[0] > '9')
}

// LockRun takes a PostgreSQL advisory lock named after the bench database, on a session of
// its own that lives until release is called. Two bench runs on one PostgreSQL would drop
// each other's database and share the machine's cores, skewing both; the second one waits.
func LockRun(ctx context.Context, adminURL, name string, logf func(string, ...any)) (release func(), err error) {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return nil, fmt.Errorf("bench: admin connection: %w", err)
	}
	release = func() { conn.Close(context.Background()) }
	key := "neemias-bench:" + name
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock(hashtext($1))", key).Scan(&got); err != nil {
		release()
		return nil, fmt.Errorf("bench: advisory lock: %w", err)
	}
	if !got {
		logf("another bench run holds database %s; waiting for it to finish", name)
		if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(hashtext($1))", key); err != nil {
			release()
			return nil, fmt.Errorf("bench: advisory lock: %w", err)
		}
	}
	return release, nil
}
