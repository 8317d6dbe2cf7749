package oauth_test

import (
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/seed"
)

// TestAuthorizationCodeFlow is the whole flow a native MCP client runs, over real HTTP with a
// cookie-jar browser: register (DCR), authorize with PKCE S256 and an equivalent form of the
// resource, log in, consent, redeem the code, call /mcp within the granted scope (200) and
// outside it (403 insufficient_scope), refresh.
func TestAuthorizationCodeFlow(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{})
	c := oauthtest.RegisterPublic(t, e.base, "http://127.0.0.1:4567/callback")
	c.RedirectURI = "http://127.0.0.1:9999/callback" // loopback: any port (RFC 8252 §7.3)
	verifier, challenge := oauthtest.NewPKCE()
	b := oauthtest.NewBrowser(t)
	f := b.Authorize(oauthtest.Request{
		ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: "roster:read", State: "estado-1",
		Challenge: challenge, Resource: e.base + "/mcp/", // trailing-slash form of the resource
	}, e.bases(), seed.DemoAdminEmail, seed.DemoPassword, "approve")

	for _, id := range []string{`id="email"`, `id="password"`, `id="login-submit"`} {
		if !strings.Contains(f.Login.Body, id) {
			t.Errorf("login page lacks %s", id)
		}
	}
	for _, want := range []string{`id="consent-approve"`, `id="consent-deny"`, "Cliente de teste", "127.0.0.1:9999",
		scopeText(t, "roster:read").Pt, scopeText(t, "roster:read").En} {
		if !strings.Contains(f.Consent.Body, want) {
			t.Errorf("consent page lacks %q", want)
		}
	}
	if strings.Contains(f.Consent.Body, "lgpd-warning") || strings.Contains(f.Consent.Body, "autoridade legal") {
		t.Error("an LGPD warning is shown although no sensitive scope was requested")
	}
	for _, p := range []oauthtest.Page{f.Login, f.Consent} {
		if p.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(p.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
			p.Header.Get("Access-Control-Allow-Origin") != "" || p.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("page headers: %v", p.Header)
		}
	}

	cb := f.Callback
	q := cb.Query()
	if cb.Host != "127.0.0.1:9999" || cb.Path != "/callback" || q.Get("state") != "estado-1" || q.Get("iss") != e.base || q.Get("code") == "" {
		t.Fatalf("callback %s: want the registered path on the requested port, state, iss and a code", f.Final.Location)
	}

	tok := oauthtest.Exchange(t, e.base, c, q.Get("code"), verifier)
	if tok.Status != http.StatusOK || tok.TokenType != "Bearer" || tok.Scope != "roster:read" || tok.RefreshToken == "" ||
		tok.ExpiresIn <= 0 || tok.ExpiresIn > 600 || tok.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("token response: %+v", tok)
	}
	h, p := oauthtest.JWT(t, tok.AccessToken)
	if h["typ"] != "at+jwt" || h["alg"] != "RS256" || h["kid"] == "" {
		t.Errorf("access token header %v", h)
	}
	aud, _ := json.Marshal(p["aud"])
	if p["iss"] != e.base || !strings.Contains(string(aud), `"`+e.base+`/mcp"`) || p["sub"] != seed.DemoAdminID.String() ||
		p["church_id"] != seed.DemoChurchID.String() || p["role"] != "ADMIN" || p["scope"] != "roster:read" ||
		p["client_id"] != c.ID || p["grant_id"] == nil || p["jti"] == nil || p["exp"].(float64)-p["iat"].(float64) > 600 {
		t.Errorf("access token claims %v", p)
	}
	for k := range p {
		if k == "email" || k == "name" {
			t.Errorf("the access token carries personal data: %s", k)
		}
	}

	if status, _, body := oauthtest.ReadRoster(t, e.base, tok.AccessToken); status != http.StatusOK || !strings.Contains(body, "total_children") {
		t.Errorf("roster read within scope: %d %s", status, oauthtest.Snippet(body))
	}
	status, www, body := oauthtest.MCP(t, e.base, tok.AccessToken, "tools/call", map[string]any{
		"name": "neemias_checkin_register", "arguments": map[string]any{"child_id": seed.DemoChurchID.String()},
	})
	if status != http.StatusForbidden || !strings.Contains(www, `error="insufficient_scope"`) || !strings.Contains(www, "checkins:write") {
		t.Errorf("tool call outside scope: %d %q %s", status, www, oauthtest.Snippet(body))
	}

	ref := oauthtest.Refresh(t, e.base, c, tok.RefreshToken, url.Values{"resource": {e.base + "/mcp"}})
	if ref.Status != http.StatusOK || ref.RefreshToken == "" || ref.RefreshToken == tok.RefreshToken || ref.Scope != "roster:read" {
		t.Fatalf("refresh: %+v", ref)
	}
	if status, _, _ := oauthtest.ReadRoster(t, e.base, ref.AccessToken); status != http.StatusOK {
		t.Errorf("roster read with the refreshed token: %d", status)
	}
	if n := e.count(`SELECT count(*) FROM oauth_consents WHERE client_id = $1 AND decision = 'approved' AND scopes = '{roster:read}'`, c.ID); n != 1 {
		t.Errorf("consent records: %d, want 1", n)
	}
	// No secret of the flow reaches the log.
	logs := e.logs.String()
	for _, secret := range []string{tok.AccessToken, tok.RefreshToken, ref.RefreshToken, q.Get("code"), verifier, seed.DemoPassword + `"`} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log contains a secret of the flow: %q", oauthtest.Snippet(secret))
		}
	}
}

