package spec

import (
	"os"
	"strings"
	"testing"
)

// TestUpstreamRules: each case edits the upstream of testdata/valid.yaml and names a piece of
// the one diagnostic it must get (the pinned broken specs cover stdio, all, an empty list, an
// unknown scope and a duplicate id).
func TestUpstreamRules(t *testing.T) {
	src, err := os.ReadFile("testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"url is runtime configuration", "    prefix: demo_docs_\n", "    prefix: demo_docs_\n    url: https://docs.example/mcp\n",
			"url in upstreams.docs: an upstream's address is runtime configuration, never in the spec"},
		{"a token is runtime configuration", "    prefix: demo_docs_\n", "    prefix: demo_docs_\n    token: s3cret\n",
			"token in upstreams.docs: an upstream's credentials are runtime configuration"},
		{"tools: {}", "    tools:\n      echo:\n        title: Echo\n        description: Returns what it is sent.\n        scope: things:read\n", "    tools: {}\n",
			`upstream "docs" lists no tools: it would expose nothing`},
		{"tools: [echo]", "    tools:\n      echo:\n        title: Echo\n        description: Returns what it is sent.\n        scope: things:read\n", "    tools: [echo]\n",
			"upstreams.docs.tools must be a mapping of tool name"},
		{"a tool named *", "      echo:\n", "      \"*\":\n", `tool "*" is not allowed`},
		{"prefix without the server's", "    prefix: demo_docs_\n", "    prefix: docs_\n", `does not start with server.tool_prefix "demo_"`},
		{"prefix not ending in _", "    prefix: demo_docs_\n", "    prefix: demo_docs\n", "is not snake_case ending in _"},
		{"no prefix", "    prefix: demo_docs_\n", "", "upstreams.docs.prefix is missing"},
		{"a name another tool has", "    prefix: demo_docs_\n", "    prefix: demo_thing_\n", `"demo_thing_rename", the name of tool "demo_thing_rename"`},
		{"unknown PII mode", "pii: {request: enforce, response: redact}", "pii: {request: enforce, response: mask}", `pii.response "mask" is not a PII mode`},
		{"no scope", "        scope: things:read\n", "", `upstream tool "docs.echo" has no scope`},
		{"unreachable", "    scopes: [things:read, things:write]\n", "    scopes: [things:write]\n", `upstream tool "docs.echo" is unreachable: no role has scope "things:read"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := string(src)
			if tc.name == "a name another tool has" {
				in = strings.Replace(in, "      echo:\n", "      rename:\n", 1)
			}
			if !strings.Contains(in, tc.old) {
				t.Fatalf("valid.yaml lacks %q", tc.old)
			}
			_, err := Parse("edited.yaml", []byte(strings.Replace(in, tc.old, tc.new, 1)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse = %v; want a diagnostic with %q", err, tc.want)
			}
		})
	}
}
