package store_test

import (
	"context"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// pickupMigration is the migration of the first table whose policies call a row filter
// function the spec gained with it (rf_guardian_sees_no_restrictions).
const pickupMigration = "00096_pickup_safety.sql"

// TestUpgradeRerunsRepeatableFirst is the upgrade of a database migrated by the release
// before issue 20: no 00096, and a generated 00090 without rf_guardian_sees_no_restrictions.
// The policies of 00096's table (00110) call that function, so the changed 00090 must run
// again before goose applies the pending migrations (not after, as it would for migrations
// that need nothing new).
func TestUpgradeRerunsRepeatableFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.NewEmptyDatabase(t)

	// The older release: the migrations before 00096.
	older := fstest.MapFS{}
	names, err := fs.Glob(store.MigrationsFS(), "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if n >= pickupMigration {
			continue
		}
		b, err := fs.ReadFile(store.MigrationsFS(), n)
		if err != nil {
			t.Fatal(err)
		}
		older[n] = &fstest.MapFile{Data: b}
	}
	if _, err := store.MigrateFS(ctx, url, older); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// Its 00090 had no such function: drop it and record another text.
	for _, q := range []string{
		`DROP FUNCTION rf_guardian_sees_no_restrictions(uuid, text)`,
		`DROP FUNCTION rf_guardian_sees_no_restrictions_match(uuid)`,
		`UPDATE repeatable_migrations SET sha256 = 'older' WHERE name = '` + rowFilterMigration + `'`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	applied, err := store.Migrate(ctx, url)
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	var got []string
	for _, m := range applied {
		got = append(got, m.Name)
	}
	if len(got) < 2 || got[0] != rowFilterMigration || got[1] != pickupMigration {
		t.Fatalf("upgrade applied %v, want %s re-run, then %s and the later ones", got, rowFilterMigration, pickupMigration)
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_policies WHERE tablename = 'pickup_adults'`).Scan(&n); err != nil || n == 0 {
		t.Fatalf("pickup_adults policies: %d, %v", n, err)
	}
}