// TestConsentPage pins what the consent page shows: the LGPD warning when children:read is
// requested (every sensitive scope's: TestConsentWarnsForEverySensitiveScope), the scopes the
// role cannot hold apart, the localhost note, the client's name escaped.
func TestConsentPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{})
	status, out := oauthtest.Register(t, e.base, map[string]any{
		"client_name": `<img src=x onerror=alert(1)>`, "redirect_uris": []string{"http://localhost:3000/cb"},
		"token_endpoint_auth_method": "none",
	})
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, out)
	}
	c := oauthtest.Client{ID: out["client_id"].(string), RedirectURI: "http://localhost:3000/cb"}

	consent := func(scope, email string) string {
		_, challenge := oauthtest.NewPKCE()
		b := oauthtest.NewBrowser(t)
		start := b.Get(oauthtest.Request{ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: scope, Challenge: challenge}.URL(e.base))
		login := b.Get(start.Location)
		after := b.PostForm(e.base+"/login", url.Values{"id": {oauthtest.Hidden(login.Body, "id")}, "csrf": {oauthtest.Hidden(login.Body, "csrf")},
			"email": {email}, "password": {seed.DemoPassword}})
		p := b.Get(after.Location)
		if p.Status != http.StatusOK {
			t.Fatalf("consent page: %d %s", p.Status, oauthtest.Snippet(p.Body))
		}
		return p.Body
	}

	withChildren := consent("roster:read children:read", seed.DemoAdminEmail)
	if !strings.Contains(withChildren, `<p class="lgpd-warning" data-scope="children:read">⚠️ Este aplicativo solicita acesso a dados pessoais de crianças. Você tem autoridade legal para conceder este acesso?</p>`) {
		t.Errorf("children:read requested: the LGPD warning is missing or reworded")
	}
	for _, s := range []string{"roster:read", "children:read"} {
		if !strings.Contains(withChildren, template.HTMLEscapeString(scopeText(t, s).Pt)) || !strings.Contains(withChildren, template.HTMLEscapeString(scopeText(t, s).En)) {
			t.Errorf("scope %s not listed in Portuguese and English", s)
		}
	}
	if !strings.Contains(withChildren, `id="localhost-note"`) || !strings.Contains(withChildren, "localhost:3000") {
		t.Error("a localhost redirect URI is not pointed out")
	}
	if strings.Contains(withChildren, "<img src=x") || !strings.Contains(withChildren, "&lt;img src=x onerror=alert(1)&gt;") {
		t.Error("the client name is not escaped")
	}

	without := consent("roster:read", seed.DemoAdminEmail)
	if strings.Contains(without, "lgpd-warning") || strings.Contains(without, "Você tem autoridade legal") {
		t.Error("the LGPD warning is shown without children:read")
	}

	// A volunteer cannot hold guardians:read: it is listed apart, not granted.
	vol := consent("roster:read guardians:read", seed.DemoVoluntarioEmail)
	i := strings.Index(vol, `id="unavailable-scopes"`)
	if i < 0 || !strings.Contains(vol[i:], `data-scope="guardians:read"`) || strings.Contains(vol[:i], `data-scope="guardians:read"`) {
		t.Error("guardians:read should be listed as unavailable to a volunteer")
	}
}

