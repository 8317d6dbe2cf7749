package logic_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/store"
)

// TestChildFind: staff find a child by part of the name, case and accents aside, within their
// church only, with ids, names and class; fewer than 3 letters is refused; every search is
// audited with the ids it returned; searches are limited per caller.
func TestChildFind(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	cad := a.as(store.RoleCadastro)
	// An accented name to find without its accents.
	mustInvoke[capapi.ChildEnrollOutput](e, cad, capapi.CapChildEnroll, func() map[string]any {
		m := enrollArgs(todaySP().AddDays(-5 * 365).String())
		m["name"] = "Zzcanary João Conceição"
		return m
	}())

	tests := []struct {
		name, text string
		want       []uuid.UUID // nil: only count checked
		count      int
	}{
		{"part of the name, any case", "SENTINE", []uuid.UUID{a.k1}, 1},
		{"accents ignored", "joao concei", nil, 1},
		{"both churches' canaries share a prefix; only ours", "zzcanary", nil, 2},
		{"nothing", "Ninguém Assim", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := mustInvoke[capapi.ChildFindOutput](e, cad, capapi.CapChildFind, map[string]any{"name": tt.text})
			if out.Total != int64(tt.count) || out.More != 0 {
				t.Errorf("total %d, more %d; want %d, 0", out.Total, out.More, tt.count)
			}
			if len(out.Children) != tt.count {
				t.Fatalf("%d children, want %d", len(out.Children), tt.count)
			}
			for i, id := range tt.want {
				if out.Children[i].ChildID != id || out.Children[i].ClassID == nil || out.Children[i].ClassName == nil {
					t.Errorf("child %d = %+v, want %s with its class", i, out.Children[i].LogValue(), id)
				}
			}
			for _, c := range out.Children {
				if !strings.Contains(strings.ToLower(c.Name), "zzcanary") {
					t.Errorf("a child of another church or an unmatched name came back")
				}
			}
		})
	}
	_, err := e.invoke(cad, capapi.CapChildFind, map[string]any{"name": "  ab  "})
	wantInvalid(t, err, "name")

	// Audited, with the ids returned.
	var found int
	for _, r := range e.audit() {
		if r.Capability == capapi.CapChildFind && r.Outcome == "allowed" && len(r.Targets) == 1 && r.Targets[0] == a.k1 {
			found++
		}
	}
	if found != 1 {
		t.Errorf("%d audit entries of the search that found %s, want 1", found, a.k1)
	}

	// The per-caller limit: the admin's budget is separate from the registrar's.
	admin := a.as(store.RoleAdmin)
	var limited error
	for range 15 {
		if _, err := e.invoke(admin, capapi.CapChildFind, map[string]any{"name": "sentinela"}); err != nil {
			limited = err
			break
		}
	}
	var c *errs.Conflict
	if !errors.As(limited, &c) || !strings.Contains(c.Reason, "too many searches") {
		t.Errorf("15 searches in a row: %v, want the search limit", limited)
	}
}

// TestChildFindByWordPrefix (issue 21): "Ana" finds the children with a name word starting
// with it, not those with "ana" inside a word (Santana); an exact first name comes before
// the rest; past 20 the answer keeps the total, so it says how many more there are.
func TestChildFindByWordPrefix(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	cad := a.as(store.RoleCadastro)
	enroll := func(name string) {
		t.Helper()
		m := enrollArgs(todaySP().AddDays(-5 * 365).String())
		m["name"] = name
		mustInvoke[capapi.ChildEnrollOutput](e, cad, capapi.CapChildEnroll, m)
	}
	for _, n := range []string{"Zzprefix Bruno Santana", "Anabela Zzprefix", "Ana Clara Zzprefix", "Maria Ana Zzprefix", "Ána Zzprefix Souza"} {
		enroll(n)
	}
	names := func(text string) ([]string, capapi.ChildFindOutput) {
		t.Helper()
		out := mustInvoke[capapi.ChildFindOutput](e, cad, capapi.CapChildFind, map[string]any{"name": text})
		var got []string
		for _, c := range out.Children {
			got = append(got, c.Name)
		}
		return got, *out
	}
	tests := []struct {
		text string
		want []string
	}{
		// Exact first name first (both Anas, accent aside), then by name; Anabela starts with
		// "ana" too; Santana does not match.
		{"ana zzprefix", []string{"Ana Clara Zzprefix", "Ána Zzprefix Souza", "Anabela Zzprefix", "Maria Ana Zzprefix"}},
		{"ana sou", []string{"Ána Zzprefix Souza"}},
		{"zzprefix santa", []string{"Zzprefix Bruno Santana"}},
		{"ntana", nil},
	}
	for _, tt := range tests {
		got, out := names(tt.text)
		if !slices.Equal(got, tt.want) || out.Total != int64(len(tt.want)) || out.More != 0 {
			t.Errorf("find %q = %q (total %d, more %d), want %q", tt.text, got, out.Total, out.More, tt.want)
		}
	}
	// More than 20: the first 20 and the count of the rest.
	for i := range 22 {
		enroll(fmt.Sprintf("Zzmany Criança %c%c", 'A'+i/26, 'a'+i%26))
	}
	got, out := names("zzmany")
	if len(got) != 20 || out.Total != 22 || out.More != 2 {
		t.Errorf("22 matches: %d returned, total %d, more %d; want 20, 22, 2", len(got), out.Total, out.More)
	}
}
