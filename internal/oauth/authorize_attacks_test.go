package oauth_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/seed"
)

// TestAuthorizeRefusals is checklist 1E at /authorize (O01–O03, O10–O14, O16, O22, O24):
// before the client and its redirect URI are established every refusal is an HTML error page
// with no Location at all; after, the error goes to the registered redirect URI with state
// and exactly one iss. Nothing is stored for a refused request.
func TestAuthorizeRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{})
	native := oauthtest.RegisterPublic(t, e.base, "http://127.0.0.1:3000/cb")
	status, out := oauthtest.Register(t, e.base, map[string]any{
		"client_name": "Web", "redirect_uris": []string{"https://legit.example/cb"}, "token_endpoint_auth_method": "none",
	})
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, out)
	}
	web := out["client_id"].(string)
	_, challenge := oauthtest.NewPKCE()
	ok := oauthtest.Request{ClientID: native.ID, RedirectURI: native.RedirectURI, Scope: "roster:read", State: "s1", Challenge: challenge}
	with := func(f func(r *oauthtest.Request)) oauthtest.Request { r := ok; f(&r); return r }
	webReq := func(redirect string) oauthtest.Request {
		return oauthtest.Request{ClientID: web, RedirectURI: redirect, State: "s1", Challenge: challenge}
	}

	pages := []struct {
		name string
		req  oauthtest.Request
	}{
		// O10: redirect URI mismatch and open-redirect attempts.
		{"unregistered redirect URI", webReq("https://evil.example/cb")},
		{"extra path segment", webReq("https://legit.example/cb/x")},
		{"added query", webReq("https://legit.example/cb?x=1")},
		{"trailing slash", webReq("https://legit.example/cb/")},
		{"userinfo trick", webReq("https://legit.example@evil.example/cb")},
		{"subdomain trick", webReq("https://legit.example.evil.example/cb")},
		{"percent-encoded path", webReq("https://legit.example/%63b")},
		{"other port on a non-loopback host", webReq("https://legit.example:8443/cb")},
		{"http instead of https", webReq("http://legit.example/cb")},
		// O12: loopback matches any port, nothing else.
		{"loopback: localhost is not 127.0.0.1", with(func(r *oauthtest.Request) { r.RedirectURI = "http://localhost:3000/cb" })},
		{"loopback: 127.0.0.2", with(func(r *oauthtest.Request) { r.RedirectURI = "http://127.0.0.2:3000/cb" })},
		{"loopback: [::1]", with(func(r *oauthtest.Request) { r.RedirectURI = "http://[::1]:3000/cb" })},
		{"loopback: https is not http", with(func(r *oauthtest.Request) { r.RedirectURI = "https://127.0.0.1:3000/cb" })},
		{"loopback: other path", with(func(r *oauthtest.Request) { r.RedirectURI = "http://127.0.0.1:3000/cb2" })},
		{"missing redirect URI", with(func(r *oauthtest.Request) { r.RedirectURI = "" })},
		// O11: unknown or missing client.
		{"unknown client", with(func(r *oauthtest.Request) { r.ClientID = "AAAAAAAAAAAAAAAAAAAAAAAA" })},
		{"missing client_id", with(func(r *oauthtest.Request) { r.ClientID = "" })},
		{"repeated parameter", with(func(r *oauthtest.Request) { r.Extra = url.Values{"state": {"a", "b"}} })},
	}
	before := e.count(`SELECT count(*) FROM oauth_auth_requests`)
	for _, tc := range pages {
		t.Run(tc.name, func(t *testing.T) {
			p := oauthtest.NewBrowser(t).Get(tc.req.URL(e.base))
			noRedirect(t, p, http.StatusBadRequest)
			if p.Header.Get("X-Frame-Options") != "DENY" || p.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("headers %v", p.Header)
			}
		})
	}

	redirects := []struct {
		name    string
		req     oauthtest.Request
		wantErr string
	}{
		// O01–O03: PKCE is required, S256 only, well-formed.
		{"no code_challenge", with(func(r *oauthtest.Request) { r.Challenge = "-" }), "invalid_request"},
		{"plain method", with(func(r *oauthtest.Request) { r.Method = "plain" }), "invalid_request"},
		{"method omitted (would default to plain)", with(func(r *oauthtest.Request) { r.Method = "-" }), "invalid_request"},
		{"unsupported method S512", with(func(r *oauthtest.Request) { r.Method = "S512" }), "invalid_request"},
		{"challenge too short", with(func(r *oauthtest.Request) { r.Challenge = challenge[:42] }), "invalid_request"},
		{"challenge with +/=", with(func(r *oauthtest.Request) { r.Challenge = "+" + challenge[1:42] + "=" }), "invalid_request"},
		// O14: no implicit flow.
		{"response_type token", with(func(r *oauthtest.Request) { r.Extra = url.Values{"response_type": {"token"}} }), "unsupported_response_type"},
		{"response_type id_token token", with(func(r *oauthtest.Request) { r.Extra = url.Values{"response_type": {"id_token token"}} }), "unsupported_response_type"},
		// O16: the resource must be this server.
		{"resource of another server", with(func(r *oauthtest.Request) { r.Resource = "https://other.example/mcp" }), "invalid_target"},
		{"resource on a path prefix", with(func(r *oauthtest.Request) { r.Resource = e.base + "/mcp-evil" }), "invalid_target"},
		{"relative resource", with(func(r *oauthtest.Request) { r.Resource = "/mcp" }), "invalid_target"},
		{"resource with fragment", with(func(r *oauthtest.Request) { r.Resource = e.base + "/mcp#x" }), "invalid_target"},
		{"javascript: resource", with(func(r *oauthtest.Request) { r.Resource = "javascript:alert(1)" }), "invalid_target"},
		{"two resources", with(func(r *oauthtest.Request) {
			r.Extra = url.Values{"resource": {e.base + "/mcp", "https://other.example/mcp"}}
		}), "invalid_target"},
		// O13: prompt=none cannot be satisfied without a login session.
		{"prompt=none", with(func(r *oauthtest.Request) { r.Extra = url.Values{"prompt": {"none"}} }), "interaction_required"},
		{"request object", with(func(r *oauthtest.Request) { r.Extra = url.Values{"request": {"eyJhbGciOiJub25lIn0.e30."}} }), "request_not_supported"},
	}
	for _, tc := range redirects {
		t.Run(tc.name, func(t *testing.T) {
			p := oauthtest.NewBrowser(t).Get(tc.req.URL(e.base))
			errorRedirect(t, p, native.RedirectURI, tc.wantErr, "s1", e.base)
		})
	}
	if after := e.count(`SELECT count(*) FROM oauth_auth_requests`); after != before {
		t.Errorf("refused requests stored %d authorization requests", after-before)
	}

	// Accepted equivalents of the resource and of a loopback redirect URI.
	for _, tc := range []struct {
		name string
		req  oauthtest.Request
	}{
		{"resource with trailing slash", with(func(r *oauthtest.Request) { r.Resource = e.base + "/mcp/" })},
		{"resource with upper-case host", with(func(r *oauthtest.Request) { r.Resource = strings.Replace(e.base, "http://", "HTTP://", 1) + "/mcp" })},
		{"the /sse alias", with(func(r *oauthtest.Request) { r.Resource = e.base + "/sse" })},
		{"loopback on another port", with(func(r *oauthtest.Request) { r.RedirectURI = "http://127.0.0.1:61234/cb" })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := oauthtest.NewBrowser(t).Get(tc.req.URL(e.base))
			if p.Status != http.StatusFound || !strings.HasPrefix(p.Location, e.base+"/login?id=") {
				t.Errorf("want the login page, got %d %q", p.Status, p.Location)
			}
		})
	}
}

