package capgen

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/gen/capapi"
)

// TestREADMEMatchesTheTree: README's capability table names exactly the spec's capabilities
// (resources by URI template, tools by name), and its layout names every package under
// internal/ and every command under cmd/. A failure says what to add or remove.
func TestREADMEMatchesTheTree(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)

	row := regexp.MustCompile("(?m)^\\| (resource|tool) \\| `([^`]+)` \\|")
	var listed, want []string
	for _, m := range row.FindAllStringSubmatch(readme, -1) {
		listed = append(listed, m[2])
	}
	for _, c := range capapi.Capabilities() {
		if c.IsRead() {
			want = append(want, c.URITemplate)
		} else {
			want = append(want, c.Name)
		}
	}
	for _, w := range want {
		if !slices.Contains(listed, w) {
			t.Errorf("README's \"What agents can reach\" has no row for %s: add `| kind | `%s` | scope |`", w, w)
		}
	}
	for _, l := range listed {
		if !slices.Contains(want, l) {
			t.Errorf("README's \"What agents can reach\" lists %s, which the spec does not declare: remove the row", l)
		}
	}

	layout := readme[strings.Index(readme, "## Layout"):]
	layout = layout[:strings.Index(layout[3:], "\n## ")+3]
	words := map[string]bool{}
	for _, w := range regexp.MustCompile(`[a-z][a-z0-9-]*`).FindAllString(layout, -1) {
		words[w] = true
	}
	for _, dir := range []string{"internal", "cmd"} {
		entries, err := os.ReadDir(filepath.Join(repoRoot, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() && e.Name() != "testdata" && !words[e.Name()] {
				t.Errorf("README's layout does not name %s/%s: say in a few words what it is for", dir, e.Name())
			}
		}
	}
}
