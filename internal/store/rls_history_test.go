package store_test

import (
	"context"
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// releasedBeforePolicies holds the migrations as released before 00110_rls_policies.sql
// gathered the request role's policies: 00004 and 00091 wrote them twice, 00096, 00100, 00101
// and 00106 added more, over the generated 00090 of that time. Every database migrated before
// 00110 ran exactly these texts; they are history and never change.
const releasedBeforePolicies = "testdata/released-before-00110"

// policiesMigration is the first migration that every database, fresh or migrated before it,
// applies with the policies written once.
const policiesMigration = "00110_rls_policies.sql"

// TestRLSSameUpgradedAndFresh: a database migrated by the released migrations before 00110,
// then by today's, ends with the row-level security of a fresh database: the same policies,
// functions (definitions, owners, grants), table, sequence, view and column privileges, and
// row-level security flags. So the policies written once in 00110 (the migrations before it
// no longer create them) lose nothing a database in service has.
func TestRLSSameUpgradedAndFresh(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	older := fstest.MapFS{}
	names, err := fs.Glob(store.MigrationsFS(), "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if n >= policiesMigration {
			continue
		}
		b, err := fs.ReadFile(store.MigrationsFS(), n)
		if err != nil {
			t.Fatal(err)
		}
		older[n] = &fstest.MapFile{Data: b}
	}
	released, err := fs.Glob(os.DirFS(releasedBeforePolicies), "*.sql")
	if err != nil || len(released) == 0 {
		t.Fatalf("%s: %v, %d files", releasedBeforePolicies, err, len(released))
	}
	for _, n := range released {
		if _, ok := older[n]; !ok {
			t.Fatalf("%s/%s is no migration of today's", releasedBeforePolicies, n)
		}
		b, err := os.ReadFile(releasedBeforePolicies + "/" + n)
		if err != nil {
			t.Fatal(err)
		}
		older[n] = &fstest.MapFile{Data: b}
	}

	upgraded := storetest.NewEmptyDatabase(t)
	if _, err := store.MigrateFS(ctx, upgraded, older); err != nil {
		t.Fatalf("the released migrations: %v", err)
	}
	if _, err := store.Migrate(ctx, upgraded); err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	fresh := storetest.NewDatabase(t)

	got, want := securitySnapshot(t, upgraded), securitySnapshot(t, fresh)
	// A function only the upgraded database has is one a later spec dropped from 00090: a
	// repeatable migration leaves it, unused (see store.applyRepeatable).
	for k := range got {
		if _, ok := want[k]; !ok && strings.HasPrefix(k, "function ") {
			delete(got, k)
		}
	}
	if len(want) == 0 {
		t.Fatal("empty snapshot of the fresh database")
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("row-level security of an upgraded database (+) differs from a fresh one (-):\n%s", d)
	}
}

// securitySnapshot reads what decides who sees and writes what in the public schema of the
// database at url, keyed by object.
func securitySnapshot(t *testing.T, url string) map[string]string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	out := map[string]string{}
	for _, q := range []string{
		`SELECT 'policy ' || tablename || '.' || policyname,
		        concat_ws(' | ', permissive, roles::text, cmd, coalesce(qual, '-'), coalesce(with_check, '-'))
		 FROM pg_policies WHERE schemaname = 'public'`,
		`SELECT 'function ' || p.oid::regprocedure::text,
		        concat_ws(' | ', pg_get_userbyid(p.proowner), coalesce(p.proacl::text, '-'), pg_get_functiondef(p.oid))
		 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'`,
		`SELECT 'relation ' || c.relname,
		        concat_ws(' | ', c.relkind, c.relrowsecurity, c.relforcerowsecurity, coalesce(c.relacl::text, '-'))
		 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		 WHERE n.nspname = 'public' AND c.relkind IN ('r', 'v', 'm', 'S')`,
		`SELECT 'column ' || c.relname || '.' || a.attname, a.attacl::text
		 FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		 WHERE n.nspname = 'public' AND a.attacl IS NOT NULL`,
	} {
		rows, err := conn.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			if _, dup := out[k]; dup {
				t.Fatalf("snapshot: %s twice", k)
			}
			out[k] = v
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