// TestBrowserBindingAndCSRF is O23 and the cookie rules: the login and consent pages accept
// only the browser that started the request, forms need the CSRF token bound to it, a GET
// never decides, and a decision cannot be replayed. The binding cookie is HttpOnly,
// SameSite=Lax (and Secure on an https issuer).
func TestBrowserBindingAndCSRF(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{})
	c := oauthtest.RegisterPublic(t, e.base, "http://127.0.0.1:3000/cb")
	_, challenge := oauthtest.NewPKCE()
	req := oauthtest.Request{ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: "roster:read", State: "s", Challenge: challenge}

	b := oauthtest.NewBrowser(t)
	start := b.Get(req.URL(e.base))
	if len(start.Cookies) != 1 || !start.Cookies[0].HttpOnly || start.Cookies[0].SameSite != http.SameSiteLaxMode || start.Cookies[0].Secure {
		t.Fatalf("binding cookie: %+v", start.Cookies)
	}
	login := b.Get(start.Location)
	id, csrf := oauthtest.Hidden(login.Body, "id"), oauthtest.Hidden(login.Body, "csrf")
	creds := url.Values{"id": {id}, "email": {seed.DemoAdminEmail}, "password": {seed.DemoPassword}}

	// Another browser (the attacker's link to the victim, or the victim's id in the attacker's hands).
	other := oauthtest.NewBrowser(t)
	noRedirect(t, other.Get(start.Location), http.StatusBadRequest)
	noRedirect(t, other.PostForm(e.base+"/login", withCSRF(creds, csrf)), http.StatusBadRequest)
	// No or a wrong CSRF token.
	noRedirect(t, b.PostForm(e.base+"/login", creds), http.StatusForbidden)
	noRedirect(t, b.PostForm(e.base+"/login", withCSRF(creds, otherToken(csrf))), http.StatusForbidden)
	// The consent page before login goes back to the login.
	if p := b.Get(e.base + "/consent?id=" + id); p.Status != http.StatusSeeOther || !strings.Contains(p.Location, "/login?id=") {
		t.Errorf("consent before login: %d %q", p.Status, p.Location)
	}
	// A wrong password, then the right one.
	bad := b.PostForm(e.base+"/login", url.Values{"id": {id}, "csrf": {csrf}, "email": {seed.DemoAdminEmail}, "password": {"wrong"}})
	if bad.Status != http.StatusUnauthorized || !strings.Contains(bad.Body, `id="login-error"`) {
		t.Errorf("wrong password: %d", bad.Status)
	}
	after := b.PostForm(e.base+"/login", withCSRF(creds, csrf))
	if after.Status != http.StatusSeeOther {
		t.Fatalf("login: %d %s", after.Status, oauthtest.Snippet(after.Body))
	}
	consent := b.Get(after.Location)
	decide := url.Values{"id": {id}, "action": {"approve"}}
	if p := b.Get(after.Location + "&action=approve"); p.Status != http.StatusOK || p.Location != "" {
		t.Errorf("a GET of the consent page must only show it: %d %q", p.Status, p.Location)
	}
	noRedirect(t, b.PostForm(e.base+"/consent", decide), http.StatusForbidden)
	noRedirect(t, other.PostForm(e.base+"/consent", withCSRF(decide, oauthtest.Hidden(consent.Body, "csrf"))), http.StatusBadRequest)
	// A second, concurrent request of the same browser has its own token.
	start2 := b.Get(req.URL(e.base))
	login2 := b.Get(start2.Location)
	noRedirect(t, b.PostForm(e.base+"/consent", withCSRF(decide, oauthtest.Hidden(login2.Body, "csrf"))), http.StatusForbidden)
	if n := e.count(`SELECT count(*) FROM oauth_codes`); n != 0 {
		t.Fatalf("%d codes issued before a valid consent", n)
	}
	ok := b.PostForm(e.base+"/consent", withCSRF(decide, oauthtest.Hidden(consent.Body, "csrf")))
	if ok.Status != http.StatusSeeOther || !strings.Contains(ok.Location, "code=") {
		t.Fatalf("consent: %d %q", ok.Status, ok.Location)
	}
	// Replayed decision.
	noRedirect(t, b.PostForm(e.base+"/consent", withCSRF(decide, oauthtest.Hidden(consent.Body, "csrf"))), http.StatusBadRequest)
	if n := e.count(`SELECT count(*) FROM oauth_codes`); n != 1 {
		t.Errorf("%d codes, want 1", n)
	}

	// Behind https (the issuer is https) the cookie is also Secure and __Host- prefixed.
	tls := newEnvOn(t, e.st, "https://mcp.igreja.example", oauth.Options{})
	p := oauthtest.NewBrowser(t).Get(req.URL(tls.base))
	if len(p.Cookies) != 1 || !p.Cookies[0].Secure || !strings.HasPrefix(p.Cookies[0].Name, "__Host-") || p.Cookies[0].Path != "/" ||
		!strings.HasPrefix(p.Location, "https://mcp.igreja.example/login?id=") {
		t.Errorf("https issuer: cookie %+v, Location %q", p.Cookies, p.Location)
	}

	// Deny: access_denied to the client with state and iss; recorded.
	f := oauthtest.NewBrowser(t).Authorize(req, e.bases(), seed.DemoAdminEmail, seed.DemoPassword, "deny")
	errorRedirect(t, f.Final, c.RedirectURI, "access_denied", "s", e.base)
	if n := e.count(`SELECT count(*) FROM oauth_consents WHERE decision = 'denied'`); n != 1 {
		t.Errorf("denied consents recorded: %d", n)
	}
}

