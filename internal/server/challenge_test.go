package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestBearerChallenges pins the RFC 6750 / RFC 9728 challenges of /mcp: no credentials → no
// error code; a bad token → invalid_token; both name the metadata and hint the non-sensitive
// scopes a client should ask for first.
func TestBearerChallenges(t *testing.T) {
	a := newApp(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	for _, tt := range []struct {
		name, auth string
		wantError  bool
	}{
		{"no credentials", "", false},
		{"garbage token", "Bearer not-a-jwt", true},
		{"basic scheme", "Basic YTpi", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, a.mcp, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			www := resp.Header.Get("WWW-Authenticate")
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if !strings.Contains(www, `resource_metadata="`+a.base+`/.well-known/oauth-protected-resource/mcp"`) ||
				!strings.Contains(www, `scope="roster:read attendance:read checkins:read checkins:write"`) {
				t.Errorf("WWW-Authenticate = %q", www)
			}
			if got := strings.Contains(www, `error="invalid_token"`); got != tt.wantError {
				t.Errorf("error=invalid_token present = %v, want %v: %q", got, tt.wantError, www)
			}
		})
	}
}

// TestMetadataIgnoresRequestHeaders (checklist A13): the protected-resource metadata is built
// from configuration, never from Host or X-Forwarded-* headers.
func TestMetadataIgnoresRequestHeaders(t *testing.T) {
	a := newApp(t)
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		req, _ := http.NewRequest(http.MethodGet, a.base+path, nil)
		req.Host = "evil.example"
		req.Header.Set("X-Forwarded-Host", "evil.example")
		req.Header.Set("X-Forwarded-Proto", "https")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		_, _ = io.Copy(&b, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(b.String(), `"resource":"`+a.mcp+`"`) || strings.Contains(b.String(), "evil.example") {
			t.Errorf("%s: %d %s", path, resp.StatusCode, b.String())
		}
	}
}
