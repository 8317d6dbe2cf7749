package capgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/capgen/spec"
)

func realModel(t *testing.T) *Model {
	t.Helper()
	s, err := spec.Load(filepath.Join(repoRoot, "spec", "capabilities.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return NewModel(s, "spec/capabilities.yaml", module)
}

func TestInspect(t *testing.T) {
	m := realModel(t)
	tests := []struct {
		name      string
		q         InspectQuery
		want, not []string
		wantErr   string
	}{
		{
			name: "volunteer sees counts and check-ins of their classes by short label, no child records",
			q:    InspectQuery{Role: "VOLUNTARIO"},
			want: []string{"## resource `neemias://roster/children`", "`volunteer_assigned_classes`", "| `classes[].checkins[].child_label` | **short name** (full with `children:read`) |", "- `neemias://roster/children/{id}` (needs `children:read`)", "`neemias_child_enroll` (needs `children:write`)"},
			not:  []string{"`guardian_own_children`"},
		},
		{
			name: "the sheet's app-only tools: visibility app, the model tool they run, its row filters for the role",
			q:    InspectQuery{Role: "VOLUNTARIO"},
			want: []string{"## app-only tool `neemias_checkin_sheet_checkin`", "Visibility `app` (view `checkin_sheet`)", "Runs `neemias_checkin_register`",
				"## app-only tool `neemias_checkin_sheet_checkout`", "Runs `neemias_checkout_register`", "Row filters: `church` (always), `volunteer_assigned_classes`."},
		},
		{
			name: "app-only tools are not reachable without the scope of the tool they run",
			q:    InspectQuery{Scopes: []string{"checkins:read"}},
			want: []string{"- `neemias_checkin_sheet_checkout` (app-only, runs `neemias_checkout_register`; needs `checkins:write`)"},
			not:  []string{"## app-only tool"},
		},
		{
			name: "guardian reads their children's check-ins by short label, no health alerts; no roster, no child records",
			q:    InspectQuery{Role: "RESPONSAVEL"},
			want: []string{"`neemias://roster/children` (needs `roster:read`)", "`guardian_own_children`", "| `classes[].checkins[].child_label` | **short name** (full with `children:read`) |",
				"| `classes[].children[].allergies` | **redacted** (needs `health:read`) |", "- `neemias://roster/children/{id}` (needs `children:read`)"},
		},
		{
			name: "checkins:read alone gets check-ins without child names",
			q:    InspectQuery{Scopes: []string{"checkins:read"}},
			want: []string{"| `classes[].checkins[].child_label` | **short name** (full with `children:read`) |", "`guardian_own_children` (if the role is RESPONSAVEL)"},
		},
		{
			// A short-named field is not "yes": the reviewer must see the volunteer reads "Ana S.".
			name: "volunteer reads children's labels as short names, holders of children:read in full",
			q:    InspectQuery{Role: "VOLUNTARIO"},
			want: []string{"| `classes[].children[].label` | **short name** (full with `children:read`) |", "| `child_label` | **short name** (full with `children:read`) |"},
			not:  []string{"| `child_label` | yes |"},
		},
		{
			name: "children:read gets the full labels",
			q:    InspectQuery{Scopes: []string{"checkins:read", "pickups:read", "children:read"}},
			want: []string{"| `classes[].children[].label` | yes |", "| `child_label` | yes |"},
			not:  []string{"**short name**"},
		},
		{
			name: "scopes narrow a role",
			q:    InspectQuery{Role: "ADMIN", Scopes: []string{"roster:read"}},
			want: []string{"Granted scopes: `roster:read`", "`neemias://checkins/{date}{?limit,offset}` (needs `checkins:read`)"},
		},
		{name: "unknown role", q: InspectQuery{Role: "PASTOR"}, wantErr: `unknown role "PASTOR"; the spec declares: ADMIN, CADASTRO, VOLUNTARIO, RESPONSAVEL`},
		{name: "unknown scope", q: InspectQuery{Scopes: []string{"roster:write"}}, wantErr: `unknown scope "roster:write"`},
		{name: "nothing named", q: InspectQuery{}, wantErr: "name a role (--role) or scopes (--scopes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Inspect(m, tt.q)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("report lacks %q\n%s", w, got)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("report must not contain %q", n)
				}
			}
		})
	}
}

