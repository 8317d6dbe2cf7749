package oauth_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// TestUpstreamLogin logs in through an upstream OpenID Connect provider (zitadel/oidc rp),
// here another Neemias server acting as the church's identity provider: code + PKCE + state +
// nonce, ID token verified against the provider's JWKS, and the account mapped to a local
// user by issuer and subject only. The same email existing on both sides means nothing.
func TestUpstreamLogin(t *testing.T) {
	t.Parallel()
	idp := newEnv(t, oauth.Options{})
	ln := listen(t)
	here := "http://" + ln.Addr().String()
	status, out := oauthtest.Register(t, idp.base, map[string]any{
		"client_name": "Neemias (login)", "redirect_uris": []string{here + "/login/callback"},
		"token_endpoint_auth_method": "client_secret_basic",
	})
	if status != http.StatusCreated {
		t.Fatalf("register at the provider: %d %v", status, out)
	}
	st := storetest.NewSeeded(t, seed.Options{ChildrenPerChurch: 20, Months: 1})
	e := newEnvListening(t, ln, st, "", oauth.Options{Upstream: &oauth.Upstream{
		Issuer: idp.base, ClientID: out["client_id"].(string), ClientSecret: out["client_secret"].(string), Name: "Conta da Igreja",
	}})
	// The provider's admin is our CADASTRO user: the local account decides the role.
	if err := oauth.LinkUpstreamIdentity(context.Background(), e.st, idp.base, seed.DemoAdminID.String(), seed.DemoChurchID, seed.DemoCadastroID); err != nil {
		t.Fatal(err)
	}
	c := oauthtest.RegisterPublic(t, e.base, "http://127.0.0.1:3000/cb")

	// start runs our /authorize and the provider's login and consent, and returns the page the
	// provider's redirect back to us produces.
	start := func(b *oauthtest.Browser, email string, tamper func(string) string) (oauthtest.Page, string) {
		verifier, challenge := oauthtest.NewPKCE()
		p := b.Get(oauthtest.Request{ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: "roster:read", State: "u", Challenge: challenge}.URL(e.base))
		login := b.Get(p.Location)
		if !strings.Contains(login.Body, `id="login-upstream"`) || !strings.Contains(login.Body, "Conta da Igreja") {
			t.Fatal("the login page offers no upstream login")
		}
		toIdP := b.PostForm(e.base+"/login/upstream", url.Values{"id": {oauthtest.Hidden(login.Body, "id")}, "csrf": {oauthtest.Hidden(login.Body, "csrf")}})
		if toIdP.Status != http.StatusSeeOther || !strings.HasPrefix(toIdP.Location, idp.base+"/authorize?") {
			t.Fatalf("to the provider: %d %q", toIdP.Status, toIdP.Location)
		}
		q := mustQuery(t, toIdP.Location)
		if q.Get("code_challenge_method") != "S256" || q.Get("nonce") == "" || q.Get("state") == "" || q.Get("redirect_uri") != e.base+"/login/callback" {
			t.Errorf("upstream authorization request %v", q)
		}
		at := b.Get(toIdP.Location)
		idpLogin := b.Get(at.Location)
		after := b.PostForm(idp.base+"/login", url.Values{"id": {oauthtest.Hidden(idpLogin.Body, "id")}, "csrf": {oauthtest.Hidden(idpLogin.Body, "csrf")},
			"email": {email}, "password": {seed.DemoPassword}})
		consent := b.Get(after.Location)
		back := b.PostForm(idp.base+"/consent", url.Values{"id": {oauthtest.Hidden(consent.Body, "id")}, "csrf": {oauthtest.Hidden(consent.Body, "csrf")}, "action": {"approve"}})
		if back.Status != http.StatusSeeOther || !strings.HasPrefix(back.Location, e.base+"/login/callback?") {
			t.Fatalf("back from the provider: %d %q %s", back.Status, back.Location, oauthtest.Snippet(back.Body))
		}
		return b.Get(tamper(back.Location)), verifier
	}
	same := func(s string) string { return s }

	b := oauthtest.NewBrowser(t)
	cb, verifier := start(b, seed.DemoAdminEmail, same)
	if cb.Status != http.StatusSeeOther || !strings.Contains(cb.Location, "/consent?id=") {
		t.Fatalf("callback: %d %q %s", cb.Status, cb.Location, oauthtest.Snippet(cb.Body))
	}
	consent := b.Get(cb.Location)
	done := b.PostForm(e.base+"/consent", url.Values{"id": {oauthtest.Hidden(consent.Body, "id")}, "csrf": {oauthtest.Hidden(consent.Body, "csrf")}, "action": {"approve"}})
	code := mustQuery(t, done.Location).Get("code")
	tok := oauthtest.Exchange(t, e.base, c, code, verifier)
	if tok.Status != http.StatusOK {
		t.Fatalf("exchange: %+v", tok)
	}
	if _, p := oauthtest.JWT(t, tok.AccessToken); p["sub"] != seed.DemoCadastroID.String() || p["role"] != "CADASTRO" || p["iss"] != e.base {
		t.Errorf("token of the linked account: %v", p)
	}
	if n := e.count(`SELECT count(*) FROM oauth_codes WHERE amr = 'fed'`); n != 1 {
		t.Errorf("codes with amr fed: %d", n)
	}

	t.Run("unlinked account, although the email exists here", func(t *testing.T) {
		p, _ := start(oauthtest.NewBrowser(t), seed.DemoVoluntarioEmail, same)
		noRedirect(t, p, http.StatusForbidden)
	})
	t.Run("tampered state", func(t *testing.T) {
		p, _ := start(oauthtest.NewBrowser(t), seed.DemoAdminEmail, func(s string) string {
			return strings.Replace(s, "state=", "state=x", 1)
		})
		noRedirect(t, p, http.StatusBadRequest)
	})
	t.Run("callback in another browser", func(t *testing.T) {
		var loc string
		start(oauthtest.NewBrowser(t), seed.DemoAdminEmail, func(s string) string { loc = s; return strings.Replace(s, "state=", "nostate=", 1) })
		noRedirect(t, oauthtest.NewBrowser(t).Get(loc), http.StatusBadRequest)
	})
}

func mustQuery(t *testing.T, u string) url.Values {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return p.Query()
}
