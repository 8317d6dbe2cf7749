package oauth_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
	"github.com/neemias/neemias-mcp/internal/tokens"
)

// TestExtraResources: with Options.ExtraResources the server acts as the identity provider
// of another Neemias server (in external provider mode). A `resource` naming that server, in
// any equivalent form, gets a token whose aud is exactly the configured entry, the consent
// page names it, refreshes keep it, a refresh cannot switch it to this server, this server's
// own /mcp refuses the token, and revoking it revokes its grant. Without a resource the
// token is for this server, as always; a resource that is neither stays invalid_target.
func TestExtraResources(t *testing.T) {
	t.Parallel()
	const other = "https://mcp.other-church.example/mcp"
	e := newEnv(t, oauth.Options{ExtraResources: []string{other}})
	c := oauthtest.RegisterPublic(t, e.base, "http://127.0.0.1:4567/callback")

	authorize := func(resource string) (oauthtest.Flow, string) {
		t.Helper()
		verifier, challenge := oauthtest.NewPKCE()
		f := oauthtest.NewBrowser(t).Authorize(oauthtest.Request{
			ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: "roster:read", Challenge: challenge, Resource: resource,
		}, e.bases(), seed.DemoAdminEmail, seed.DemoPassword, "approve")
		code := f.Callback.Query().Get("code")
		if code == "" {
			t.Fatalf("no code in %s", f.Final.Location)
		}
		tok := oauthtest.Exchange(t, e.base, c, code, verifier)
		if tok.Status != http.StatusOK {
			t.Fatalf("exchange for resource %q: %+v", resource, tok)
		}
		return f, tok.AccessToken + " " + tok.RefreshToken
	}
	audOf := func(tok string) string {
		_, p := oauthtest.JWT(t, tok)
		b, _ := json.Marshal(p["aud"])
		return string(b)
	}
	only := func(aud string) string { return `"` + aud + `"` } // one audience, as a JSON string

	// Upper-case host, default port, trailing slash: the same resource; aud is the entry.
	f, pair := authorize("https://MCP.other-church.example:443/mcp/")
	at, rt, _ := strings.Cut(pair, " ")
	if aud := audOf(at); aud != only(other) {
		t.Fatalf("aud = %v, want %s", aud, other)
	}
	if !strings.Contains(f.Consent.Body, `id="resource"`) || !strings.Contains(f.Consent.Body, other) {
		t.Errorf("the consent page does not name the other server:\n%s", oauthtest.Snippet(f.Consent.Body))
	}
	if status, _, _ := oauthtest.ReadRoster(t, e.base, at); status != http.StatusUnauthorized {
		t.Errorf("this server's /mcp with a token for the other server: %d, want 401", status)
	}
	if r := oauthtest.Refresh(t, e.base, c, rt, url.Values{"resource": {e.base + "/mcp"}}); r.Error != "invalid_target" {
		t.Errorf("refresh switching to this server's resource: %+v, want invalid_target", r)
	}
	r := oauthtest.Refresh(t, e.base, c, rt, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("refresh: %+v", r)
	}
	if aud := audOf(r.AccessToken); aud != only(other) {
		t.Errorf("refreshed aud = %v, want %s", aud, other)
	}
	// RFC 7009 revocation of the other server's access token revokes its grant.
	resp, err := http.PostForm(e.base+"/revoke", url.Values{"token": {r.AccessToken}, "client_id": {c.ID}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("revocation: %d", resp.StatusCode)
	}
	if n := e.count(`SELECT count(*) FROM oauth_grants WHERE revoked_reason = 'revoked'`); n != 1 {
		t.Errorf("revoked grants after revoking the other server's access token: %d, want 1", n)
	}

	// No resource: this server's own endpoint, unchanged.
	_, pair = authorize("")
	at, _, _ = strings.Cut(pair, " ")
	if aud := audOf(at); aud != only(e.base+"/mcp") {
		t.Errorf("aud without resource = %v, want %s/mcp", aud, e.base)
	}
	if status, _, _ := oauthtest.ReadRoster(t, e.base, at); status != http.StatusOK {
		t.Errorf("own /mcp with an own token: %d", status)
	}

	// Neither this server nor an extra resource.
	_, challenge := oauthtest.NewPKCE()
	p := oauthtest.NewBrowser(t).Get(oauthtest.Request{
		ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: "roster:read", State: "s", Challenge: challenge,
		Resource: "https://mcp.other-church.example/mcp-evil",
	}.URL(e.base))
	errorRedirect(t, p, c.RedirectURI, "invalid_target", "s", e.base)
}

// TestExtraResourcesValidated: entries must be absolute URLs other than this server's own.
func TestExtraResourcesValidated(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	const base = "http://127.0.0.1:8080"
	cfg := func(extra ...string) oauth.Config {
		return oauth.Config{Issuer: base, Resource: base + "/mcp", Store: st, Keys: &tokens.KeyStore{Pool: st.Pool()},
			Options: oauth.Options{ExtraResources: extra}}
	}
	if _, err := oauth.New(cfg("https://x.example/mcp")); err != nil {
		t.Fatalf("a valid extra resource: %v", err)
	}
	for _, bad := range []string{"/mcp", "x.example/mcp", "https://x.example/mcp?q=1", "https://x.example/mcp#f", base + "/mcp/", "HTTP://127.0.0.1:8080/mcp"} {
		if _, err := oauth.New(cfg(bad)); err == nil {
			t.Errorf("ExtraResources %q accepted", bad)
		}
	}
}
