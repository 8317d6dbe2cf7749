package store_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// rowFilterMigration is the generated migration of the spec's row filters (capgen).
const rowFilterMigration = "00090_spec_row_filters.sql"

// TestRowFilterMigrationIsRepeatable pins the generator's marker to the store's: the row-filter
// functions follow the spec on databases migrated before a spec change only if it is there.
func TestRowFilterMigrationIsRepeatable(t *testing.T) {
	t.Parallel()
	b, err := fs.ReadFile(store.MigrationsFS(), rowFilterMigration)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\n"+store.RepeatableMarker+" ") {
		t.Fatalf("%s does not carry %q: store.Migrate would never re-run it", rowFilterMigration, store.RepeatableMarker)
	}
}

// TestRepeatableMigrationFollowsItsText is the case of a database migrated before the spec
// gained a function (rf_has_scope) and before a function changed: the next Migrate re-runs the
// generated migration once, and again only when its text changes.
func TestRepeatableMigrationFollowsItsText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.NewEmptyDatabase(t)
	if _, err := store.Migrate(ctx, url); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	hasScopeFn := func() bool {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_proc WHERE proname = 'rf_has_scope'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	if !hasScopeFn() {
		t.Fatal("rf_has_scope missing after the first Migrate")
	}

	// The database as an older 00090 left it: without rf_has_scope, its text recorded as
	// something else. (Nothing depends on rf_has_scope in the schema, only the queries.)
	if _, err := conn.Exec(ctx, `DROP FUNCTION rf_has_scope(text)`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `UPDATE repeatable_migrations SET sha256 = 'older' WHERE name = $1`, rowFilterMigration); err != nil {
		t.Fatal(err)
	}
	applied, err := store.Migrate(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != 1 || applied[0].Name != rowFilterMigration || applied[0].Version != 90 {
		t.Fatalf("Migrate after a changed %s applied %+v, want that file alone", rowFilterMigration, applied)
	}
	if !hasScopeFn() {
		t.Fatal("rf_has_scope not re-created by the re-applied migration")
	}

	again, err := store.Migrate(ctx, url)
	if err != nil || len(again) != 0 {
		t.Fatalf("Migrate with the same text again: %+v, %v; want nothing", again, err)
	}
}
