package server_test

import (
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
