// Package oauthtest drives Neemias' built-in authorization server the way a browser and an
// OAuth client do, over real HTTP: registration, /authorize, the login and consent pages,
// /token, and MCP calls with the resulting token. For the tests of internal/oauth, the
// cross-process test of the server binary, and any end-to-end test of a flow. Test-only.
package oauthtest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Browser is a user agent with a cookie jar that does not follow redirects, so every hop of
// a flow can be checked.
type Browser struct {
	t      testing.TB
	Client *http.Client
}

// NewBrowser returns a fresh browser (empty cookie jar).
func NewBrowser(t testing.TB) *Browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Browser{t: t, Client: &http.Client{
		Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Page is one HTTP response, body read.
type Page struct {
	Status   int
	Header   http.Header
	Body     string
	Location string
	Cookies  []*http.Cookie
}

func (b *Browser) do(req *http.Request) Page {
	b.t.Helper()
	resp, err := b.Client.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return Page{Status: resp.StatusCode, Header: resp.Header, Body: string(body), Location: resp.Header.Get("Location"), Cookies: resp.Cookies()}
}

// Get fetches u.
func (b *Browser) Get(u string) Page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

// PostForm posts vals to u as a form.
func (b *Browser) PostForm(u string, vals url.Values) Page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(vals.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

var hiddenPattern = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)

// Hidden returns the value of the hidden form field name on a page ("" if absent).
func Hidden(body, name string) string {
	for _, m := range hiddenPattern.FindAllStringSubmatch(body, -1) {
		if m[1] == name {
			return html.UnescapeString(m[2])
		}
	}
	return ""
}

// Rebase points u at base (another replica of the same server): same path and query.
func Rebase(t testing.TB, u, base string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	b, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	p.Scheme, p.Host = b.Scheme, b.Host
	return p.String()
}

// NewPKCE returns a fresh code verifier and its S256 challenge.
func NewPKCE() (verifier, challenge string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	verifier = base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// Request is an authorization request. Empty Method means S256; Challenge "-" sends none.
type Request struct {
	ClientID, RedirectURI, Scope, State, Challenge, Method, Resource string
	Extra                                                            url.Values
}

// URL is the request's /authorize URL at base.
func (r Request) URL(base string) string {
	v := url.Values{"response_type": {"code"}, "client_id": {r.ClientID}, "redirect_uri": {r.RedirectURI}}
	if r.Scope != "" {
		v.Set("scope", r.Scope)
	}
	if r.State != "" {
		v.Set("state", r.State)
	}
	switch r.Challenge {
	case "-":
	default:
		v.Set("code_challenge", r.Challenge)
		m := r.Method
		if m == "" {
			m = "S256"
		}
		if m != "-" {
			v.Set("code_challenge_method", m)
		}
	}
	if r.Resource != "" {
		v.Set("resource", r.Resource)
	}
	for k, vs := range r.Extra {
		v[k] = vs
	}
	return base + "/authorize?" + v.Encode()
}

// Flow is what the browser saw on the way through login and consent.
type Flow struct {
	Login, Consent, Final Page
	// Callback is the final redirect to the client, parsed (nil if there was none).
	Callback *url.URL
}

// Bases are the replicas each step goes to (all the same server in the simple case).
type Bases struct{ Authorize, Login, Consent string }

// Authorize runs /authorize, logs in with email and password and answers the consent page
// with action ("approve" or "deny"); it fails the test at any unexpected step.
func (b *Browser) Authorize(r Request, bases Bases, email, password, action string) Flow {
	b.t.Helper()
	var f Flow
	start := b.Get(r.URL(bases.Authorize))
	if start.Status != http.StatusFound || !strings.Contains(start.Location, "/login?id=") {
		b.t.Fatalf("authorize: want a redirect to the login page, got %d %q %s", start.Status, start.Location, snippet(start.Body))
	}
	f.Login = b.Get(Rebase(b.t, start.Location, bases.Login))
	if f.Login.Status != http.StatusOK {
		b.t.Fatalf("login page: %d %s", f.Login.Status, snippet(f.Login.Body))
	}
	after := b.PostForm(bases.Login+"/login", url.Values{
		"id": {Hidden(f.Login.Body, "id")}, "csrf": {Hidden(f.Login.Body, "csrf")},
		"email": {email}, "password": {password},
	})
	if after.Status != http.StatusSeeOther || !strings.Contains(after.Location, "/consent?id=") {
		b.t.Fatalf("login: want 303 to the consent page, got %d %q %s", after.Status, after.Location, snippet(after.Body))
	}
	f.Consent = b.Get(Rebase(b.t, after.Location, bases.Consent))
	if f.Consent.Status != http.StatusOK {
		b.t.Fatalf("consent page: %d %s", f.Consent.Status, snippet(f.Consent.Body))
	}
	f.Final = b.PostForm(bases.Consent+"/consent", url.Values{
		"id": {Hidden(f.Consent.Body, "id")}, "csrf": {Hidden(f.Consent.Body, "csrf")}, "action": {action},
	})
	if f.Final.Status != http.StatusSeeOther {
		b.t.Fatalf("consent: want 303 to the client, got %d %s", f.Final.Status, snippet(f.Final.Body))
	}
	cb, err := url.Parse(f.Final.Location)
	if err != nil {
		b.t.Fatal(err)
	}
	f.Callback = cb
	return f
}

// Client is a registered client.
type Client struct {
	ID, Secret  string
	RedirectURI string
}

// Register posts RFC 7591 metadata to base/register and returns the status and the JSON body.
func Register(t testing.TB, base string, meta map[string]any) (int, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(meta)
	resp, err := http.Post(base+"/register", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// RegisterPublic registers a public native client with one redirect URI.
func RegisterPublic(t testing.TB, base, redirectURI string) Client {
	t.Helper()
	status, out := Register(t, base, map[string]any{
		"client_name": "Cliente de teste", "redirect_uris": []string{redirectURI},
		"token_endpoint_auth_method": "none", "application_type": "native",
		"grant_types": []string{"authorization_code", "refresh_token"},
	})
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, out)
	}
	return Client{ID: out["client_id"].(string), RedirectURI: redirectURI}
}

// TokenResponse is a token endpoint answer.
type TokenResponse struct {
	Status                                    int
	Header                                    http.Header
	AccessToken, RefreshToken, IDToken        string
	TokenType, Scope, Error, ErrorDescription string
	ExpiresIn                                 int
}

// Token posts form to base/token, with HTTP Basic client authentication when secret is set.
func Token(t testing.TB, base string, form url.Values, clientID, secret string) TokenResponse {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/token", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if secret != "" {
		req.SetBasicAuth(url.QueryEscape(clientID), url.QueryEscape(secret))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken      string `json:"access_token"`
		RefreshToken     string `json:"refresh_token"`
		IDToken          string `json:"id_token"`
		TokenType        string `json:"token_type"`
		Scope            string `json:"scope"`
		ExpiresIn        int    `json:"expires_in"`
		Error            string `json:"error"`
		ErrorDescription string `json:"error_description"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return TokenResponse{Status: resp.StatusCode, Header: resp.Header, AccessToken: out.AccessToken, RefreshToken: out.RefreshToken,
		IDToken: out.IDToken, TokenType: out.TokenType, Scope: out.Scope, ExpiresIn: out.ExpiresIn, Error: out.Error, ErrorDescription: out.ErrorDescription}
}

// Exchange redeems code at base/token.
func Exchange(t testing.TB, base string, c Client, code, verifier string) TokenResponse {
	t.Helper()
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {c.RedirectURI}, "code_verifier": {verifier}}
	if c.Secret == "" {
		form.Set("client_id", c.ID)
	}
	return Token(t, base, form, c.ID, c.Secret)
}

// Refresh uses refresh token rt at base/token; extra adds parameters (scope, resource).
func Refresh(t testing.TB, base string, c Client, rt string, extra url.Values) TokenResponse {
	t.Helper()
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}
	if c.Secret == "" {
		form.Set("client_id", c.ID)
	}
	for k, v := range extra {
		form[k] = v
	}
	return Token(t, base, form, c.ID, c.Secret)
}

// MCP sends one stateless JSON-RPC request to base/mcp with the bearer token (no
// Authorization header when token is empty) and returns the status, the WWW-Authenticate
// header and the body.
func MCP(t testing.TB, base, token, method string, params any) (int, string, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
}

// ReadRoster reads the aggregate roster resource (scope roster:read).
func ReadRoster(t testing.TB, base, token string) (int, string, string) {
	t.Helper()
	return MCP(t, base, token, "resources/read", map[string]any{"uri": "neemias://roster/children"})
}

// JWT returns the decoded header and payload of a compact JWS (not verified).
func JWT(t testing.TB, token string) (header, payload map[string]any) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a compact JWS: %q", snippet(token))
	}
	for i, dst := range []*map[string]any{&header, &payload} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatalf("JWS part %d: %v", i, err)
		}
		if err := json.Unmarshal(b, dst); err != nil {
			t.Fatalf("JWS part %d: %v", i, err)
		}
	}
	return header, payload
}

func snippet(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}

// Snippet shortens s for a failure message.
func Snippet(s string) string { return snippet(s) }
