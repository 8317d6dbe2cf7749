package capgen

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neemias/neemias-mcp/internal/capgen/spec"
)

func repoModel(t *testing.T) *Model {
	t.Helper()
	s, err := spec.Load(filepath.Join(repoRoot, "spec", "capabilities.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return NewModel(s, "spec/capabilities.yaml", "github.com/neemias/neemias-mcp")
}

func customQueries(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no queries in %s: %v", dir, err)
	}
	all := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for name, q := range SplitQueries(string(b)) {
			all[name] = q
		}
	}
	return all
}

// TestToolQueriesCallTheirRowFilters: every query a tool or a resource names in the spec
// exists in queries/custom/ and calls the SQL function of every row filter of the capability
// (and a read's, a resource's or a read-only tool's, rf_has_scope of its scope).
func TestToolQueriesCallTheirRowFilters(t *testing.T) {
	m := repoModel(t)
	if len(customQueries(t, filepath.Join(repoRoot, "queries", "custom"))) == 0 {
		t.Fatal("no custom queries found")
	}
	if err := m.CheckToolQueriesIn(repoRoot); err != nil {
		t.Error(err)
	}
}

// TestCheckToolQueriesReportsMissingFilters: each case breaks one query of queries/custom/ (or
// takes it away) and pins the one error CheckToolQueries reports, for tools and for resources
// that name hand-written queries alike. The cases start from the repository's own queries,
// which pass (TestToolQueriesCallTheirRowFilters), so a query the spec adds elsewhere changes
// nothing here.
func TestCheckToolQueriesReportsMissingFilters(t *testing.T) {
	m := repoModel(t)
	base := customQueries(t, filepath.Join(repoRoot, "queries", "custom"))
	if errs := m.CheckToolQueries(base); len(errs) > 0 {
		t.Fatalf("the repository's queries must pass: %v", errs)
	}
	tests := []struct {
		name  string
		query string // the query replaced
		sql   string // its replacement; empty: the query is missing
		want  string
	}{
		{
			// A filter named only in a comment, and an inline copy of the guardian rule instead of its function.
			name:  "tool: row filter only in a comment",
			query: "GetChildForCheckin",
			sql: "-- name: GetChildForCheckin :one\n-- rf_guardian_own_children(c.id)\nSELECT c.id FROM children c\n" +
				"WHERE rf_church(c.church_id, sqlc.arg(church_id)::uuid)\n  AND c.id IN (SELECT gc.child_id FROM guardian_children gc)\n" +
				"  AND rf_volunteer_assigned_classes (c.class_id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text);\n",
			want: `tool "neemias_checkin_register" (spec/capabilities.yaml:N): query GetChildForCheckin does not call rf_guardian_own_children(…), its row filter "guardian_own_children"`,
		},
		{
			name:  "tool: query missing",
			query: "GetCheckinForCheckout",
			want:  `tool "neemias_checkout_register" (spec/capabilities.yaml:N): query GetCheckinForCheckout is not in queries/custom/`,
		},
		{
			name:  "read-only tool: no rf_has_scope",
			query: "FindChildren",
			sql: "-- name: FindChildren :many\nSELECT 1 WHERE rf_church(church_id) AND rf_guardian_own_children(id)" +
				" AND rf_volunteer_assigned_classes(class_id);",
			want: `tool "neemias_child_find" (spec/capabilities.yaml:N): query FindChildren of a read does not call rf_has_scope('children:read'), its scope`,
		},
		{
			// A resource is a read whether or not it is annotated: its queries require its scope,
			// as the generated ones do.
			name:  "resource: no rf_has_scope",
			query: "ClassListChildren",
			sql: "-- name: ClassListChildren :many\nSELECT c.id FROM children c\n" +
				"WHERE rf_church(c.church_id, sqlc.arg(church_id)::uuid)\n" +
				"  AND rf_guardian_own_children(c.id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)\n" +
				"  AND rf_volunteer_assigned_classes(c.class_id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text);\n",
			want: `resource "class_list" (spec/capabilities.yaml:N): query ClassListChildren of a read does not call rf_has_scope('checkins:read'), its scope`,
		},
		{
			// Another capability's scope, or the call in a comment, is not the resource's scope.
			name:  "resource: rf_has_scope of another scope, and in a comment",
			query: "ClassListChildren",
			sql: "-- name: ClassListChildren :many\n-- rf_has_scope('checkins:read')\nSELECT c.id FROM children c\n" +
				"WHERE rf_has_scope('children:read') AND rf_church(c.church_id, sqlc.arg(church_id)::uuid)\n" +
				"  AND rf_guardian_own_children(c.id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)\n" +
				"  AND rf_volunteer_assigned_classes(c.class_id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text);\n",
			want: `resource "class_list" (spec/capabilities.yaml:N): query ClassListChildren of a read does not call rf_has_scope('checkins:read'), its scope`,
		},
		{
			name:  "resource: a row filter not called",
			query: "PickupAdults",
			sql: "-- name: PickupAdults :many\nSELECT pa.id FROM pickup_adults pa JOIN children c ON c.id = pa.child_id\n" +
				"WHERE rf_has_scope('pickups:read') AND rf_church(c.church_id, sqlc.arg(church_id)::uuid)\n" +
				"  AND rf_guardian_own_children(c.id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)\n" +
				"  AND rf_volunteer_assigned_classes(c.class_id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text);\n",
			want: `resource "pickup_adults" (spec/capabilities.yaml:N): query PickupAdults does not call rf_guardian_sees_no_restrictions(…), its row filter "guardian_sees_no_restrictions"`,
		},
		{
			name:  "resource: query missing",
			query: "PickupAdults",
			want:  `resource "pickup_adults" (spec/capabilities.yaml:N): query PickupAdults is not in queries/custom/`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			queries := maps.Clone(base)
			if _, ok := queries[tt.query]; !ok {
				t.Fatalf("queries/custom/ has no query %s; update the test to one the spec names", tt.query)
			}
			if tt.sql == "" {
				delete(queries, tt.query)
			} else {
				queries[tt.query] = tt.sql
			}
			var got []string
			for _, err := range m.CheckToolQueries(queries) {
				got = append(got, regexpLine.ReplaceAllString(err.Error(), ":N)"))
			}
			if d := cmp.Diff([]string{tt.want}, got); d != "" {
				t.Errorf("CheckToolQueries (-want +got):\n%s", d)
			}
		})
	}
}

