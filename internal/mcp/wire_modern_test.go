package mcp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var modernMeta = map[string]any{
	"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
	"io.modelcontextprotocol/clientCapabilities": map[string]any{},
}

// 2026-07-28 request validation (security checklist M05, M06, M09, M12, M13; spec
// streamable-http "Server Validation"): the spec's codes with HTTP 400, or 404 for unknown
// methods, always with a JSON-RPC body so modern clients do not mistake us for a legacy server.
func TestModernRequestValidation(t *testing.T) {
	srv := newTestServer(t)
	call := map[string]any{"name": "neemias_checkin_register", "arguments": map[string]any{"child_id": childA}}
	tests := []struct {
		name    string
		headers map[string]string
		method  string
		params  map[string]any
		status  int
		code    float64
	}{
		{"M05 Mcp-Method disagrees", map[string]string{"Mcp-Method": "tools/list"}, "tools/call", clone(call), 400, -32020},
		{"M05 Mcp-Name disagrees", map[string]string{"Mcp-Name": "neemias_child_enroll"}, "tools/call", clone(call), 400, -32020},
		{"M05 base64 Mcp-Name decoding to another name", map[string]string{"Mcp-Name": "=?base64?bmVlbWlhc19jaGlsZF9lbnJvbGw=?="}, "tools/call", clone(call), 400, -32020},
		{"M05 header version differs from _meta", map[string]string{"MCP-Protocol-Version": "2025-11-25"}, "tools/list", nil, 400, -32020},
		{"M06 no MCP-Protocol-Version", map[string]string{"MCP-Protocol-Version": ""}, "tools/list", nil, 400, -32020},
		{"M06 no Mcp-Method", map[string]string{"Mcp-Method": ""}, "tools/list", nil, 400, -32020},
		{"M06 no Mcp-Name on tools/call", map[string]string{"Mcp-Name": ""}, "tools/call", clone(call), 400, -32020},
		{"M12 _meta without protocolVersion", map[string]string{}, "tools/list", map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{}}}, 400, -32602},
		{"M12 _meta without clientCapabilities", nil, "tools/list", map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}, 400, -32602},
		{"M12 no _meta but modern header", nil, "tools/list", map[string]any{"_meta": map[string]any{}}, 400, -32602},
		{"M13 unknown version", map[string]string{"MCP-Protocol-Version": "1900-01-01"}, "tools/list", map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "1900-01-01", "io.modelcontextprotocol/clientCapabilities": map[string]any{}}}, 400, -32022},
		{"M13 future version", map[string]string{"MCP-Protocol-Version": "2099-01-01"}, "tools/list", map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2099-01-01", "io.modelcontextprotocol/clientCapabilities": map[string]any{}}}, 400, -32022},
		{"M09 unknown method", nil, "admin/exec", nil, 404, -32601},
		{"ping is gone in 2026-07-28", nil, "ping", nil, 404, -32601},
		{"logging/setLevel is gone", nil, "logging/setLevel", map[string]any{"level": "info"}, 404, -32601},
		{"M10 unknown tool", map[string]string{"Mcp-Name": "nope"}, "tools/call", map[string]any{"name": "nope"}, 400, -32602},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ex := modern(t, srv, tc.headers, tc.method, tc.params)
			if ex.status != tc.status || ex.errorCode() != tc.code {
				t.Fatalf("got %d/%v, want %d/%v; body %.300s", ex.status, ex.errorCode(), tc.status, tc.code, ex.body)
			}
			if tc.code == -32022 {
				data, _ := ex.msg["error"].(map[string]any)["data"].(map[string]any)
				if diff := cmp.Diff([]any{"2026-07-28", "2025-11-25", "2025-06-18"}, data["supported"]); diff != "" {
					t.Errorf("data.supported (-want +got):\n%s", diff)
				}
				if data["requested"] != tc.headers["MCP-Protocol-Version"] {
					t.Errorf("data.requested = %v", data["requested"])
				}
			}
		})
	}
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Every modern result carries resultType and serverInfo; server/discover names both eras and is
// publicly cacheable; lists are private (they depend on the caller's scopes).
func TestModernResults(t *testing.T) {
	srv := newTestServer(t)
	d := modern(t, srv, nil, "server/discover", nil)
	r := d.result()
	if d.status != http.StatusOK || r == nil {
		t.Fatalf("server/discover: %d %s", d.status, d.body)
	}
	if diff := cmp.Diff([]any{"2026-07-28", "2025-11-25", "2025-06-18"}, r["supportedVersions"]); diff != "" {
		t.Errorf("supportedVersions (-want +got):\n%s", diff)
	}
	if r["resultType"] != "complete" || r["cacheScope"] != "public" || r["ttlMs"] == nil {
		t.Errorf("discover result = %v", r)
	}
	caps, _ := r["capabilities"].(map[string]any)
	for _, k := range []string{"tools", "resources", "completions"} {
		if _, ok := caps[k]; !ok {
			t.Errorf("capabilities lack %q: %v", k, caps)
		}
	}
	if strings.Contains(d.body, "listChanged\":true") {
		t.Errorf("a stateless server must not advertise listChanged: %s", d.body)
	}
	for _, m := range []string{"tools/list", "resources/list", "resources/templates/list"} {
		ex := modern(t, srv, nil, m, nil)
		r := ex.result()
		if r["resultType"] != "complete" || r["cacheScope"] != "private" || r["ttlMs"] == nil {
			t.Errorf("%s result: %v", m, r)
		}
		meta, _ := r["_meta"].(map[string]any)
		if _, ok := meta["io.modelcontextprotocol/serverInfo"]; !ok {
			t.Errorf("%s: no serverInfo in _meta", m)
		}
	}
}