// TestGrantedScopes: granted = requested ∩ the role's scopes; an empty request gets the
// role's non-sensitive scopes; the access token never carries more than the role allows.
func TestGrantedScopes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{})
	c := oauthtest.RegisterPublic(t, e.base, "http://127.0.0.1:5000/cb")
	cases := []struct {
		name, email, scope, want string
	}{
		{"intersection", seed.DemoVoluntarioEmail, "roster:read guardians:read children:write", "roster:read"},
		{"all of the role", seed.DemoCadastroEmail, "roster:read attendance:read checkins:read checkins:write children:read children:write guardians:read",
			"roster:read checkins:read checkins:write children:read children:write guardians:read"},
		{"empty scope: the role's non-sensitive scopes", seed.DemoResponsavelEmail, "", "checkins:read checkins:write"},
		{"only unknown scopes: the default too", seed.DemoAdminEmail, "mcp:everything", "roster:read attendance:read checkins:read checkins:write"},
		{"openid only: no data scope", seed.DemoAdminEmail, "openid", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tok, _ := e.grant(t, c, tc.email, tc.scope)
			if !sameScopes(tok.Scope, tc.want) {
				t.Errorf("granted %q, want %q", tok.Scope, tc.want)
			}
			_, p := oauthtest.JWT(t, tok.AccessToken)
			if !sameScopes(p["scope"].(string), tc.want) {
				t.Errorf("token scope %q, want %q", p["scope"], tc.want)
			}
			if strings.Contains(tc.scope, "openid") && tok.IDToken == "" {
				t.Error("openid requested but no ID token")
			}
		})
	}
}

// TestClientIDMetadataDocument: an https client_id is resolved through the fetcher and its
// document validated; URLs that cannot be metadata documents are refused without a fetch.
func TestClientIDMetadataDocument(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{})
	const id = "https://client.example/oauth/client-metadata.json"
	e.cimd.put(&oauth.ClientMetadata{ClientID: id, ClientName: "Cliente CIMD", RedirectURIs: []string{"http://127.0.0.1:7777/cb"},
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"}, TokenEndpointAuthMethod: "none"})
	e.cimd.put(&oauth.ClientMetadata{ClientID: "https://client.example/other.json", RedirectURIs: []string{"http://127.0.0.1:7777/cb"}})
	e.cimd.docs["https://client.example/mismatch.json"] = &oauth.ClientMetadata{ClientID: "https://client.example/mismatch.json/", RedirectURIs: []string{"http://127.0.0.1:7777/cb"}}
	e.cimd.put(&oauth.ClientMetadata{ClientID: "https://client.example/js.json", RedirectURIs: []string{"javascript:alert(1)//"}})
	e.cimd.put(&oauth.ClientMetadata{ClientID: "https://client.example/secret.json", RedirectURIs: []string{"http://127.0.0.1:7777/cb"}, TokenEndpointAuthMethod: "client_secret_basic"})

	c := oauthtest.Client{ID: id, RedirectURI: "http://127.0.0.1:7777/cb"}
	tok, f := e.grant(t, c, seed.DemoAdminEmail, "roster:read")
	if !strings.Contains(f.Consent.Body, "Cliente CIMD") || !strings.Contains(f.Consent.Body, `id="client-host"`) || !strings.Contains(f.Consent.Body, "client.example") {
		t.Error("the consent page does not show the metadata document's host")
	}
	if _, p := oauthtest.JWT(t, tok.AccessToken); p["client_id"] != id {
		t.Errorf("client_id claim %v", p["client_id"])
	}

	_, challenge := oauthtest.NewPKCE()
	refused := []struct{ name, clientID, redirect string }{
		{"document for another client_id", "https://client.example/mismatch.json", "http://127.0.0.1:7777/cb"},
		{"unsafe redirect scheme in the document", "https://client.example/js.json", "javascript:alert(1)//"},
		{"shared-secret auth method", "https://client.example/secret.json", "http://127.0.0.1:7777/cb"},
		{"redirect URI not in the document", "https://client.example/other.json", "http://127.0.0.1:7777/elsewhere"},
		{"no document", "https://client.example/none.json", "http://127.0.0.1:7777/cb"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			p := oauthtest.NewBrowser(t).Get(oauthtest.Request{ClientID: tc.clientID, RedirectURI: tc.redirect, Challenge: challenge}.URL(e.base))
			noRedirect(t, p, http.StatusBadRequest)
		})
	}

	before := e.cimd.fetches()
	for _, bad := range []string{
		"http://client.example/meta.json", "https://client.example", "https://client.example/",
		"https://client.example/meta.json?return=/x", "https://client.example/meta.json#f",
		"https://user@client.example/meta.json", "https://client.example/a/../meta.json", "https://client.example/./meta.json",
		"https://client.example/%2e%2e/meta.json", "HTTPS://client.example/meta.json",
	} {
		p := oauthtest.NewBrowser(t).Get(oauthtest.Request{ClientID: bad, RedirectURI: "http://127.0.0.1:7777/cb", Challenge: challenge}.URL(e.base))
		noRedirect(t, p, http.StatusBadRequest)
	}
	if n := e.cimd.fetches() - before; n != 0 {
		t.Errorf("%d fetches for client_ids that cannot be metadata documents", n)
	}
}