// TestLoginAttempts: wrong passwords count against the request (then it is dead), an unknown
// email behaves like a wrong password, and a disabled account cannot log in.
func TestLoginAttempts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{})
	c := oauthtest.RegisterPublic(t, e.base, "http://127.0.0.1:3000/cb")
	_, challenge := oauthtest.NewPKCE()
	b := oauthtest.NewBrowser(t)
	start := b.Get(oauthtest.Request{ClientID: c.ID, RedirectURI: c.RedirectURI, Challenge: challenge}.URL(e.base))
	login := b.Get(start.Location)
	form := func(email, pw string) url.Values {
		return url.Values{"id": {oauthtest.Hidden(login.Body, "id")}, "csrf": {oauthtest.Hidden(login.Body, "csrf")}, "email": {email}, "password": {pw}}
	}
	e.exec(`UPDATE users SET disabled_at = now() WHERE id = $1`, seed.DemoCadastroID)
	for i, f := range []url.Values{
		form("nobody@nowhere.example", "demo"), form(seed.DemoAdminEmail, "Demo"), form(seed.DemoCadastroEmail, seed.DemoPassword),
		form(seed.DemoAdminEmail, ""), form(strings.Repeat("a", 400)+"@x.example", "demo"),
	} {
		if p := b.PostForm(e.base+"/login", f); p.Status != http.StatusUnauthorized || !strings.Contains(p.Body, "E-mail ou senha incorretos") {
			t.Errorf("attempt %d: %d", i, p.Status)
		}
	}
	// The fifth failure used up the request: even the right password is refused now.
	if p := b.PostForm(e.base+"/login", form(seed.DemoAdminEmail, seed.DemoPassword)); p.Status != http.StatusForbidden {
		t.Errorf("after %d failures: %d", oauth.MaxLoginFailures, p.Status)
	}
}

func withCSRF(v url.Values, csrf string) url.Values {
	out := url.Values{"csrf": {csrf}}
	for k, vs := range v {
		out[k] = vs
	}
	return out
}

// otherToken returns a token of the same length that differs from tok in its first character
// (replacing it with a fixed letter would leave it unchanged when it already was that letter).
func otherToken(tok string) string {
	if strings.HasPrefix(tok, "x") {
		return "y" + tok[1:]
	}
	return "x" + tok[1:]
}
