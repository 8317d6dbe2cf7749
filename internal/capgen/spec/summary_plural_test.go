package spec

import (
	"os"
	"strings"
	"testing"
)

// TestSummaryPluralChecked: the checker accepts {{plural COUNT "one" "many"}} with a count from
// len or distinct, and refuses a count that is no number, a missing noun, and nouns that are
// not strings.
func TestSummaryPluralChecked(t *testing.T) {
	src, err := os.ReadFile("testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const anchor = "    cache: {ttl_ms: 1000}\n"
	if !strings.Contains(string(src), anchor) {
		t.Fatalf("testdata/valid.yaml lost %q", anchor)
	}
	for _, tc := range []struct{ summary, want string }{
		{`Thing {{.id}}{{if .tags}} with {{plural (len .tags) "tag" "tags"}}{{end}}.`, ""},
		{`{{if .tags}}{{plural (distinct .tags "x") "tag" "tags"}}{{end}}`, `the list's items have no field "x"`},
		{`{{plural .id "thing" "things"}}`, `.id is a string, not a count`},
		{`{{plural .tags "tag" "tags"}}`, `field "tags" is optional`},
		{`{{plural (printf "%d" 1) "tag" "tags"}}`, `is not a count`},
		{`{{if .tags}}{{plural (len .tags) "tag"}}{{end}}`, `plural takes a count and two nouns`},
		{`{{if .tags}}{{plural (len .tags) "tag" .id}}{{end}}`, `plural's nouns are strings`},
	} {
		yaml := strings.Replace(string(src), anchor, anchor+"    summary: '"+tc.summary+"'\n", 1)
		_, err := Parse("spec/capabilities.yaml", []byte(yaml))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s refused: %v", tc.summary, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one saying %q", tc.summary, err, tc.want)
		}
	}
}
