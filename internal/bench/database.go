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
)

// DefaultAdminURL is the admin connection when neither --database-url nor $DATABASE_URL says
// otherwise: this project's development PostgreSQL.
const DefaultAdminURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// Database is the bench's own database: created fresh, migrated, seeded and ANALYZEd.
type Database struct {
	URL  string // of the bench database, connecting as the admin role (owner, bypasses RLS)
	Pool *pgxpool.Pool
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
// statistics, as in production with autovacuum (which is off on this machine).
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
