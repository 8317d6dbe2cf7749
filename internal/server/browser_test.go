package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/oauth/cimd"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/server"
	"github.com/neemias/neemias-mcp/internal/testsupport"
)

// TestBrowserOAuthFlow runs the authorization flow an MCP client runs, end to end, in a real
// headless Chromium driven over the DevTools protocol: discovery from the 401 of /mcp, a
// Client ID Metadata Document client (an https client_id served by a local TLS server) and a
// Dynamic Client Registration client, /authorize with PKCE S256, resource and state, the login
// page typed into, the consent page read as a person sees it (client name, redirect host,
// scopes in Portuguese and English, the LGPD warning exactly when children:read is asked for),
// the button clicked, the browser landing on the client's loopback redirect URI with code,
// state and iss, the code redeemed with the verifier, and MCP calls within the granted scopes
// (200) and outside them (403 insufficient_scope). Denying sends access_denied and no code.
// Full-page screenshots of the login and consent pages are written to $NEEMIAS_TEST_ARTIFACTS
// (else a temporary directory, logged).
func TestBrowserOAuthFlow(t *testing.T) {
	exe := chromiumPath(t)
	artifacts := artifactDir(t)
	shots := []string{"oauth-login.png", "oauth-consent-lgpd-warning.png", "oauth-consent.png"}
	for _, name := range shots { // never check a previous run's pictures
		if err := os.Remove(filepath.Join(artifacts, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	cb := newCallbackServer(t)
	docs := newMetadataDocServer(t)
	a := newAppWith(t, server.Config{AuthServer: oauth.Options{ClientMetadata: docs.fetcher(t)}})
	d := discover(t, a)
	kid := a.one(t, `SELECT id::text FROM children WHERE church_id = $1 AND archived_at IS NULL ORDER BY id LIMIT 1`, seed.DemoChurchID)

	cimdClient := docs.publish(map[string]any{
		"client_name":                "Assistente Ágape",
		"redirect_uris":              []string{cb.redirectURI},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"token_endpoint_auth_method": "none",
	})
	// The registered client's name is markup: the browser must show it as text.
	const dcrName = `Agenda <b>Kids</b> & "Cia"`
	dcrClient := d.register(t, dcrName, cb.redirectURI)

	br := newBrowser(t, ctx, exe)

	t.Run("CIMD client with children:read", func(t *testing.T) {
		f := br.authorize(t, a, d, cb, authFlow{
			clientID: cimdClient, clientName: "Assistente Ágape", clientHost: docs.host,
			scope: "roster:read children:read", email: seed.DemoAdminEmail, action: "approve",
			loginShot: filepath.Join(artifacts, "oauth-login.png"), consentShot: filepath.Join(artifacts, "oauth-consent-lgpd-warning.png"),
		})
		tok := d.exchange(t, cimdClient, cb.redirectURI, f.code, f.verifier)
		if !sameScopes(tok.Scope, "roster:read children:read") {
			t.Errorf("granted %q, want roster:read children:read", tok.Scope)
		}
		if status, _, body := mcpCall(t, d.resource, tok.AccessToken, "resources/read", map[string]any{"uri": "neemias://roster/children/" + kid}); status != http.StatusOK || !strings.Contains(body, kid) {
			t.Errorf("a child's record with children:read: %d %s", status, oauthtest.Snippet(body))
		}
		if status, _, body := mcpCall(t, d.resource, tok.AccessToken, "resources/read", map[string]any{"uri": "neemias://roster/children"}); status != http.StatusOK || !strings.Contains(body, "total_children") {
			t.Errorf("the roster with roster:read: %d %s", status, oauthtest.Snippet(body))
		}
		assertInsufficient(t, d, tok.AccessToken, "tools/call", map[string]any{
			"name": "neemias_checkin_register", "arguments": map[string]any{"child_id": kid},
		}, "checkins:write")
	})

	t.Run("DCR client without children:read", func(t *testing.T) {
		f := br.authorize(t, a, d, cb, authFlow{
			clientID: dcrClient, clientName: dcrName,
			scope: "roster:read attendance:read", email: seed.DemoVoluntarioEmail, action: "approve",
			consentShot: filepath.Join(artifacts, "oauth-consent.png"),
		})
		tok := d.exchange(t, dcrClient, cb.redirectURI, f.code, f.verifier)
		if !sameScopes(tok.Scope, "roster:read attendance:read") {
			t.Errorf("granted %q, want roster:read attendance:read", tok.Scope)
		}
		if status, _, body := mcpCall(t, d.resource, tok.AccessToken, "resources/read", map[string]any{"uri": "neemias://roster/children"}); status != http.StatusOK || !strings.Contains(body, "total_children") {
			t.Errorf("the roster with roster:read: %d %s", status, oauthtest.Snippet(body))
		}
		// Child records are outside a volunteer's role (children:read is for ADMIN and CADASTRO
		// only): not found, no step-up challenge. What the role may hold but the token lacks is
		// challenged.
		if status, _, body := mcpCall(t, d.resource, tok.AccessToken, "resources/read", map[string]any{"uri": "neemias://roster/children/" + kid}); status != http.StatusOK || !strings.Contains(body, "not found") {
			t.Errorf("a child record as a volunteer: %d %s, want not found", status, oauthtest.Snippet(body))
		}
		assertInsufficient(t, d, tok.AccessToken, "tools/call", map[string]any{
			"name": "neemias_checkin_register", "arguments": map[string]any{"child_id": kid},
		}, "checkins:write")
	})

	t.Run("deny", func(t *testing.T) {
		br.authorize(t, a, d, cb, authFlow{
			clientID: dcrClient, clientName: dcrName,
			scope: "roster:read children:read", email: seed.DemoAdminEmail, action: "deny", wrongPasswordFirst: true,
		})
		n := a.one(t, `SELECT count(*)::text FROM oauth_consents WHERE client_id = $1 AND decision = 'denied'`, dcrClient)
		if n != "1" {
			t.Errorf("denied consents recorded: %s, want 1", n)
		}
	})

	for _, name := range shots {
		checkPNG(t, filepath.Join(artifacts, name))
	}
	if hits := cb.extra(); len(hits) != 0 {
		t.Errorf("the redirect URI was hit more than once per flow: %v", hits)
	}
	br.logOutsideAttempts(t)
}

// authFlow is one trip through the authorization server's pages.
type authFlow struct {
	clientID, clientName string
	// clientHost is the metadata document's host, shown for a CIMD client ("" for DCR).
	clientHost   string
	scope, email string
	action       string // approve or deny
	// wrongPasswordFirst signs in with a wrong password before the right one.
	wrongPasswordFirst bool
	// loginShot and consentShot are where to write screenshots of the pages ("" for none).
	loginShot, consentShot string
}

// flowResult is what the client's redirect URI received.
type flowResult struct {
	code, verifier string
}

// authorize runs one flow in a fresh browser context (no cookies from earlier flows): it
// navigates to the authorization URL, logs in, checks the consent page, clicks the action and
// checks what the redirect URI received.
func (br *browser) authorize(t *testing.T, a *app, d *discovery, cb *callbackServer, f authFlow) flowResult {
	t.Helper()
	tab, closeTab := chromedp.NewContext(br.ctx, chromedp.WithNewBrowserContext())
	defer closeTab()
	tab, cancel := context.WithTimeout(tab, 90*time.Second) // every step of the flow within it
	defer cancel()

	verifier, challenge := oauthtest.NewPKCE()
	state := "st-" + strings.ReplaceAll(f.action+"-"+f.scope, " ", "_")
	authURL := d.authorizeURL(f.clientID, cb.redirectURI, f.scope, state, challenge)

	// The login page.
	run(t, tab, "open the authorization URL and wait for the login form",
		chromedp.Navigate(authURL), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.WaitVisible(chromedp.ID("password")), chromedp.WaitVisible(chromedp.ID("login-submit")))
	if loc := value(t, tab, chromedp.Location()); !strings.HasPrefix(loc, a.base+"/login?id=") {
		t.Fatalf("after /authorize the browser is at %s, want the login page", loc)
	}
	if got := value(t, tab, chromedp.Text(chromedp.CSS("main"))); !strings.Contains(got, f.clientName) || !strings.Contains(got, cb.host) {
		t.Errorf("the login page does not name the client %q and its redirect host %s:\n%s", f.clientName, cb.host, got)
	}
	// The request is bound to this browser by a cookie that an http issuer on 127.0.0.1 must
	// be able to set: HttpOnly, SameSite=Lax, host-only, not Secure (the page is not https).
	binding := bindingCookies(t, tab, a.base)
	if len(binding) != 1 {
		t.Fatalf("binding cookies after /authorize: %v, want one", binding)
	}
	if c := binding[0]; !c.HTTPOnly || c.Secure || c.SameSite != network.CookieSameSiteLax || c.Domain != "127.0.0.1" || c.Path != "/" {
		t.Errorf("binding cookie %+v: want HttpOnly, SameSite=Lax, not Secure, host 127.0.0.1, path /", *c)
	}
	if f.wrongPasswordFirst {
		// A wrong password re-renders the form (new request, same binding and CSRF token):
		// the error shows, the email stays, and the form still works.
		run(t, tab, "sign in with a wrong password",
			chromedp.SendKeys(chromedp.ID("email"), f.email), chromedp.SendKeys(chromedp.ID("password"), "errada"),
			chromedp.Click(chromedp.ID("login-submit")), chromedp.WaitVisible(chromedp.ID("login-error")))
		if got := value(t, tab, chromedp.Value(chromedp.ID("email"))); got != f.email {
			t.Errorf("after a wrong password the email field holds %q, want %q", got, f.email)
		}
		if got := value(t, tab, chromedp.Value(chromedp.ID("password"))); got != "" {
			t.Error("after a wrong password the password field is not empty")
		}
		run(t, tab, "type the right password", chromedp.SendKeys(chromedp.ID("password"), seed.DemoPassword))
	} else {
		run(t, tab, "type the credentials",
			chromedp.SendKeys(chromedp.ID("email"), f.email), chromedp.SendKeys(chromedp.ID("password"), seed.DemoPassword))
	}
	if f.loginShot != "" {
		screenshot(t, tab, f.loginShot)
	}
	run(t, tab, "sign in and wait for the consent page",
		chromedp.Click(chromedp.ID("login-submit")), chromedp.WaitVisible(chromedp.ID("consent-approve")),
		chromedp.WaitVisible(chromedp.ID("consent-deny")))
	if loc := value(t, tab, chromedp.Location()); !strings.HasPrefix(loc, a.base+"/consent?id=") {
		t.Fatalf("after signing in the browser is at %s, want the consent page", loc)
	}

	// The consent page, as rendered.
	if got := value(t, tab, chromedp.Text(chromedp.ID("client-name"))); got != f.clientName {
		t.Errorf("client name shown as %q, want %q", got, f.clientName)
	}
	if n := value(t, tab, chromedp.Evaluate[int](`document.querySelectorAll('#client-name *').length`)); n != 0 {
		t.Errorf("the client name became %d elements: it was not escaped", n)
	}
	if got := value(t, tab, chromedp.Text(chromedp.ID("redirect-host"))); got != cb.host {
		t.Errorf("redirect host shown as %q, want %q", got, cb.host)
	}
	if f.clientHost != "" {
		if got := value(t, tab, chromedp.Text(chromedp.ID("client-host"))); got != f.clientHost {
			t.Errorf("metadata document host shown as %q, want %q", got, f.clientHost)
		}
	}
	type listed struct{ Scope, Text string }
	items := value(t, tab, chromedp.Evaluate[[]listed](
		`[...document.querySelectorAll('#scopes li')].map(li => ({Scope: li.dataset.scope, Text: li.innerText}))`))
	var names []string
	for _, it := range items {
		names = append(names, it.Scope)
		s, ok := scopeInfo(it.Scope)
		if !ok || !strings.Contains(it.Text, s.Pt) || !strings.Contains(it.Text, s.En) {
			t.Errorf("scope %s listed as %q: want its Portuguese and English descriptions", it.Scope, it.Text)
		}
	}
	if !sameScopes(strings.Join(names, " "), f.scope) {
		t.Errorf("scopes listed: %v, want %s", names, f.scope)
	}
	children := slices.Contains(strings.Fields(f.scope), scopes.ChildrenRead)
	if children {
		run(t, tab, "the LGPD warning is visible", chromedp.WaitVisible(chromedp.ID("lgpd-warning")))
		if got := value(t, tab, chromedp.Text(chromedp.CSS(`#lgpd-warning p[data-scope="children:read"]`))); got != "⚠️ Este aplicativo solicita acesso a dados pessoais de crianças. Você tem autoridade legal para conceder este acesso?" {
			t.Errorf("LGPD warning reads %q", got)
		}
		// Prominent: above the buttons, not scrolled away, in the first screenful.
		top := value(t, tab, chromedp.Evaluate[float64](`document.getElementById('lgpd-warning').getBoundingClientRect().top`))
		buttons := value(t, tab, chromedp.Evaluate[float64](`document.getElementById('consent-approve').getBoundingClientRect().top`))
		if top < 0 || top > 600 || top >= buttons {
			t.Errorf("the LGPD warning is at y=%v (buttons at %v): want it in the first screenful, above the buttons", top, buttons)
		}
	} else {
		absent := value(t, tab, chromedp.Evaluate[bool](
			`document.getElementById('lgpd-warning') === null && !document.body.innerText.includes('autoridade legal')`))
		if !absent {
			t.Error("the LGPD warning is on the page although children:read was not requested")
		}
	}
	if f.consentShot != "" {
		screenshot(t, tab, f.consentShot)
	}

	// The decision: the browser follows the 303 to the client's loopback redirect URI.
	button := "consent-approve"
	if f.action == "deny" {
		button = "consent-deny"
	}
	run(t, tab, "click "+button+" and land on the redirect URI",
		chromedp.Click(chromedp.ID(button)), chromedp.WaitVisible(chromedp.ID("callback-received")))
	got := cb.next(t, tab)
	if loc := value(t, tab, chromedp.Location()); !strings.HasPrefix(loc, cb.redirectURI+"?") {
		t.Errorf("the browser ended at %s, want the redirect URI", loc)
	}
	if got.Get("state") != state || got.Get("iss") != d.issuer || len(got["iss"]) != 1 {
		t.Errorf("redirect URI received %v: want state %q and iss %q", got, state, d.issuer)
	}
	if left := bindingCookies(t, tab, a.base); len(left) != 0 {
		t.Errorf("the binding cookie outlived the decision: %v", left)
	}
	switch f.action {
	case "approve":
		if got.Get("code") == "" || got.Get("error") != "" {
			t.Fatalf("approve: redirect URI received %v, want a code", got)
		}
	default:
		if got.Get("error") != "access_denied" || got.Has("code") {
			t.Fatalf("deny: redirect URI received %v, want error=access_denied and no code", got)
		}
	}
	return flowResult{code: got.Get("code"), verifier: verifier}
}

// discovery is what a client learns before it starts: from the 401 of /mcp to the protected
// resource metadata to the authorization server metadata.
type discovery struct {
	resource, issuer                       string
	authorizeEndpoint, tokenEndpoint       string
	registrationEndpoint, metadataDocument string
}

var resourceMetadataParam = regexp.MustCompile(`resource_metadata="([^"]+)"`)

func discover(t *testing.T, a *app) *discovery {
	t.Helper()
	status, www, _ := mcpCall(t, a.mcp, "", "tools/list", map[string]any{})
	m := resourceMetadataParam.FindStringSubmatch(www)
	if status != http.StatusUnauthorized || m == nil {
		t.Fatalf("/mcp without a token: %d %q, want 401 naming the resource metadata", status, www)
	}
	if m[1] != a.base+"/.well-known/oauth-protected-resource/mcp" {
		t.Errorf("resource_metadata %s", m[1])
	}
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
	}
	getJSON(t, m[1], &prm)
	if prm.Resource != a.mcp || len(prm.AuthorizationServers) != 1 || !slices.Contains(prm.ScopesSupported, scopes.ChildrenRead) {
		t.Fatalf("protected resource metadata %+v", prm)
	}
	issuer := prm.AuthorizationServers[0]
	// RFC 8414 §3.1: the well-known segment goes between the host and the issuer's path.
	iu, err := url.Parse(issuer)
	if err != nil {
		t.Fatal(err)
	}
	var as struct {
		Issuer                   string   `json:"issuer"`
		AuthorizationEndpoint    string   `json:"authorization_endpoint"`
		TokenEndpoint            string   `json:"token_endpoint"`
		RegistrationEndpoint     string   `json:"registration_endpoint"`
		CodeChallengeMethods     []string `json:"code_challenge_methods_supported"`
		CIMD                     bool     `json:"client_id_metadata_document_supported"`
		ISSParameter             bool     `json:"authorization_response_iss_parameter_supported"`
		ResponseTypesSupported   []string `json:"response_types_supported"`
		TokenEndpointAuthMethods []string `json:"token_endpoint_auth_methods_supported"`
	}
	getJSON(t, iu.Scheme+"://"+iu.Host+"/.well-known/oauth-authorization-server"+strings.TrimSuffix(iu.Path, "/"), &as)
	if as.Issuer != issuer || as.AuthorizationEndpoint == "" || as.TokenEndpoint == "" || as.RegistrationEndpoint == "" ||
		!slices.Equal(as.CodeChallengeMethods, []string{"S256"}) || !as.CIMD || !as.ISSParameter ||
		!slices.Contains(as.TokenEndpointAuthMethods, "none") {
		t.Fatalf("authorization server metadata %+v", as)
	}
	return &discovery{
		resource: prm.Resource, issuer: as.Issuer, authorizeEndpoint: as.AuthorizationEndpoint,
		tokenEndpoint: as.TokenEndpoint, registrationEndpoint: as.RegistrationEndpoint,
	}
}

// register registers a public native client (RFC 7591) at the discovered endpoint.
func (d *discovery) register(t *testing.T, name, redirectURI string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"client_name": name, "redirect_uris": []string{redirectURI}, "application_type": "native",
		"token_endpoint_auth_method": "none", "grant_types": []string{"authorization_code", "refresh_token"},
	})
	resp, err := http.Post(d.registrationEndpoint, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		ClientID   string `json:"client_id"`
		ClientName string `json:"client_name"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusCreated || out.ClientID == "" {
		t.Fatalf("register: %d %+v %v", resp.StatusCode, out, err)
	}
	return out.ClientID
}

func (d *discovery) authorizeURL(clientID, redirectURI, scope, state, challenge string) string {
	v := url.Values{
		"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirectURI}, "scope": {scope},
		"state": {state}, "code_challenge": {challenge}, "code_challenge_method": {"S256"}, "resource": {d.resource},
	}
	return d.authorizeEndpoint + "?" + v.Encode()
}

type tokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	Scope       string `json:"scope"`
	Error       string `json:"error"`
}

// exchange redeems code at the discovered token endpoint as a public client.
func (d *discovery) exchange(t *testing.T, clientID, redirectURI, code, verifier string) tokenResponse {
	t.Helper()
	resp, err := http.PostForm(d.tokenEndpoint, url.Values{
		"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI},
		"code_verifier": {verifier}, "client_id": {clientID}, "resource": {d.resource},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok tokenResponse
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != http.StatusOK || tok.AccessToken == "" || tok.TokenType != "Bearer" {
		t.Fatalf("token exchange: %d %+v %v", resp.StatusCode, tok, err)
	}
	return tok
}

// mcpCall POSTs one stateless JSON-RPC request to the MCP endpoint (no Authorization header
// when token is empty) and returns the status, WWW-Authenticate and body.
func mcpCall(t *testing.T, endpoint, token, method string, params any) (int, string, string) {
	t.Helper()
	if !strings.HasSuffix(endpoint, "/mcp") {
		t.Fatalf("MCP endpoint %q does not end in /mcp", endpoint)
	}
	return oauthtest.MCP(t, strings.TrimSuffix(endpoint, "/mcp"), token, method, params)
}

// assertInsufficient: a call the token's scopes do not cover gets 403 insufficient_scope
// naming the scope it needs.
func assertInsufficient(t *testing.T, d *discovery, token, method string, params any, scope string) {
	t.Helper()
	status, www, body := mcpCall(t, d.resource, token, method, params)
	if status != http.StatusForbidden || !strings.Contains(www, `error="insufficient_scope"`) || !strings.Contains(www, scope) {
		t.Errorf("%s outside the granted scopes: %d %q %s; want 403 insufficient_scope naming %s", method, status, www, oauthtest.Snippet(body), scope)
	}
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", u, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

func scopeInfo(name string) (scopes.Info, bool) {
	for _, s := range scopes.All() {
		if s.Name == name {
			return s, true
		}
	}
	return scopes.Info{}, false
}

func sameScopes(a, b string) bool {
	x, y := strings.Fields(a), strings.Fields(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// callbackServer is the client's loopback redirect URI: it records each query it receives.
type callbackServer struct {
	redirectURI, host string
	hits              chan url.Values
}

func newCallbackServer(t *testing.T) *callbackServer {
	t.Helper()
	cb := &callbackServer{hits: make(chan url.Values, 16)}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r) // e.g. /favicon.ico
			return
		}
		cb.hits <- r.URL.Query()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, `<!doctype html><title>Cliente</title><p id="callback-received">Pode fechar esta janela.</p>`)
	}))
	t.Cleanup(hs.Close)
	cb.redirectURI, cb.host = hs.URL+"/callback", strings.TrimPrefix(hs.URL, "http://")
	return cb
}

// next returns the query of the next hit of the redirect URI.
func (cb *callbackServer) next(t *testing.T, ctx context.Context) url.Values {
	t.Helper()
	select {
	case q := <-cb.hits:
		return q
	case <-ctx.Done():
		t.Fatalf("the redirect URI was never reached: %v", ctx.Err())
		return nil
	}
}

// extra returns hits nobody consumed.
func (cb *callbackServer) extra() []url.Values {
	var out []url.Values
	for {
		select {
		case q := <-cb.hits:
			out = append(out, q)
		default:
			return out
		}
	}
}

// metadataDocServer serves Client ID Metadata Documents over TLS on 127.0.0.1; the
// authorization server fetches them with internal/oauth/cimd's fetcher, its test-only options
// admitting loopback and the test certificate.
type metadataDocServer struct {
	hs   *httptest.Server
	host string
	mu   sync.Mutex
	docs map[string][]byte
}

func newMetadataDocServer(t *testing.T) *metadataDocServer {
	t.Helper()
	s := &metadataDocServer{docs: map[string][]byte{}}
	s.hs = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		body, ok := s.docs[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=300")
		_, _ = w.Write(body)
	}))
	t.Cleanup(s.hs.Close)
	s.host = strings.TrimPrefix(s.hs.URL, "https://")
	return s
}

// publish serves doc at a new path and returns its URL, the client_id (also set in doc).
func (s *metadataDocServer) publish(doc map[string]any) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	path := fmt.Sprintf("/clients/%d/client.json", len(s.docs)+1)
	id := s.hs.URL + path
	doc["client_id"] = id
	body, _ := json.Marshal(doc)
	s.docs[path] = body
	return id
}

// fetcher is what server.New builds by default (internal/oauth/cimd adapted to
// oauth.ClientMetadataFetcher), with the test-only options for this server.
func (s *metadataDocServer) fetcher(t *testing.T) oauth.ClientMetadataFetcher {
	t.Helper()
	pool := s.hs.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	f, err := server.ClientMetadataFetcher(cimd.Options{AllowLoopbackForTests: true, RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// browser is one headless Chromium for the test.
type browser struct {
	ctx  context.Context
	trap *trapProxy
}

// newBrowser starts Chromium with a fresh profile. Nothing off this machine may be
// contacted: the background services are off, every host name but 127.0.0.1 fails to
// resolve, and every request that is not to loopback goes to a local proxy that refuses it
// and records it. disable names further Chromium features to turn off.
func newBrowser(t *testing.T, parent context.Context, exe string, disable ...string) *browser {
	t.Helper()
	profile := t.TempDir() // removed after the browser is gone (cleanups run last-in first-out)
	trap := newTrapProxy(t)
	out := &testsupport.Buffer{}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(parent,
		chromedp.ExecPath(exe),
		chromedp.UserDataDir(profile),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-client-side-phishing-detection", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-features", strings.Join(append([]string{"Translate", "OptimizationHints", "MediaRouter", "DialMediaRouteProvider", "AutofillServerCommunication", "CertificateTransparencyComponentUpdater", "NetworkTimeServiceQuerying"}, disable...), ",")),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("safebrowsing-disable-auto-update", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.Flag("use-mock-keychain", true),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.ProxyServer("http://"+trap.addr),
		chromedp.WindowSize(1024, 900),
		chromedp.CombinedOutput(out),
	)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc() // waits for the browser process to end
		if t.Failed() {
			t.Logf("chromium output:\n%s", out.String())
		}
	})
	if err := chromedp.Do(browserCtx); err != nil { // starts the browser
		t.Fatalf("starting %s: %v\n%s", exe, err, out.String())
	}
	return &browser{ctx: browserCtx, trap: trap}
}

func (br *browser) logOutsideAttempts(t *testing.T) {
	t.Helper()
	if reqs := br.trap.requests(); len(reqs) > 0 {
		t.Logf("chromium tried to reach, and was refused locally: %v", reqs)
	}
}

// run performs steps in the tab, failing the test with what it was doing.
func run(t *testing.T, tab context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(tab, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// value runs one action that returns a value.
func value[T any](t *testing.T, tab context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(tab, a)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	return v
}

// bindingCookies are the authorization server's browser-binding cookies Chromium holds for
// base.
func bindingCookies(t *testing.T, tab context.Context, base string) []*network.Cookie {
	t.Helper()
	all := value(t, tab, chromedp.Action[[]*network.Cookie](func(ctx context.Context, tg *chromedp.Target) ([]*network.Cookie, error) {
		r, err := cdp.Call(ctx, tg, network.GetCookies, network.GetCookiesParams{URLs: []string{base + "/"}})
		return r.Cookies, err
	}))
	var out []*network.Cookie
	for _, c := range all {
		if strings.Contains(c.Name, "neemias_authz_") {
			out = append(out, c)
		}
	}
	return out
}

// screenshot writes a full-page PNG of the tab to path.
func screenshot(t *testing.T, tab context.Context, path string) {
	t.Helper()
	b := value(t, tab, chromedp.FullScreenshot(100))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", path)
}

// checkPNG asserts path is a non-empty, decodable PNG that is not blank.
func checkPNG(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("screenshot: %v", err)
		return
	}
	if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("%s is not a PNG (%d bytes)", path, len(b))
		return
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	r := img.Bounds()
	if r.Dx() < 300 || r.Dy() < 300 {
		t.Errorf("%s is %v: too small for a page", path, r)
	}
	if colors(img, 3) < 3 {
		t.Errorf("%s is blank", path)
	}
}

// colors counts distinct colours in img, stopping at limit.
func colors(img image.Image, limit int) int {
	seen := map[[4]uint32]bool{}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y += 7 {
		for x := r.Min.X; x < r.Max.X; x += 7 {
			cr, cg, cb, ca := img.At(x, y).RGBA()
			seen[[4]uint32{cr, cg, cb, ca}] = true
			if len(seen) >= limit {
				return len(seen)
			}
		}
	}
	return len(seen)
}

// chromiumPath finds the browser, or skips: CI installs Debian's chromium (make test-deps).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome-stable", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium binary on PATH (install Debian's chromium, `make test-deps`): the browser test of the OAuth flow is skipped")
	return ""
}

// artifactDir is $NEEMIAS_TEST_ARTIFACTS (created if needed), else a temporary directory.
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("NEEMIAS_TEST_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("test artifacts (screenshots) in %s", dir)
	return dir
}

// trapProxy is the browser's proxy for everything that is not loopback: it answers 403 to
// each request without forwarding it, and remembers what was asked.
type trapProxy struct {
	addr string
	mu   sync.Mutex
	seen []string
}

func newTrapProxy(t *testing.T) *trapProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &trapProxy{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				line, err := bufio.NewReader(c).ReadString('\n')
				if err != nil && !errors.Is(err, io.EOF) {
					return
				}
				p.mu.Lock()
				p.seen = append(p.seen, strings.TrimSpace(line))
				p.mu.Unlock()
				_, _ = io.WriteString(c, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			}()
		}
	}()
	return p
}

func (p *trapProxy) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seen)
}
