package capgen

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neemias/neemias-mcp/internal/capgen/spec"
)

// generateFrom parses src as spec/capabilities.yaml and generates everything capgen owns,
// in memory, as path → content.
func generateFrom(t *testing.T, src []byte) map[string][]byte {
	t.Helper()
	s, err := spec.Parse("spec/capabilities.yaml", src)
	if err != nil {
		t.Fatalf("edited spec must load:\n%v", err)
	}
	files, err := Generate(NewModel(s, "spec/capabilities.yaml", module))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		out[f.Path] = f.Content
	}
	return out
}

// changedFiles are the paths whose content differs between a and b, or that only one has.
func changedFiles(a, b map[string][]byte) []string {
	var changed []string
	for p, c := range a {
		if d, ok := b[p]; !ok || !bytes.Equal(c, d) {
			changed = append(changed, p)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			changed = append(changed, p)
		}
	}
	sort.Strings(changed)
	return changed
}

// specLine is a spec path followed by a line number, as in spec/capabilities.yaml:42.
var specLine = regexp.MustCompile(`capabilities\.yaml:[0-9]+`)

// TestOneLineEditChangesOnlyItsDependents pins the rule "a one-line spec edit changes only the
// files that depend on it": the real spec is edited one line at a time, regenerated in memory,
// and the files that changed must be exactly the ones that carry the edited text. A line moved
// (a comment or blank line added at the top) changes nothing, as no generated file names a
// spec line. gen/db (sqlc) and gen/openapi/oas (ogen) are functions of
// queries/generated/capabilities.sql and gen/openapi/openapi.json, so they change only when
// those appear below.
func TestOneLineEditChangesOnlyItsDependents(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repoRoot, "spec", "capabilities.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	base := generateFrom(t, src)
	for p, c := range base {
		if m := specLine.Find(c); m != nil {
			t.Errorf("%s names a spec line (%s): a line moved elsewhere in the spec would change it", p, m)
		}
	}

	tests := []struct {
		name      string
		old, new  string // one line of the spec, and its replacement
		atTop     string // or: text inserted before the first line
		wantFiles []string
	}{
		{
			name:  "comment line at the top",
			atTop: "# a comment that moves every line down by one\n",
		},
		{
			name:  "blank line at the top",
			atTop: "\n",
		},
		{
			// A tool's description is registry data, the Handler method's doc comment and the
			// OpenAPI operation's description (gen/schemas embeds a copy of the document).
			name:      "one tool's description",
			old:       "Searches are limited per caller.",
			new:       "Searches are rate-limited per caller.",
			wantFiles: []string{"gen/capapi/catalog_gen.go", "gen/capapi/handler_gen.go", "gen/openapi/openapi.json", "gen/schemas/openapi.json"},
		},
		{
			// A resource's summary template is data of the registry only.
			name:      "one resource's summary",
			old:       `    summary: '{{plural .total "check-in" "check-ins"}} on {{.date}} in {{plural .total_classes "class" "classes"}} (today is {{.today}}, {{.time_zone}}){{if .next_offset}}; this page lists {{len .classes}} of them: call again with offset {{.next_offset}} for the next{{end}}.'`,
			new:       `    summary: '{{plural .total "check-in" "check-ins"}} on {{.date}}, in {{plural .total_classes "class" "classes"}} (today is {{.today}}, {{.time_zone}}){{if .next_offset}}; this page lists {{len .classes}} of them: call again with offset {{.next_offset}} for the next{{end}}.'`,
			wantFiles: []string{"gen/capapi/catalog_gen.go"},
		},
		{
			// A scope's description is the scope table and the OpenAPI security scheme's
			// scope description (and its embedded copy); the matrix and inspect reports name
			// scopes only.
			name:      "one scope's description",
			old:       "    description: The check-ins of a service day.",
			new:       "    description: The check-ins of one service day.",
			wantFiles: []string{"gen/openapi/openapi.json", "gen/schemas/openapi.json", "gen/scopes/scopes_gen.go"},
		},
		{
			// A handoff note is for the person the secret is handed to, through the runtime:
			// registry data only, in no schema the model or a REST client reads.
			name:      "one handoff note",
			old:       "          handoff: Give this pick-up code to the guardian now; it is shown only this once, and whoever picks the child up must present it.",
			new:       "          handoff: Give this pick-up code to the guardian now; it is shown only this once, and whoever picks the child up must show it.",
			wantFiles: []string{"gen/capapi/catalog_gen.go"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var edited []byte
			if tt.atTop != "" {
				edited = append([]byte(tt.atTop), src...)
			} else {
				if n := bytes.Count(src, []byte(tt.old+"\n")); n != 1 {
					t.Fatalf("the spec has %d lines %q; update the test to a line that exists once", n, tt.old)
				}
				edited = bytes.Replace(src, []byte(tt.old+"\n"), []byte(tt.new+"\n"), 1)
			}
			got := changedFiles(base, generateFrom(t, edited))
			if diff := cmp.Diff(tt.wantFiles, got); diff != "" {
				t.Errorf("changed files (-want +got):\n%s", diff)
			}
		})
	}
}
