package mcp_test

import (
	"net/http"
	"testing"
)

// Legacy era (2025-11-25, 2025-06-18): initialize negotiates, ping answers, requests need the
// version header (we do not serve 2025-03-26), results carry no resultType.
func TestLegacyInitialize(t *testing.T) {
	srv := newTestServer(t)
	tests := []struct {
		offered, want string
	}{
		{"2025-11-25", "2025-11-25"},
		{"2025-06-18", "2025-06-18"},
		{"2025-03-26", "2025-11-25"},
		{"2024-11-05", "2025-11-25"},
		{"2026-07-28", "2025-11-25"}, // initialize never negotiates into the stateless revision
		{"1900-01-01", "2025-11-25"},
	}
	for _, tc := range tests {
		t.Run(tc.offered, func(t *testing.T) {
			ex := do(t, srv, http.MethodPost, nil, rpc(1, "initialize", map[string]any{
				"protocolVersion": tc.offered, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}))
			r := ex.result()
			if ex.status != http.StatusOK || r["protocolVersion"] != tc.want {
				t.Fatalf("got %d %v, want %s; body %s", ex.status, r["protocolVersion"], tc.want, ex.body)
			}
			if _, ok := r["resultType"]; ok {
				t.Errorf("legacy result has resultType")
			}
			if ex.header.Get("Mcp-Session-Id") != "" {
				t.Errorf("session id issued")
			}
		})
	}
}

func TestLegacyRequests(t *testing.T) {
	srv := newTestServer(t)
	tests := []struct {
		name    string
		headers map[string]string
		body    string
		status  int
		code    float64
	}{
		{"ping answers", nil, rpc(1, "ping", nil), 200, 0},
		{"2025-06-18 header", map[string]string{"MCP-Protocol-Version": "2025-06-18"}, rpc(1, "tools/list", nil), 200, 0},
		{"no version header", map[string]string{"MCP-Protocol-Version": ""}, rpc(1, "tools/list", nil), 400, -32022},
		{"unsupported legacy header", map[string]string{"MCP-Protocol-Version": "2025-03-26"}, rpc(1, "tools/list", nil), 400, -32022},
		{"garbage header", map[string]string{"MCP-Protocol-Version": "banana"}, rpc(1, "tools/list", nil), 400, -32022},
		{"M09 unknown method", nil, rpc(1, "admin/exec", nil), 400, 0},
		{"M10 unknown tool", nil, rpc(1, "tools/call", map[string]any{"name": "nope"}), 200, -32602},
		{"unknown resource is -32002", nil, rpc(1, "resources/read", map[string]any{"uri": "neemias://nope"}), 200, -32002},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ex := post(t, srv, tc.headers, tc.body)
			if ex.status != tc.status || ex.errorCode() != tc.code {
				t.Fatalf("got %d/%v, want %d/%v; body %.300s", ex.status, ex.errorCode(), tc.status, tc.code, ex.body)
			}
			if r := ex.result(); r != nil {
				if _, ok := r["resultType"]; ok {
					t.Errorf("legacy result has resultType: %v", r)
				}
			}
		})
	}
}
