package capgen

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neemias/neemias-mcp/internal/capgen/specschema"
)

// TestJSONFilesOneEncoding: every JSON file capgen emits (schemas, OpenAPI, server.json, the
// spec format's schema) is [jsonFile]'s: valid, indented by two spaces, one final newline, no
// \u003c-style escapes. The spec schema opens with its header and ends with $defs.
func TestJSONFilesOneEncoding(t *testing.T) {
	files, err := Generate(repoModel(t))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if !strings.HasSuffix(f.Path, ".json") {
			continue
		}
		n++
		var indented bytes.Buffer
		if err := json.Indent(&indented, f.Content, "", "  "); err != nil {
			t.Errorf("%s: not JSON: %v", f.Path, err)
			continue
		}
		if indented.String() != string(f.Content) {
			t.Errorf("%s is not indented by two spaces", f.Path)
		}
		if !bytes.HasSuffix(f.Content, []byte("}\n")) || bytes.HasSuffix(f.Content, []byte("\n\n")) {
			t.Errorf("%s must end in exactly one newline", f.Path)
		}
		for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
			if bytes.Contains(f.Content, []byte(esc)) {
				t.Errorf("%s has the HTML escape %s", f.Path, esc)
			}
		}
		if f.Path == specschema.Path {
			if !bytes.HasPrefix(f.Content, []byte("{\n  \"$schema\": ")) {
				t.Errorf("%s: $schema must come first, so the header is the first thing a reader sees", f.Path)
			}
			if i := bytes.LastIndex(f.Content, []byte("\n  \"")); i < 0 || !bytes.HasPrefix(f.Content[i:], []byte("\n  \"$defs\": ")) {
				t.Errorf("%s: $defs must come last", f.Path)
			}
		}
	}
	if n < 4 {
		t.Errorf("only %d JSON files", n)
	}
}

func TestUnescapeHTML(t *testing.T) {
	for in, want := range map[string]string{
		`"rf_\u003cname\u003e \u0026 x"`: `"rf_<name> & x"`,
		`"a \\u003c b"`:                  `"a \\u003c b"`, // an escaped backslash, then u003c
		`"\u00e9 \n \\"`:                 `"\u00e9 \n \\"`,
		`"ends in \`:                     `"ends in \`,
	} {
		if diff := cmp.Diff(want, string(unescapeHTML([]byte(in)))); diff != "" {
			t.Errorf("unescapeHTML(%s) (-want +got):\n%s", in, diff)
		}
	}
}
