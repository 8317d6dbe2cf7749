package oauth_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
)

// TestLimitsAreSharedByReplicas: the per-address limits of /authorize, /token and /register
// hold across three replicas on one database (the buckets are rows of rate_limits): a burst
// of N spread round-robin over the three is allowed N times in all, not 3N; the refusals are
// 429 with Retry-After, and a refused /authorize stores no pending request.
func TestLimitsAreSharedByReplicas(t *testing.T) {
	t.Parallel()
	opts := oauth.Options{AuthorizeBurst: 5, AuthorizePerMinute: 0.01, TokenBurst: 4, TokenPerMinute: 0.01, RegistrationBurst: 3, RegistrationPerHour: 0.01}
	a := newEnv(t, opts)
	b := newEnvOn(t, a.st, a.base, opts)
	c := newEnvOn(t, a.st, a.base, opts)
	bases := []string{a.base, b.base, c.base}

	client := oauthtest.RegisterPublic(t, a.base, "http://127.0.0.1:3000/cb")
	_, challenge := oauthtest.NewPKCE()
	before := a.count(`SELECT count(*) FROM oauth_auth_requests`)
	br := oauthtest.NewBrowser(t)
	ok, limited := 0, 0
	for i := range 12 {
		p := br.Get(oauthtest.Request{ClientID: client.ID, RedirectURI: client.RedirectURI, Scope: "roster:read", State: "s", Challenge: challenge}.URL(bases[i%3]))
		switch {
		case p.Status == http.StatusTooManyRequests && p.Header.Get("Retry-After") != "":
			limited++
		case p.Status < 400:
			ok++
		default:
			t.Fatalf("authorize %d: %d %s", i, p.Status, oauthtest.Snippet(p.Body))
		}
	}
	if ok != 5 || limited != 7 {
		t.Errorf("/authorize: %d allowed, %d limited; want 5 and 7", ok, limited)
	}
	if n := a.count(`SELECT count(*) FROM oauth_auth_requests`) - before; n != 5 {
		t.Errorf("%d pending authorization requests stored, want 5", n)
	}

	ok, limited = 0, 0
	for i := range 9 {
		r := oauthtest.Token(t, bases[i%3], url.Values{"grant_type": {"authorization_code"}, "code": {"nope"}, "code_verifier": {strings.Repeat("v", 43)}, "redirect_uri": {client.RedirectURI}}, client.ID, "")
		switch r.Status {
		case http.StatusTooManyRequests:
			limited++
		case http.StatusBadRequest:
			ok++
		default:
			t.Fatalf("token %d: %+v", i, r)
		}
	}
	if ok != 4 || limited != 5 {
		t.Errorf("/token: %d answered, %d limited; want 4 and 5", ok, limited)
	}

	ok, limited = 1, 0 // RegisterPublic above took one
	for i := range 6 {
		status, _ := oauthtest.Register(t, bases[i%3], map[string]any{"redirect_uris": []string{"https://ok.example/cb"}})
		switch status {
		case http.StatusTooManyRequests:
			limited++
		case http.StatusCreated:
			ok++
		default:
			t.Fatalf("register %d: %d", i, status)
		}
	}
	if ok != 3 || limited != 4 {
		t.Errorf("/register: %d allowed, %d limited; want 3 and 4", ok, limited)
	}
}

// TestLoginLimitIsSharedByReplicas: password attempts from one address count once across the
// replicas: with a burst of 3, the fourth attempt is refused wherever it lands.
func TestLoginLimitIsSharedByReplicas(t *testing.T) {
	t.Parallel()
	opts := oauth.Options{LoginBurst: 3, LoginPerMinute: 0.01}
	a := newEnv(t, opts)
	b := newEnvOn(t, a.st, a.base, opts)
	c := newEnvOn(t, a.st, a.base, opts)
	client := oauthtest.RegisterPublic(t, a.base, "http://127.0.0.1:3000/cb")
	_, challenge := oauthtest.NewPKCE()
	br := oauthtest.NewBrowser(t)
	start := br.Get(oauthtest.Request{ClientID: client.ID, RedirectURI: client.RedirectURI, Challenge: challenge}.URL(a.base))
	login := br.Get(start.Location)
	form := url.Values{"id": {oauthtest.Hidden(login.Body, "id")}, "csrf": {oauthtest.Hidden(login.Body, "csrf")},
		"email": {"nobody@nowhere.example"}, "password": {"wrong"}}
	for i, base := range []string{a.base, b.base, c.base, a.base, b.base} {
		p := br.PostForm(base+"/login", form)
		want := http.StatusUnauthorized
		if i >= 3 {
			want = http.StatusTooManyRequests
		}
		if p.Status != want || (want == http.StatusTooManyRequests && p.Header.Get("Retry-After") == "") {
			t.Errorf("attempt %d at %s: %d Retry-After=%q, want %d", i+1, base, p.Status, p.Header.Get("Retry-After"), want)
		}
	}
}
