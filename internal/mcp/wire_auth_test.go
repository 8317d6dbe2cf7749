package mcp_test

import (
	"github.com/neemias/neemias-mcp/internal/testsupport"
	"net/http"
	"slices"
	"strings"
	"testing"
)

const metadataURL = `resource_metadata="https://mcp.example.org/.well-known/oauth-protected-resource/mcp"`

// RFC 6750 bearer challenges (security checklist A01, A02, A10): 401 without error code when
// no credential was sent, error="invalid_token" for a bad one, 400 invalid_request for two.
func TestBearerChallenges(t *testing.T) {
	srv := newTestServer(t)
	body := rpc(1, "tools/list", nil)
	tests := []struct {
		name      string
		headers   map[string]string
		path      string
		want      int
		wantError string // error= in WWW-Authenticate, "" for none
	}{
		{"A01 no Authorization", map[string]string{"Authorization": ""}, "", 401, ""},
		{"A02 garbage token", map[string]string{"Authorization": "Bearer not-a-token"}, "", 401, "invalid_token"},
		{"A02 empty token", map[string]string{"Authorization": "Bearer "}, "", 401, "invalid_token"},
		{"A02 Basic scheme", map[string]string{"Authorization": "Basic dXNlcjpwYXNz"}, "", 401, "invalid_token"},
		{"A02 token with spaces", map[string]string{"Authorization": "Bearer a b"}, "", 401, "invalid_token"},
		{"A10 token in the query is ignored", map[string]string{"Authorization": ""}, "?access_token=" + tokAdmin, 401, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.path != "" {
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp"+tc.path, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != tc.want {
					t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
				}
				return
			}
			ex := post(t, srv, tc.headers, body)
			if ex.status != tc.want {
				t.Fatalf("status = %d, want %d; body %s", ex.status, tc.want, ex.body)
			}
			www := ex.header.Get("WWW-Authenticate")
			if !strings.HasPrefix(www, "Bearer ") || !strings.Contains(www, metadataURL) {
				t.Errorf("WWW-Authenticate = %q, want a Bearer challenge with %s", www, metadataURL)
			}
			if got := strings.Contains(www, "error="); got != (tc.wantError != "") {
				t.Errorf("WWW-Authenticate = %q, want error=%q", www, tc.wantError)
			}
			if tc.wantError != "" && !strings.Contains(www, `error="`+tc.wantError+`"`) {
				t.Errorf("WWW-Authenticate = %q, want error=%q", www, tc.wantError)
			}
		})
	}
}

func TestTwoAuthorizationHeaders(t *testing.T) {
	srv := newTestServer(t)
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(rpc(1, "tools/list", nil)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Add("Authorization", "Bearer "+tokNone)
	req.Header.Add("Authorization", "Bearer "+tokAdmin)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_request"`) {
		t.Fatalf("status %d, WWW-Authenticate %q; want 400 invalid_request", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

// A caller lacking a capability's scope gets 403 insufficient_scope naming the scopes it holds
// plus the one needed (checklist A12), for tools and resources, in both eras; the handler never
// runs.
func TestInsufficientScope(t *testing.T) {
	srv := newTestServer(t)
	tests := []struct {
		name       string
		send       func() exchange
		wantScopes []string
	}{
		{"legacy tools/call", func() exchange {
			return post(t, srv, map[string]string{"Authorization": "Bearer " + tokNone}, rpc(1, "tools/call", map[string]any{"name": "neemias_checkin_register", "arguments": map[string]any{"child_id": childA}}))
		}, []string{"checkins:write"}},
		{"modern resources/read of a child", func() exchange {
			return modern(t, srv, map[string]string{"Authorization": "Bearer " + tokVol}, "resources/read", map[string]any{"uri": "neemias://roster/children/" + childA})
		}, []string{"attendance:read", "checkins:write", "children:read", "roster:read"}},
		{"legacy resources/read of counts", func() exchange {
			return post(t, srv, map[string]string{"Authorization": "Bearer " + tokNone}, rpc(1, "resources/read", map[string]any{"uri": "neemias://roster/children"}))
		}, []string{"roster:read"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ex := tc.send()
			if ex.status != http.StatusForbidden {
				t.Fatalf("status = %d, want 403; body %s", ex.status, ex.body)
			}
			www := ex.header.Get("WWW-Authenticate")
			for _, want := range []string{`error="insufficient_scope"`, metadataURL} {
				if !strings.Contains(www, want) {
					t.Errorf("WWW-Authenticate = %q, missing %s", www, want)
				}
			}
			// The challenge asks for the scopes held plus the one needed (step-up keeps scopes).
			if got, want := testsupport.ChallengeScopes(www), tc.wantScopes; !slices.Equal(got, want) {
				t.Errorf("challenge scope = %v, want %v (%q)", got, want, www)
			}
			if strings.Contains(ex.body, canary) {
				t.Errorf("body leaks data: %s", ex.body)
			}
		})
	}
}
