package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestCorrelationIDReachesTheAuditLog: the id the server returns in X-Request-Id is the one
// written to the audit log for that request, so a user's report can be traced.
func TestCorrelationIDReachesTheAuditLog(t *testing.T) {
	a := newApp(t)
	child := a.one(t, `SELECT id::text FROM children WHERE church_id = $1 ORDER BY id LIMIT 1`, "00000000-0000-4000-8000-00000000c001")
	tok := a.token(t, admin)
	mcpRead := func() *http.Request {
		body := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"neemias://roster/children/` + child + `"}}`
		req, _ := http.NewRequest(http.MethodPost, a.mcp, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		return req
	}
	restRead := func() *http.Request {
		req, _ := http.NewRequest(http.MethodGet, a.base+"/api/v1/roster/children/"+child, nil)
		return req
	}
	for _, tc := range []struct {
		transport string
		request   func() *http.Request
	}{{"MCP", mcpRead}, {"REST", restRead}} {
		t.Run(tc.transport, func(t *testing.T) {
			req := tc.request()
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			id := resp.Header.Get("X-Request-Id")
			if resp.StatusCode != http.StatusOK || len(id) != 16 {
				t.Fatalf("status %d, X-Request-Id %q: %s", resp.StatusCode, id, b)
			}
			got := a.one(t, `SELECT count(*)::text FROM audit_log WHERE correlation_id = $1 AND $2::uuid = ANY(target_ids)`, id, child)
			if got != "1" {
				t.Fatalf("audit rows with correlation id %s for the child: %s", id, got)
			}
		})
	}
}
