package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/server"
)

// postMCP sends a legacy initialize to the app's listener with the given Host and Origin ("" =
// none) and returns the status.
func postMCP(t *testing.T, a *app, token, host, origin string) int {
	t.Helper()
	req, err := http.NewRequest("POST", a.base+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// The MCP endpoint's Host/Origin allowlist as server.New builds it. On a loopback public URL
// every loopback name is accepted on any port (clients say localhost as often as 127.0.0.1; the
// MCP Inspector runs in a browser on another port; the conformance suite reaches the server
// through a proxy on another port); a foreign Host or Origin is refused with 403 (DNS rebinding).
// On a public host only that host and its origin, plus configured origins, are accepted.
func TestHostOriginAllowlist(t *testing.T) {
	t.Parallel()
	t.Run("loopback public URL", func(t *testing.T) {
		a := newApp(t)
		tok := a.token(t, admin)
		port := a.base[strings.LastIndex(a.base, ":")+1:]
		for _, tc := range []struct {
			host, origin string
			ok           bool
		}{
			{"127.0.0.1:" + port, "", true},
			{"localhost:" + port, "", true},
			{"[::1]:" + port, "", true},
			{"127.0.0.1:" + port, "http://127.0.0.1:" + port, true},
			{"localhost:" + port, "http://localhost:6274", true}, // the MCP Inspector
			{"127.0.0.1:9999", "http://127.0.0.1:9999", true},    // through a local proxy
			{"evil.example.com", "", false},
			{"evil.example.com:" + port, "http://evil.example.com:" + port, false}, // DNS rebinding
			{"127.0.0.1:" + port, "http://evil.example.com", false},
			{"127.0.0.1:" + port, "null", false},
			{"localhost.evil.example", "", false},
		} {
			got := postMCP(t, a, tok, tc.host, tc.origin)
			if (got != http.StatusForbidden) != tc.ok {
				t.Errorf("Host %q Origin %q: HTTP %d, want allowed=%v", tc.host, tc.origin, got, tc.ok)
			}
		}
	})
	t.Run("public host", func(t *testing.T) {
		a := newAppWith(t, server.Config{PublicURL: "https://mcp.church.example"})
		tok := a.token(t, admin)
		for _, tc := range []struct {
			host, origin string
			ok           bool
		}{
			{"mcp.church.example", "", true},
			{"mcp.church.example", "https://mcp.church.example", true},
			{"MCP.Church.Example", "", true},
			{"mcp.church.example", "http://mcp.church.example", false},
			{"mcp.church.example", "http://localhost:6274", false},
			{"localhost", "", false},
			{"127.0.0.1", "", false},
			{"evil.example.com", "", false},
		} {
			got := postMCP(t, a, tok, tc.host, tc.origin)
			if (got != http.StatusForbidden) != tc.ok {
				t.Errorf("Host %q Origin %q: HTTP %d, want allowed=%v", tc.host, tc.origin, got, tc.ok)
			}
		}
	})
}
