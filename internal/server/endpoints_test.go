package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/seed"
)

// hostRequest sends method to endpoint (a URL whose host may be another loopback name of the
// server) over the server's real listener, with the endpoint's host as the Host header.
func hostRequest(t *testing.T, a *app, verb, endpoint, token string, body any) (int, http.Header, string) {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(verb, a.base+u.Path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = u.Host
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

var metadataParam = regexp.MustCompile(`resource_metadata="([^"]+)"`)

// TestEndpointAliasesCompleteOAuth: /mcp, /mcp/ and /sse, each under every loopback name of
// a loopback deployment (make run), are full endpoints: the 401 names metadata whose
// `resource` is exactly the URL used (RFC 9728 §3.3, trailing slash included), the
// authorization server issues a token for that resource (the issuer stays the public URL),
// the endpoint accepts it, and a 403 step-up challenge names the same metadata.
func TestEndpointAliasesCompleteOAuth(t *testing.T) {
	a := newApp(t)
	_, port, _ := strings.Cut(strings.TrimPrefix(a.base, "http://"), ":")
	c := oauthtest.RegisterPublic(t, a.base, "http://127.0.0.1:4567/callback")
	kid := a.one(t, `SELECT id::text FROM children WHERE church_id = $1 AND archived_at IS NULL ORDER BY id LIMIT 1`, seed.DemoChurchID)
	for _, host := range []string{"127.0.0.1", "localhost", "[::1]"} {
		for _, path := range []string{"/mcp", "/mcp/", "/sse"} {
			endpoint := "http://" + host + ":" + port + path
			t.Run(endpoint, func(t *testing.T) {
				status, h, _ := hostRequest(t, a, http.MethodPost, endpoint, "", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
				m := metadataParam.FindStringSubmatch(h.Get("WWW-Authenticate"))
				wantMeta := "http://" + host + ":" + port + "/.well-known/oauth-protected-resource" + path
				if status != http.StatusUnauthorized || m == nil || m[1] != wantMeta {
					t.Fatalf("401 challenge: %d %q, want resource_metadata=%s", status, h.Get("WWW-Authenticate"), wantMeta)
				}
				_, _, body := hostRequest(t, a, http.MethodGet, m[1], "", nil)
				var prm struct {
					Resource             string   `json:"resource"`
					AuthorizationServers []string `json:"authorization_servers"`
				}
				if err := json.Unmarshal([]byte(body), &prm); err != nil || prm.Resource != endpoint || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != a.base {
					t.Fatalf("metadata %s: %s; want resource %s and the public issuer %s", m[1], body, endpoint, a.base)
				}

				verifier, challenge := oauthtest.NewPKCE()
				f := oauthtest.NewBrowser(t).Authorize(oauthtest.Request{
					ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: "roster:read", Challenge: challenge, Resource: prm.Resource,
				}, oauthtest.Bases{Authorize: a.base, Login: a.base, Consent: a.base}, seed.DemoAdminEmail, seed.DemoPassword, "approve")
				tok := oauthtest.Exchange(t, a.base, c, f.Callback.Query().Get("code"), verifier)
				if tok.Status != http.StatusOK {
					t.Fatalf("exchange: %d %s %s", tok.Status, tok.Error, tok.ErrorDescription)
				}
				_, claims := oauthtest.JWT(t, tok.AccessToken)
				if aud, _ := claims["aud"].(string); strings.TrimSuffix(aud, "/") != strings.TrimSuffix(endpoint, "/") || claims["iss"] != a.base {
					t.Errorf("token aud %v iss %v, want the endpoint %s and the public issuer", claims["aud"], claims["iss"], endpoint)
				}
				read := map[string]any{"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": map[string]any{"uri": "neemias://roster/children"}}
				if status, _, body := hostRequest(t, a, http.MethodPost, endpoint, tok.AccessToken, read); status != http.StatusOK || !strings.Contains(body, "total_children") {
					t.Errorf("the roster at %s: %d %s", endpoint, status, oauthtest.Snippet(body))
				}
				if status, _, _ := hostRequest(t, a, http.MethodPost, a.base+"/mcp", tok.AccessToken, read); status != http.StatusOK {
					t.Errorf("the token for %s at the canonical endpoint: %d", endpoint, status)
				}
				child := map[string]any{"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": map[string]any{"uri": "neemias://roster/children/" + kid}}
				status, h, _ = hostRequest(t, a, http.MethodPost, endpoint, tok.AccessToken, child)
				if m := metadataParam.FindStringSubmatch(h.Get("WWW-Authenticate")); status != http.StatusForbidden || m == nil || m[1] != wantMeta {
					t.Errorf("403 step-up challenge: %d %q, want resource_metadata=%s", status, h.Get("WWW-Authenticate"), wantMeta)
				}
			})
		}
	}
	t.Run("another host", func(t *testing.T) {
		// A name that is not loopback gets the public URL's metadata (and /mcp refuses it).
		_, _, body := hostRequest(t, a, http.MethodGet, "http://evil.example:"+port+"/.well-known/oauth-protected-resource/sse", "", nil)
		if !strings.Contains(body, `"resource":"`+a.base+`/sse"`) {
			t.Errorf("metadata for Host evil.example: %s", body)
		}
		if status, _, _ := hostRequest(t, a, http.MethodPost, "http://evil.example:"+port+"/mcp", "", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}); status != http.StatusForbidden {
			t.Errorf("/mcp with Host evil.example: %d, want 403", status)
		}
		if status, _, _ := hostRequest(t, a, http.MethodPost, "http://localhost:1/mcp", "", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}); status != http.StatusUnauthorized {
			t.Errorf("/mcp with Host localhost:1: %d", status)
		}
		_, _, body = hostRequest(t, a, http.MethodGet, "http://localhost:1/.well-known/oauth-protected-resource", "", nil)
		if !strings.Contains(body, `"resource":"`+a.base+`/mcp"`) {
			t.Errorf("metadata for another port names %s, want the public URL", body)
		}
	})
	t.Run("unknown resource", func(t *testing.T) {
		_, challenge := oauthtest.NewPKCE()
		p := oauthtest.NewBrowser(t).Get(oauthtest.Request{ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: "roster:read", Challenge: challenge,
			Resource: "http://localhost:" + port + "/other"}.URL(a.base))
		if loc, _ := url.Parse(p.Location); loc == nil || loc.Query().Get("error") != "invalid_target" {
			t.Errorf("resource /other: %d %q, want invalid_target", p.Status, p.Location)
		}
	})
}
