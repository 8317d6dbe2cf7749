package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store"
)

// DefaultAdminURL is the admin connection used when $DATABASE_URL is not set.
const DefaultAdminURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// AdminURL returns the admin connection URL: $DATABASE_URL or [DefaultAdminURL].
func AdminURL() string {
	if u := os.Getenv("DATABASE_URL"); u != "" {
		return u
	}
	return DefaultAdminURL
}

// URLFor returns the admin URL pointed at database name.
func URLFor(name string) string {
	admin := AdminURL()
	if strings.HasPrefix(admin, "postgres://") || strings.HasPrefix(admin, "postgresql://") {
		u, err := url.Parse(admin)
		if err == nil {
			u.Path = "/" + name
			u.RawPath = ""
			return u.String()
		}
	}
	// libpq key=value form: a later key overrides an earlier one.
	return admin + " dbname=" + name
}

// New returns a store on a fresh migrated database of its own ([NewDatabase]); the store is
// closed and the database dropped when t ends.
func New(t testing.TB) *store.Store {
	t.Helper()
	dbURL := NewDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := store.New(ctx, dbURL)
	if err != nil {
		t.Fatalf("storetest: open store: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// NewSeeded is [New] with the synthetic demo data of internal/seed in the database (the zero
// Options: the demo church, history up to today; pin Options.Until for stable dates).
func NewSeeded(t testing.TB, opts seed.Options) *store.Store {
	t.Helper()
	s := New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := seed.Run(ctx, s.Pool(), opts); err != nil {
		t.Fatalf("storetest: seed: %v", err)
	}
	return s
}

// NewDatabase creates a database cloned from the migrated template and returns its URL. The
// database is dropped when t ends, connections still open to it included.
func NewDatabase(t testing.TB) string {
	t.Helper()
	tpl := template(t)
	name := "neemias_test_" + randomHex(8)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := adminExec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", ident(name), ident(tpl))); err != nil {
		t.Fatalf("storetest: create test database: %v", err)
	}
	t.Cleanup(func() { DropDatabase(t, name) })
	return URLFor(name)
}

// NewEmptyDatabase creates an empty database (no migrations) and returns its URL; it is dropped
// when t ends. For tests of the migrations themselves.
func NewEmptyDatabase(t testing.TB) string {
	t.Helper()
	admin(t)
	name := "neemias_test_" + randomHex(8)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := adminExec(ctx, "CREATE DATABASE "+ident(name)); err != nil {
		t.Fatalf("storetest: create empty database: %v", err)
	}
	t.Cleanup(func() { DropDatabase(t, name) })
	return URLFor(name)
}

// DropDatabase drops database name, terminating the connections still open to it.
func DropDatabase(t testing.TB, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := adminExec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", ident(name))); err != nil {
		t.Errorf("storetest: drop test database: %v", err)
	}
}

// Pool opens a pool on dbURL for t, closed when t ends: for tests that need the raw pool
// (the maintenance context) next to a store.
func Pool(t testing.TB, dbURL string) *pgxpool.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatalf("storetest: open pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

var (
	tplOnce sync.Once
	tplName string
	tplErr  error

	adminOnce sync.Once
	adminErr  error
)

// admin checks once per process that the admin connection works; it skips t (or fails it
// under $CI) when it does not.
func admin(t testing.TB) {
	t.Helper()
	adminOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, AdminURL())
		if err != nil {
			adminErr = err
			return
		}
		adminErr = conn.Close(ctx)
	})
	if adminErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("storetest: PostgreSQL unreachable: %v", adminErr)
		}
		t.Skipf("storetest: PostgreSQL unreachable (set DATABASE_URL): %v", adminErr)
	}
}

// template returns the name of the migrated template database, building it when this set of
// migrations has none yet.
func template(t testing.TB) string {
	t.Helper()
	admin(t)
	tplOnce.Do(func() { tplName, tplErr = buildTemplate() })
	if tplErr != nil {
		t.Fatalf("storetest: template database: %v", tplErr)
	}
	return tplName
}

// templateLockID is the advisory lock that serializes template builds across test processes.
const templateLockID = 0x6e65656d // "neem"

func buildTemplate() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sum, err := migrationsHash()
	if err != nil {
		return "", err
	}
	name := "neemias_tpl_" + sum
	conn, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		return "", err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	// Several test binaries (go test ./...) may get here at once: one builds, the others wait.
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", templateLockID); err != nil {
		return "", err
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", templateLockID) //nolint:errcheck
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	// Build under a temporary name and rename at the end, so a half-built template never
	// carries the real name.
	building := name + "_wip"
	if _, err := conn.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", ident(building))); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident(building)); err != nil {
		return "", err
	}
	if _, err := store.Migrate(ctx, URLFor(building)); err != nil {
		return "", err
	}
	// The migrator's connections may take a moment to go away; a rename needs none left.
	var renameErr error
	for range 50 {
		if _, err := conn.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", building); err != nil {
			return "", err
		}
		_, renameErr = conn.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s RENAME TO %s", ident(building), ident(name)))
		if renameErr == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if renameErr != nil {
		return "", renameErr
	}
	// No connections to the template, ever: CREATE DATABASE ... TEMPLATE needs it idle.
	if _, err := conn.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s WITH ALLOW_CONNECTIONS false IS_TEMPLATE true", ident(name))); err != nil {
		return "", err
	}
	dropStaleTemplates(ctx, conn, name)
	return name, nil
}

// keptTemplates is how many templates of other migration sets survive a build: several
// checkouts of the repository (git worktrees, branches under test at once) share one
// PostgreSQL, and dropping every other template made their concurrent test runs fail.
const keptTemplates = 4

// dropStaleTemplates drops the templates of earlier migration sets beyond the keptTemplates
// newest (highest OID), best effort: one still in use by a clone in flight stays for the next
// build to remove.
func dropStaleTemplates(ctx context.Context, conn *pgx.Conn, keep string) {
	rows, err := conn.Query(ctx, `SELECT datname FROM pg_database
		WHERE datname LIKE 'neemias\_tpl\_%' AND datname NOT LIKE '%\_wip' AND datname <> $1
		ORDER BY oid DESC OFFSET $2`, keep, keptTemplates)
	if err != nil {
		return
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return
	}
	for _, n := range names {
		// A template cannot be dropped; unmark it first.
		if _, err := conn.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s WITH IS_TEMPLATE false", ident(n))); err != nil {
			continue
		}
		_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(n))
	}
}

// migrationsHash identifies the embedded migration set: 16 hex digits of SHA-256 over the
// file names and contents.
func migrationsHash() (string, error) {
	fsys := store.MigrationsFS()
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func adminExec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql)
	return err
}

func ident(s string) string { return pgx.Identifier{s}.Sanitize() }

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
