package mcp_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// The SDK's per-request Info chatter (every stateless request is a "session") stays out of the
// server's log, even at debug level.
func TestNoSDKSessionChatterInLogs(t *testing.T) {
	var logs bytes.Buffer
	opts := testOptions(nil)
	opts.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv := newServer(t, opts)
	post(t, srv, nil, rpc(1, "tools/list", nil))
	modern(t, srv, nil, "tools/list", nil)
	if ex := post(t, srv, nil, rpc(2, "tools/call", map[string]any{"name": "neemias_child_enroll", "arguments": map[string]any{"name": "Ana", "guardian": map[string]any{"phone": "+55 11 99999-0000", "relationship": "mother"}}})); ex.status != 200 {
		t.Fatalf("tools/call: %d %s", ex.status, ex.body)
	}
	out := logs.String()
	for _, chatter := range []string{"server connecting", "server session connected", "server session disconnected"} {
		if strings.Contains(out, chatter) {
			t.Errorf("the log carries the SDK's %q:\n%s", chatter, out)
		}
	}
	// The runtime's own error (the fake enroll fails internally) is still logged.
	if !strings.Contains(out, "capability failed") {
		t.Errorf("the internal error was not logged:\n%s", out)
	}
}
