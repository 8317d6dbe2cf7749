package mcp_test

import (
	"net/http"
	"strings"
	"testing"
)

// Streamable HTTP framing rules that hold in both eras: POST only (405 with Allow otherwise),
// notifications 202, never an Mcp-Session-Id, no caching, Content-Type and Accept checks,
// body-size limit (security checklist T07–T10, M14).
func TestTransportRules(t *testing.T) {
	srv := newTestServer(t)
	init := rpc(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 70<<10) + `"}}`
	tests := []struct {
		name       string
		method     string
		headers    map[string]string
		body       string
		wantStatus int
		wantCode   float64
	}{
		{"GET has no stream", http.MethodGet, nil, "", http.StatusMethodNotAllowed, -32600},
		{"DELETE has no session", http.MethodDelete, map[string]string{"Mcp-Session-Id": "abc"}, "", http.StatusMethodNotAllowed, -32600},
		{"OPTIONS gets no CORS answer", http.MethodOptions, map[string]string{"Origin": "https://app.example.org"}, "", http.StatusMethodNotAllowed, -32600},
		{"notification is accepted", http.MethodPost, nil, rpc(nil, "notifications/initialized", nil), http.StatusAccepted, 0},
		{"unknown notification is accepted without effect", http.MethodPost, nil, rpc(nil, "admin/exec", nil), http.StatusAccepted, 0},
		{"text/plain is refused", http.MethodPost, map[string]string{"Content-Type": "text/plain"}, init, http.StatusUnsupportedMediaType, -32600},
		{"Accept without event-stream", http.MethodPost, map[string]string{"Accept": "application/json"}, init, http.StatusNotAcceptable, -32600},
		{"body over the limit", http.MethodPost, nil, big, http.StatusRequestEntityTooLarge, -32600},
		{"initialize with a stale session id", http.MethodPost, map[string]string{"Mcp-Session-Id": "stale", "Last-Event-ID": "x_1"}, init, http.StatusOK, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ex := do(t, srv, tc.method, tc.headers, tc.body)
			if ex.status != tc.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", ex.status, tc.wantStatus, ex.body)
			}
			if ex.errorCode() != tc.wantCode {
				t.Errorf("error code = %v, want %v; body %s", ex.errorCode(), tc.wantCode, ex.body)
			}
			if tc.wantStatus == http.StatusMethodNotAllowed && ex.header.Get("Allow") != "POST" {
				t.Errorf("Allow = %q, want POST", ex.header.Get("Allow"))
			}
			if tc.wantStatus == http.StatusAccepted && ex.body != "" {
				t.Errorf("202 with body %q", ex.body)
			}
			if sid := ex.header.Get("Mcp-Session-Id"); sid != "" {
				t.Errorf("Mcp-Session-Id %q issued", sid)
			}
			if ex.header.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("CORS header present")
			}
			if ex.status != http.StatusAccepted && ex.header.Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control = %q, want no-store", ex.header.Get("Cache-Control"))
			}
		})
	}
}

// Responses to requests are SSE streams (JSONResponse: false), unbuffered by proxies.
func TestResponsesAreSSE(t *testing.T) {
	srv := newTestServer(t)
	ex := modern(t, srv, nil, "tools/list", nil)
	if ct := ex.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type = %q, want text/event-stream", ct)
	}
	if ex.header.Get("X-Accel-Buffering") != "no" {
		t.Errorf("X-Accel-Buffering = %q", ex.header.Get("X-Accel-Buffering"))
	}
}
