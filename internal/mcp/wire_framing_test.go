package mcp_test

import (
	"net/http"
	"strings"
	"testing"
)

// JSON-RPC framing and strict JSON (security checklist M01–M04, M07, M08): refused with 400
// and a JSON-RPC error before the engine runs.
func TestFramingRules(t *testing.T) {
	srv := newTestServer(t)
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	tests := []struct {
		name    string
		headers map[string]string
		body    string
		code    float64
	}{
		{"M01 malformed JSON", nil, `{"jsonrpc":"2.0","id":1,"method":`, -32700},
		{"M01 trailing garbage", nil, `{"jsonrpc":"2.0","id":1,"method":"ping"} x`, -32700},
		{"invalid UTF-8", nil, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}", -32700},
		{"M02 deep nesting in arguments", nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"neemias_checkin_register","arguments":{"a":` + deep + `}}}`, -32600},
		{"M03 case-variant method", nil, `{"jsonrpc":"2.0","id":1,"method":"tools/list","Method":"tools/call"}`, -32600},
		{"M03 long-s params", nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"},"paramſ":{"name":"b"}}`, -32600},
		{"M03 name and Name", nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"neemias_checkin_register","Name":"neemias_child_enroll"}}`, -32600},
		{"M04 exact duplicate", nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}`, -32600},
		{"M07 batch with version header", nil, `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`, -32600},
		{"M07 batch without version header", map[string]string{"MCP-Protocol-Version": ""}, `[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, -32600},
		{"M08 a JSON-RPC response", nil, `{"jsonrpc":"2.0","id":1,"result":{}}`, -32600},
		{"M08 null id", nil, `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, -32600},
		{"M08 object id", nil, `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, -32600},
		{"M08 float id", nil, `{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, -32600},
		{"M08 huge string id", nil, `{"jsonrpc":"2.0","id":"` + strings.Repeat("a", 1000) + `","method":"tools/list"}`, -32600},
		{"wrong jsonrpc version", nil, `{"jsonrpc":"1.0","id":1,"method":"tools/list"}`, -32600},
		{"not an object", nil, `"tools/list"`, -32600},
		{"unknown member", nil, `{"jsonrpc":"2.0","id":1,"method":"tools/list","extra":true}`, -32600},
		{"params not an object", nil, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1]}`, -32602},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ex := post(t, srv, tc.headers, tc.body)
			if ex.status != http.StatusBadRequest {
				t.Fatalf("status = %d, want 400; body %.200s", ex.status, ex.body)
			}
			if ex.errorCode() != tc.code {
				t.Errorf("code = %v, want %v; body %.200s", ex.errorCode(), tc.code, ex.body)
			}
			if ex.msg["jsonrpc"] != "2.0" {
				t.Errorf("body is not a JSON-RPC error: %.200s", ex.body)
			}
		})
	}
}
