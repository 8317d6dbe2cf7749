package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/capgen/spec"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// TestGeneratedQueriesAgreeWithRowLevelSecurity runs the queries generated from the spec
// (queries/generated, owned by capgen) against the views of migration 00005, as every role:
// once under row-level security (store.InTx) and once with the SQL row filters alone
// (maintenance context, with the caller's scopes set for the queries' scope check). Both
// layers must return the same rows, so neither hides what the other allows nor shows what the
// other forbids. That a role without a resource's scope gets no row at all is
// TestHasScopeReadsTheCallersScopes here and TestRLSMatchesScopeMatrix (internal/logic).
func TestGeneratedQueriesAgreeWithRowLevelSecurity(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../../queries/generated/*.sql")
	if len(files) == 0 {
		t.Skip("no generated queries yet")
	}
	all := loadQueries(t, files)
	s := storetest.New(t)
	a := newChurchFixture(t, s, "igreja-a", false)
	newChurchFixture(t, s, "igreja-b", true)
	ctx := context.Background()

	// A role without a resource's scope never runs its query (the pipeline refuses first), so
	// the query need not carry that role's filters (a guardian has no roster:read, and the
	// roster query no guardian filter); row-level security still narrows it. Nothing to
	// compare there. Query names are the resources' Go names (capgen: spec.GoName).
	scopeOf := map[string]string{}
	for _, c := range capapi.Capabilities() {
		if c.IsRead() {
			scopeOf[spec.GoName(c.ID, "")] = c.Scope
		}
	}
	for name := range all.qs {
		scope, ok := scopeOf[name]
		if !ok {
			t.Fatalf("generated query %s belongs to no resource of the registry", name)
		}
		for _, role := range store.Roles() {
			if rs, _ := scopes.RoleScopes(role); !rs.Has(scope) {
				continue
			}
			c := a.caller(role)
			params := map[string]any{
				"church_id": c.ChurchID, "role": c.Role, "user_id": c.UserID,
				"id": a.k2, "date": a.day, "from": a.day.AddDate(0, 0, -30), "to": a.day,
				"from_value": a.day.AddDate(0, 0, -30), "to_value": a.day,
				"class_id": nil,
			}
			named := map[string]any{}
			for _, p := range all.qs[name].params {
				v, ok := params[p]
				if !ok {
					t.Fatalf("%s: unknown parameter %q; teach this test its value", name, p)
				}
				named[p] = v
			}
			var withRLS, filtersOnly [][]any
			err := s.InTx(ctx, c, func(ctx context.Context, tx pgx.Tx) error {
				var err error
				withRLS, err = all.rows(ctx, tx, name, named)
				return err
			})
			if err != nil {
				t.Fatalf("%s as %s under RLS: %v", name, role, err)
			}
			err = s.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
				// The scope check (rf_has_scope) reads the caller's scopes and role from the
				// transaction's settings, as InTx sets them; no row-level security here.
				if _, err := tx.Exec(ctx, `SELECT set_config('app.scopes', $1, true), set_config('app.role', $2, true)`, c.Scopes.String(), c.Role); err != nil {
					return err
				}
				var err error
				filtersOnly, err = all.rows(ctx, tx, name, named)
				return err
			})
			if err != nil {
				t.Fatalf("%s as %s, filters only: %v", name, role, err)
			}
			if role == store.RoleAdmin && len(withRLS) == 0 {
				t.Errorf("%s as ADMIN: no rows; the fixture should give some", name)
			}
			if diff := cmp.Diff(filtersOnly, withRLS); diff != "" {
				t.Errorf("%s as %s: row-level security and the SQL filters disagree (-filters +rls):\n%s", name, role, diff)
			}
		}
	}
}

// loadQueries parses query files into a querier.
func loadQueries(t *testing.T, files []string) querier {
	t.Helper()
	return querier{t, parseQueries(t, files)}
}
