package store_test

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

func migrationNames(t *testing.T) []string {
	t.Helper()
	names, err := fs.Glob(store.MigrationsFS(), "*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("embedded migrations: %v, %d files", err, len(names))
	}
	return names
}

// versionOf is the version goose reads from a migration's file name.
func versionOf(t *testing.T, name string) int64 {
	t.Helper()
	var v int64
	if _, err := fmt.Sscanf(name, "%d_", &v); err != nil || v <= 0 {
		t.Fatalf("%s: no version prefix", name)
	}
	return v
}

func TestMigrateAppliesAllThenIsANoOp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.NewEmptyDatabase(t)
	names := migrationNames(t)

	before, err := store.MigrationStatus(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != len(names) {
		t.Fatalf("status lists %d migrations, want %d", len(before), len(names))
	}
	for _, m := range before {
		if m.Applied {
			t.Errorf("%s applied before Migrate", m.Name)
		}
	}

	applied, err := store.Migrate(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != len(names) {
		t.Fatalf("first Migrate applied %d migrations, want %d", len(applied), len(names))
	}
	for i, m := range applied {
		if m.Name != names[i] {
			t.Errorf("applied[%d] = %s, want %s (in order)", i, m.Name, names[i])
		}
	}

	again, err := store.Migrate(ctx, url)
	if err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	if len(again) != 0 {
		t.Fatalf("second Migrate applied %v, want nothing", again)
	}

	after, err := store.MigrationStatus(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range after {
		if !m.Applied || m.AppliedAt.IsZero() || m.Name != names[i] || m.Version != versionOf(t, names[i]) {
			t.Errorf("status[%d] = %+v, want %s applied", i, m, names[i])
		}
	}
}

func TestMigrateFailureLeavesNothingHalfApplied(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.NewEmptyDatabase(t)

	fsys := fstest.MapFS{}
	for _, n := range migrationNames(t) {
		b, _ := fs.ReadFile(store.MigrationsFS(), n)
		fsys[n] = &fstest.MapFile{Data: b}
	}
	names := migrationNames(t)
	last := versionOf(t, names[len(names)-1])
	broken := fmt.Sprintf("%05d_broken.sql", last+1)
	fsys[broken] = &fstest.MapFile{Data: []byte(`-- +goose Up
CREATE TABLE half_applied (id integer);
INSERT INTO half_applied VALUES (1);
SELECT 1 / 0;
-- +goose Down
DROP TABLE half_applied;
`)}

	_, err := store.MigrateFS(ctx, url, fsys)
	if err == nil || !strings.Contains(err.Error(), broken) {
		t.Fatalf("err = %v, want the broken migration named", err)
	}

	pool := storetest.Pool(t, url)
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('half_applied') IS NOT NULL`).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Error("the failed migration's table exists: half-applied")
	}
	var version int64
	if err := pool.QueryRow(ctx, `SELECT max(version_id) FROM goose_db_version`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version != last {
		t.Errorf("database version = %d, want %d (the migrations before the broken one)", version, last)
	}
	status, err := store.MigrationStatusFS(ctx, url, fsys)
	if err != nil {
		t.Fatal(err)
	}
	if got := status[len(status)-1]; got.Version != last+1 || got.Applied {
		t.Errorf("broken migration status = %+v, want pending", got)
	}

	// Fixed, it applies.
	fsys[broken] = &fstest.MapFile{Data: []byte("-- +goose Up\nCREATE TABLE half_applied (id integer);\n-- +goose Down\nDROP TABLE half_applied;\n")}
	if applied, err := store.MigrateFS(ctx, url, fsys); err != nil || len(applied) != 1 {
		t.Fatalf("after the fix: applied %v, err %v", applied, err)
	}
}

// The Down sections are not part of the API (rolling back is an operator's decision), but they
// must work: down to nothing, then up again.
func TestMigrationsGoDownAndUpAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.NewDatabase(t) // migrated
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, store.MigrationsFS(), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 0); err != nil {
		t.Fatalf("down: %v", err)
	}
	var left []string
	rows, err := db.QueryContext(ctx, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND c.relname NOT LIKE 'goose_db_version%' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		_ = rows.Scan(&n)
		left = append(left, n)
	}
	rows.Close()
	if len(left) != 0 {
		t.Errorf("after going down, left behind: %v", left)
	}
	if applied, err := store.Migrate(ctx, url); err != nil || len(applied) != len(migrationNames(t)) {
		t.Fatalf("up again: applied %d, err %v", len(applied), err)
	}
}

func TestMigrateRefusesNonTransactionalMigrations(t *testing.T) {
	t.Parallel()
	url := storetest.NewEmptyDatabase(t)
	fsys := fstest.MapFS{"00001_x.sql": &fstest.MapFile{Data: []byte("-- +goose NO TRANSACTION\n-- +goose Up\nCREATE INDEX CONCURRENTLY x ON y (z);\n")}}
	if _, err := store.MigrateFS(context.Background(), url, fsys); err == nil {
		t.Fatal("a NO TRANSACTION migration was accepted")
	}
}

func TestEmbeddedMigrationsAreWellFormed(t *testing.T) {
	t.Parallel()
	for i, n := range migrationNames(t) {
		b, err := fs.ReadFile(store.MigrationsFS(), n)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		v := versionOf(t, n)
		if i > 0 && v <= versionOf(t, migrationNames(t)[i-1]) {
			t.Errorf("%s: version %d does not follow the previous one", n, v)
		}
		if want := fmt.Sprintf("%05d_", v); !strings.HasPrefix(n, want) {
			t.Errorf("%s: want a five-digit prefix %s", n, want)
		}
		if !strings.Contains(s, "-- +goose Up") || !strings.Contains(s, "-- +goose Down") {
			t.Errorf("%s: needs both -- +goose Up and -- +goose Down", n)
		}
	}
}

func TestAppRoleIsNeitherSuperuserNorOwner(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	err := s.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var super, bypass, login bool
		if err := tx.QueryRow(ctx, `SELECT rolsuper, rolbypassrls, rolcanlogin FROM pg_roles WHERE rolname = $1`, store.AppRole).
			Scan(&super, &bypass, &login); err != nil {
			return err
		}
		if super || bypass || login {
			t.Errorf("%s: superuser=%v bypassrls=%v login=%v, want all false", store.AppRole, super, bypass, login)
		}
		var owned int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner
			WHERE r.rolname = $1`, store.AppRole).Scan(&owned); err != nil {
			return err
		}
		if owned != 0 {
			t.Errorf("%s owns %d relations", store.AppRole, owned)
		}
		// Every table that holds tenant rows (a church_id column) or that the app role may
		// touch at all must be under forced row-level security.
		rows, err := tx.Query(ctx, `SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity
			FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname <> 'goose_db_version'
			  AND (EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'church_id' AND NOT a.attisdropped)
			       OR has_table_privilege($1, c.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE')
			       OR has_any_column_privilege($1, c.oid, 'SELECT, INSERT, UPDATE'))`, store.AppRole)
		if err != nil {
			return err
		}
		defer rows.Close()
		tables := 0
		for rows.Next() {
			var name string
			var rls, force bool
			if err := rows.Scan(&name, &rls, &force); err != nil {
				return err
			}
			tables++
			if !rls || !force {
				t.Errorf("table %s: row level security enabled=%v forced=%v, want both", name, rls, force)
			}
		}
		if tables < 11 {
			t.Errorf("found %d tables, want at least 11", tables)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}

	// Inside InTx the transaction really runs as the app role, and nothing of it survives
	// into the next use of the pooled connection.
	err = s.InTx(ctx, store.Caller{ChurchID: uuidOne, UserID: uuidOne, Role: store.RoleAdmin}, func(ctx context.Context, tx pgx.Tx) error {
		var user, church string
		if err := tx.QueryRow(ctx, `SELECT current_user, current_setting('app.church_id')`).Scan(&user, &church); err != nil {
			return err
		}
		if user != store.AppRole || church != uuidOne.String() {
			t.Errorf("in InTx: current_user=%s app.church_id=%s", user, church)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pool := s.Pool()
	for range 4 { // the pool may hand out any connection; try a few
		var user, church string
		if err := pool.QueryRow(ctx, `SELECT current_user, coalesce(current_setting('app.church_id', true), '')`).Scan(&user, &church); err != nil {
			t.Fatal(err)
		}
		if user == store.AppRole || church != "" {
			t.Fatalf("after InTx the pooled connection kept current_user=%s app.church_id=%q", user, church)
		}
	}
}

// An up-to-date database is told by one query, without the migration locks: a replica starts
// while a migrator holds them (here, both, held by another session) as long as its own
// migrations are all there. What is not up to date takes the full path: a repeatable
// migration whose text changed, a version missing from goose_db_version (goose refuses it,
// as it always did), a migration not applied yet.
func TestMigrateUpToDateFastPath(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.NewDatabase(t) // migrated
	fsys := store.MigrationsFS()
	if ok, err := store.UpToDate(ctx, url, fsys); err != nil || !ok {
		t.Fatalf("UpToDate on a migrated database = %v, %v; want true", ok, err)
	}

	locker, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close(ctx)
	if _, err := locker.Exec(ctx, `SELECT pg_advisory_lock(hashtext('neemias.repeatable_migrations'))`); err != nil {
		t.Fatal(err)
	}
	quick, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if applied, err := store.Migrate(quick, url); err != nil || len(applied) != 0 {
		t.Fatalf("Migrate of an up-to-date database while the lock is held: %v, %v; want nothing, at once", applied, err)
	}
	if _, err := locker.Exec(ctx, `SELECT pg_advisory_unlock_all()`); err != nil {
		t.Fatal(err)
	}

	pool := storetest.Pool(t, url)
	if _, err := pool.Exec(ctx, `UPDATE repeatable_migrations SET sha256 = 'older' WHERE name = '00110_rls_policies.sql'`); err != nil {
		t.Fatal(err)
	}
	if ok, err := store.UpToDate(ctx, url, fsys); err != nil || ok {
		t.Fatalf("UpToDate with a repeatable migration's text changed = %v, %v; want false", ok, err)
	}
	if applied, err := store.Migrate(ctx, url); err != nil || len(applied) != 1 || applied[0].Name != "00110_rls_policies.sql" {
		t.Fatalf("Migrate with 00110's text changed: %+v, %v; want it re-run", applied, err)
	}

	extra := fstest.MapFS{}
	for _, n := range migrationNames(t) {
		b, _ := fs.ReadFile(fsys, n)
		extra[n] = &fstest.MapFile{Data: b}
	}
	names := migrationNames(t)
	next := fmt.Sprintf("%05d_next.sql", versionOf(t, names[len(names)-1])+1)
	extra[next] = &fstest.MapFile{Data: []byte("-- +goose Up\nSELECT 1;\n-- +goose Down\nSELECT 1;\n")}
	if ok, err := store.UpToDate(ctx, url, extra); err != nil || ok {
		t.Fatalf("UpToDate with a migration pending = %v, %v; want false", ok, err)
	}
	if applied, err := store.MigrateFS(ctx, url, extra); err != nil || len(applied) != 1 || applied[0].Name != next {
		t.Fatalf("MigrateFS with %s pending: %+v, %v; want it applied", next, applied, err)
	}

	if _, err := pool.Exec(ctx, `DELETE FROM goose_db_version WHERE version_id = 5`); err != nil {
		t.Fatal(err)
	}
	if ok, err := store.UpToDate(ctx, url, fsys); err != nil || ok {
		t.Fatalf("UpToDate with version 5 missing = %v, %v; want false", ok, err)
	}
	if _, err := store.Migrate(ctx, url); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("Migrate with version 5 missing: %v; want goose's refusal of a missing migration", err)
	}

	if ok, err := store.UpToDate(ctx, storetest.NewEmptyDatabase(t), fsys); ok {
		t.Fatalf("UpToDate on an empty database = true (%v)", err)
	}
}