// TestMetadata: RFC 8414 and OpenID Connect discovery, with what MCP clients check.
func TestMetadata(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{})
	for _, path := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		req, _ := http.NewRequest(http.MethodGet, e.base+path, nil)
		req.Header.Set("Origin", "http://localhost:6274")
		req.Header.Set("X-Forwarded-Host", "evil.example") // never used
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s: %d, CORS %q", path, resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
		}
		want := map[string]any{
			"issuer": e.base, "authorization_endpoint": e.base + "/authorize", "token_endpoint": e.base + "/token",
			"registration_endpoint": e.base + "/register", "jwks_uri": e.base + "/jwks",
			"authorization_response_iss_parameter_supported": true, "client_id_metadata_document_supported": true,
		}
		for k, v := range want {
			if m[k] != v {
				t.Errorf("%s: %s = %v, want %v", path, k, m[k], v)
			}
		}
		for k, v := range map[string][]string{
			"code_challenge_methods_supported": {"S256"}, "response_types_supported": {"code"},
			"grant_types_supported": {"authorization_code", "refresh_token"},
		} {
			if got := strs(m[k]); !slices.Equal(got, v) {
				t.Errorf("%s: %s = %v, want %v", path, k, got, v)
			}
		}
	}
	// The key set verifies the access tokens: one RS256 signing key with a kid.
	resp, err := http.Get(e.base + "/jwks")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&set)
	if len(set.Keys) != 1 || set.Keys[0]["kty"] != "RSA" || set.Keys[0]["alg"] != "RS256" || set.Keys[0]["use"] != "sig" || set.Keys[0]["d"] != nil {
		t.Errorf("jwks: %v", set.Keys)
	}
	// Registration can be switched off.
	off := newEnvOn(t, e.st, "", oauth.Options{DisableRegistration: true})
	if status, _ := oauthtest.Register(t, off.base, map[string]any{"redirect_uris": []string{"http://127.0.0.1/cb"}}); status != http.StatusNotFound {
		t.Errorf("registration disabled: %d", status)
	}
}

func scopeText(t *testing.T, name string) scopes.Info {
	t.Helper()
	i, ok := scopes.Describe(name)
	if !ok {
		t.Fatalf("unknown scope %s", name)
	}
	return i
}

func sameScopes(a, b string) bool {
	x, y := strings.Fields(a), strings.Fields(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}
