package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestInputValidatedOnceWithOneWording: a tool's arguments are validated by the pipeline's one
// validator on both transports, so REST (the body as sent, not ogen's decoder) and MCP name the
// same field with the same reason, and neither echoes the value.
func TestInputValidatedOnceWithOneWording(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	tok := a.token(t, admin)
	const canary = "Zq9canary"
	tests := []struct {
		name, tool, args, field, reason string
	}{
		{"format", "neemias_checkin_register", `{"child_id":"` + canary + `"}`, "child_id", "must be a UUID such as 7c9e6679-7425-40de-944b-e07fc1f90ae7"},
		{"required", "neemias_child_find", `{}`, "name", "is required"},
		{"unknown field", "neemias_checkin_register", `{"child_id":"7c9e6679-7425-40de-944b-e07fc1f90ae7","` + canary + `":1}`, canary, "is not a known field"},
		{"length", "neemias_checkout_register", `{"checkin_id":"7c9e6679-7425-40de-944b-e07fc1f90ae7","pickup_code":"ab","picked_up_by":"Marta"}`, "pickup_code", "must be at least 4 characters long"},
		{"type", "neemias_child_find", `{"name":7}`, "name", "must be a string, got integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.field + ": " + tt.reason
			status, _, body := edgeCall(t, "POST", a.base+"/api/v1/tools/"+tt.tool,
				http.Header{"Authorization": {"Bearer " + tok}, "Content-Type": {"application/json"}}, tt.args)
			var p struct{ Detail, Field, Code string }
			if err := json.Unmarshal([]byte(body), &p); err != nil || status != http.StatusBadRequest || p.Code != "invalid_input" ||
				p.Field != tt.field || !strings.HasPrefix(p.Detail, "invalid input: "+want) {
				t.Errorf("REST: %d %s; want 400 invalid_input naming %q", status, body, want)
			}
			if tt.field != canary && strings.Contains(body, canary) {
				t.Errorf("REST echoes the value: %s", body)
			}
			call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tt.tool + `","arguments":` + tt.args +
				`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
			status, _, body = edgeCall(t, "POST", a.mcp, http.Header{"Authorization": {"Bearer " + tok}, "Content-Type": {"application/json"},
				"Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {tt.tool}}, call)
			if status != http.StatusOK || !strings.Contains(body, `"isError":true`) || !strings.Contains(body, want) {
				t.Errorf("MCP: %d %.400s; want an isError result naming %q", status, body, want)
			}
		})
	}
	// Reads: REST's path and query parameters and MCP's URI template variables are converted
	// alike and validated by the same validator.
	reads := []struct {
		name, rest, uri, field, reason string
	}{
		{"path uuid", "/roster/children/" + canary, "neemias://roster/children/" + canary, "id", "must be a UUID such as 7c9e6679-7425-40de-944b-e07fc1f90ae7"},
		{"path date", "/checkins/2026-13-45", "neemias://checkins/2026-13-45", "date", "must be a date in the form YYYY-MM-DD"},
		{"query date", "/attendance/summary?from=" + canary, "neemias://attendance/summary?from=" + canary, "from", "must be a date in the form YYYY-MM-DD"},
	}
	for _, tt := range reads {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.field + ": " + tt.reason
			status, _, body := edgeCall(t, "GET", a.base+"/api/v1"+tt.rest, http.Header{"Authorization": {"Bearer " + tok}}, "")
			var p struct{ Detail, Field, Code string }
			if err := json.Unmarshal([]byte(body), &p); err != nil || status != http.StatusBadRequest || p.Code != "invalid_input" ||
				p.Field != tt.field || p.Detail != "invalid input: "+want || strings.Contains(body, canary) {
				t.Errorf("REST: %d %s; want 400 invalid_input %q, no value", status, body, want)
			}
			read := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"` + tt.uri + `"}}`
			status, _, body = edgeCall(t, "POST", a.mcp, http.Header{"Authorization": {"Bearer " + tok}, "Content-Type": {"application/json"},
				"Accept": {"application/json, text/event-stream"}, "MCP-Protocol-Version": {"2025-11-25"}}, read)
			if !strings.Contains(body, "invalid resource URI: "+want) || strings.Contains(strings.ReplaceAll(body, tt.uri, ""), canary) {
				t.Errorf("MCP: %d %.400s; want -32602 naming %q", status, body, want)
			}
		})
	}
	t.Run("REST: a parameter given twice", func(t *testing.T) {
		status, _, body := edgeCall(t, "GET", a.base+"/api/v1/attendance/summary?from=2026-01-01&from=2026-02-01", http.Header{"Authorization": {"Bearer " + tok}}, "")
		if status != http.StatusBadRequest || !strings.Contains(body, "from: must be given at most once") {
			t.Errorf("%d %s; want 400 naming from", status, body)
		}
	})
	t.Run("REST body rules of its own", func(t *testing.T) {
		for _, c := range []struct{ ctype, body, want string }{
			{"text/plain", `{"child_id":"7c9e6679-7425-40de-944b-e07fc1f90ae7"}`, "must be application/json"},
			{"application/json", ``, "a JSON object body is required"},
		} {
			status, _, body := edgeCall(t, "POST", a.base+"/api/v1/tools/neemias_checkin_register",
				http.Header{"Authorization": {"Bearer " + tok}, "Content-Type": {c.ctype}}, c.body)
			if status != http.StatusBadRequest || !strings.Contains(body, c.want) {
				t.Errorf("%s %q: %d %s; want 400 %q", c.ctype, c.body, status, body, c.want)
			}
		}
	})
}
