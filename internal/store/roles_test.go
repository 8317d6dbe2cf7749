package store_test

import (
	"context"
	"regexp"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// TestRolesAreTheSpecs pins the store's role names, every CHECK constraint on a role column
// and the generated app_valid_role to the spec's roles (gen/scopes.Roles).
func TestRolesAreTheSpecs(t *testing.T) {
	t.Parallel()
	want := scopes.Roles()
	if d := cmp.Diff(want, []string{store.RoleAdmin, store.RoleCadastro, store.RoleVoluntario, store.RoleResponsavel}); d != "" {
		t.Errorf("store's role constants differ from the spec's roles (-spec +store):\n%s", d)
	}
	if d := cmp.Diff(want, store.Roles()); d != "" {
		t.Errorf("store.Roles() (-spec +store):\n%s", d)
	}
	s := storetest.New(t)
	quoted := regexp.MustCompile(`'([^']*)'`)
	checks := 0
	err := s.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			SELECT conrelid::regclass::text, pg_get_constraintdef(c.oid)
			FROM pg_constraint c
			JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
			WHERE c.contype = 'c' AND a.attname = 'role'
			  AND pg_get_constraintdef(c.oid) ~ 'role\s*=\s*ANY|role\s+IN'`)
		if err != nil {
			return err
		}
		defs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ Table, Def string }])
		if err != nil {
			return err
		}
		for _, d := range defs {
			checks++
			var got []string
			for _, m := range quoted.FindAllStringSubmatch(d.Def, -1) {
				got = append(got, m[1])
			}
			slices.Sort(got)
			w := slices.Clone(want)
			slices.Sort(w)
			if !slices.Equal(got, w) {
				t.Errorf("%s: CHECK %s allows %v, the spec's roles are %v", d.Table, d.Def, got, w)
			}
		}
		for _, r := range append(want, "admin", "") {
			var ok bool
			if err := tx.QueryRow(ctx, `SELECT app_valid_role($1)`, r).Scan(&ok); err != nil {
				return err
			}
			if ok != slices.Contains(want, r) {
				t.Errorf("app_valid_role(%q) = %v", r, ok)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checks == 0 {
		t.Error("found no CHECK constraint on a role column")
	}
}