// TestScopeMatrixListsAppOnlyTools: the scope matrix has a row per app-only tool, with the scope
// and the per-role cells (row filters) of the model tool it runs.
func TestScopeMatrixListsAppOnlyTools(t *testing.T) {
	m := realModel(t)
	files, err := Generate(m)
	if err != nil {
		t.Fatal(err)
	}
	var matrix string
	for _, f := range files {
		if f.Path == "docs/scope-matrix.md" {
			matrix = string(f.Content)
		}
	}
	for _, want := range []string{
		"| `neemias_checkin_sheet_checkin` | app-only tool (view `checkin_sheet`, visibility `app`; runs `neemias_checkin_register`) | `checkins:write` | ✓ church | ✓ church | ✓ church, volunteer_assigned_classes | ✓ church, guardian_own_children |",
		"| `neemias_checkin_sheet_checkout` | app-only tool (view `checkin_sheet`, visibility `app`; runs `neemias_checkout_register`) | `checkins:write` |",
	} {
		if !strings.Contains(matrix, want) {
			t.Errorf("docs/scope-matrix.md lacks %q:\n%s", want, matrix)
		}
	}
}

func TestScaffoldNeverOverwritesAndReportsOrphans(t *testing.T) {
	m := realModel(t)
	root := t.TempDir()
	res, err := Scaffold(m, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Created) != len(m.Caps)+1 { // one per capability + service.go
		t.Fatalf("created %v", res.Created)
	}
	stub := filepath.Join(root, StubDir, "roster_child.go")
	if err := os.WriteFile(stub, []byte("package logic\n\n// capgen:capability roster_child\n\n// hand-written, keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	orphan := filepath.Join(root, StubDir, "old_thing.go")
	if err := os.WriteFile(orphan, []byte("package logic\n\n// capgen:capability old_thing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = Scaffold(m, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Created) != 0 {
		t.Errorf("second scaffold created %v", res.Created)
	}
	if b, _ := os.ReadFile(stub); !strings.Contains(string(b), "keep me") {
		t.Error("scaffold overwrote a hand-written file")
	}
	if len(res.Orphans) != 1 || !strings.Contains(res.Orphans[0], `old_thing.go: capability "old_thing" is no longer in the spec`) {
		t.Errorf("orphans = %v", res.Orphans)
	}
	unimpl, err := Unimplemented(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(unimpl) != len(m.Caps)-1 { // roster_child was "implemented" above
		t.Errorf("unimplemented = %v", unimpl)
	}
	// A file named like a stub but without the marker is an error, not an overwrite.
	if err := os.Remove(filepath.Join(root, StubDir, "roster_children.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, StubDir, "roster_children.go"), []byte("package logic\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Scaffold(m, root); err == nil || !strings.Contains(err.Error(), "has no \"// capgen:capability roster_children\" marker") {
		t.Errorf("err = %v", err)
	}
}

func TestWriteRemovesStaleFilesOnlyInOwnedDirs(t *testing.T) {
	root := t.TempDir()
	stale := filepath.Join(root, "gen", "capapi", "gone_gen.go")
	keep := filepath.Join(root, "gen", "db", "db.go")
	for _, p := range []string{stale, keep} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := []File{{Path: "gen/capapi/names_gen.go", Content: []byte("y")}}
	changed, err := Diff(root, files)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(changed, ",") != "gen/capapi/gone_gen.go (stale),gen/capapi/names_gen.go" {
		t.Errorf("diff = %v", changed)
	}
	if err := Write(root, files); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("stale generated file survived")
	}
	if _, err := os.Stat(keep); err != nil {
		t.Error("a file outside capgen's directories was removed")
	}
}
