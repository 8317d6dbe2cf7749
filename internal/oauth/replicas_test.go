package oauth_test

import (
	"net/http"
	"testing"

	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/seed"
)

// TestAnyReplicaServesAnyStep runs one flow across three independent server instances
// (server.New each, own listener, own memory) over one database, as replicas behind a load
// balancer: register at A, authorize at B, log in at C, consent (the code is issued) at A,
// redeem at B, refresh at C, call /mcp everywhere; a code replay at C revokes the tokens at
// A and B. (cmd/neemias-mcp's TestOAuthAcrossProcesses does the same with OS processes.)
func TestAnyReplicaServesAnyStep(t *testing.T) {
	t.Parallel()
	a := newEnv(t, oauth.Options{})
	b := newEnvOn(t, a.st, a.base, oauth.Options{})
	c := newEnvOn(t, a.st, a.base, oauth.Options{})

	client := oauthtest.RegisterPublic(t, a.base, "http://127.0.0.1:3000/cb")
	verifier, challenge := oauthtest.NewPKCE()
	f := oauthtest.NewBrowser(t).Authorize(oauthtest.Request{
		ClientID: client.ID, RedirectURI: client.RedirectURI, Scope: "roster:read", State: "r", Challenge: challenge,
	}, oauthtest.Bases{Authorize: b.base, Login: c.base, Consent: a.base}, seed.DemoAdminEmail, seed.DemoPassword, "approve")
	code := f.Callback.Query().Get("code")
	if f.Callback.Query().Get("iss") != a.base || code == "" {
		t.Fatalf("callback %s", f.Final.Location)
	}
	tok := oauthtest.Exchange(t, b.base, client, code, verifier)
	if tok.Status != http.StatusOK {
		t.Fatalf("redeem at B: %+v", tok)
	}
	ref := oauthtest.Refresh(t, c.base, client, tok.RefreshToken, nil)
	if ref.Status != http.StatusOK {
		t.Fatalf("refresh at C: %+v", ref)
	}
	for _, e := range []*env{a, b, c} {
		for _, at := range []string{tok.AccessToken, ref.AccessToken} {
			if status, _, body := oauthtest.ReadRoster(t, e.base, at); status != http.StatusOK {
				t.Errorf("/mcp at %s: %d %s", e.base, status, oauthtest.Snippet(body))
			}
		}
	}
	if r := oauthtest.Exchange(t, c.base, client, code, verifier); r.Error != "invalid_grant" {
		t.Fatalf("replay at C: %+v", r)
	}
	for _, e := range []*env{a, b} {
		if status, _, _ := oauthtest.ReadRoster(t, e.base, ref.AccessToken); status != http.StatusUnauthorized {
			t.Errorf("/mcp at %s after the replay: %d", e.base, status)
		}
	}
}
