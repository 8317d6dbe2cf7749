package oauth_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/tokens"
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

// TestSigningKeyRotation: after a rotation, replicas sign with the new key (as soon as they
// reload it, within a minute), tokens of the old key keep verifying everywhere, and the key
// set lists both.
func TestSigningKeyRotation(t *testing.T) {
	t.Parallel()
	a := newEnv(t, oauth.Options{})
	c := oauthtest.RegisterPublic(t, a.base, "http://127.0.0.1:3000/cb")
	old, _ := a.grant(t, c, seed.DemoAdminEmail, "roster:read")
	if _, err := (&tokens.KeyStore{Pool: a.st.Pool()}).Rotate(t.Context(), time.Hour); err != nil {
		t.Fatal(err)
	}
	b := newEnvOn(t, a.st, a.base, oauth.Options{}) // a replica that loads the key now
	fresh, _ := b.grant(t, c, seed.DemoAdminEmail, "roster:read")
	h1, _ := oauthtest.JWT(t, old.AccessToken)
	h2, _ := oauthtest.JWT(t, fresh.AccessToken)
	if h1["kid"] == h2["kid"] {
		t.Fatalf("still signing with %v after the rotation", h1["kid"])
	}
	for _, e := range []*env{a, b} {
		for _, at := range []string{old.AccessToken, fresh.AccessToken} {
			if status, _, _ := oauthtest.ReadRoster(t, e.base, at); status != http.StatusOK {
				t.Errorf("%s: a token verifies no more after the rotation: %d", e.base, status)
			}
		}
	}
	resp, err := http.Get(a.base + "/jwks")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var set struct{ Keys []map[string]any }
	_ = jsonDecode(resp, &set)
	if len(set.Keys) != 2 {
		t.Errorf("key set has %d keys, want the old and the new", len(set.Keys))
	}
}