func TestSplitQueries(t *testing.T) {
	got := SplitQueries("-- header\n;\n-- name: A :one\nSELECT 1;\n\n-- name: B :many\n-- doc\nSELECT 2;\n")
	want := map[string]string{"A": "-- name: A :one\nSELECT 1;\n\n", "B": "-- name: B :many\n-- doc\nSELECT 2;\n"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("SplitQueries (-want +got):\n%s", d)
	}
}

// TestRowFilterMigrationIsGenerated: the generated migration defines one rf_ function per
// spec filter, and the generated queries call them rather than inlining the filters' SQL.
func TestRowFilterMigrationIsGenerated(t *testing.T) {
	m := repoModel(t)
	mig, err := m.RowFilterMigrationSQL()
	if err != nil {
		t.Fatal(err)
	}
	gen, err := os.ReadFile(filepath.Join(repoRoot, "queries", "generated", "capabilities.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(mig, "CREATE OR REPLACE FUNCTION "+ScopeFn+"(scope text)") {
		t.Errorf("migration lacks %s", ScopeFn)
	}
	for _, c := range m.Caps {
		if c.Query != nil && !strings.Contains(string(gen), "WHERE "+ScopeFn+"('"+c.Scope+"')") {
			t.Errorf("the generated query of %s does not require its scope %s with %s", c.ID, c.Scope, ScopeFn)
		}
	}
	for _, fn := range m.RowFilterFns() {
		if !strings.Contains(mig, "CREATE OR REPLACE FUNCTION "+fn.Func+"(") {
			t.Errorf("migration lacks %s", fn.Func)
		}
		if strings.Contains(string(gen), fn.SQL) {
			t.Errorf("generated queries inline the SQL of %s instead of calling it", fn.Name)
		}
	}
}

var regexpLine = regexp.MustCompile(`:\d+\)`)
