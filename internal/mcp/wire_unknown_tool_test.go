package mcp_test

import (
	"strings"
	"testing"
)

// An unknown tool is -32602 (HTTP 200 legacy, 400 modern) whose message does not repeat the
// requested name: it is the caller's free text, possibly personal data (PII canary), and errors
// never echo input values.
func TestUnknownToolNotEchoed(t *testing.T) {
	srv := newTestServer(t)
	name := "neemias_" + canary
	for _, era := range []string{"legacy", "modern"} {
		var ex exchange
		params := map[string]any{"name": name, "arguments": map[string]any{}}
		status := 200
		if era == "legacy" {
			ex = post(t, srv, nil, rpc(1, "tools/call", params))
		} else {
			ex = modern(t, srv, nil, "tools/call", params)
			status = 400
		}
		if ex.status != status || ex.errorCode() != -32602 || !strings.Contains(ex.errorMessage(), "unknown tool") {
			t.Errorf("%s: %d %v %q, want %d -32602 unknown tool", era, ex.status, ex.errorCode(), ex.errorMessage(), status)
		}
		if strings.Contains(ex.body, canary) {
			t.Errorf("%s: the error echoes the tool name: %s", era, ex.body)
		}
	}
}
