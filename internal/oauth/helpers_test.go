package oauth_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/server"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
	"github.com/neemias/neemias-mcp/internal/testsupport"
)

// env is the assembled server (server.New: MCP, REST and the authorization server) over a
// seeded PostgreSQL database of its own, on a loopback listener.
type env struct {
	t    testing.TB
	st   *store.Store
	srv  *server.Server
	base string // http://127.0.0.1:port, the issuer
	cimd *fakeCIMD
	logs *testsupport.Buffer
}

// newEnv seeds a small demo church (password "demo") and serves it.
func newEnv(t testing.TB, opts oauth.Options) *env {
	t.Helper()
	st := storetest.NewSeeded(t, seed.Options{ChildrenPerChurch: 20, Months: 1})
	return newEnvOn(t, st, "", opts)
}

// newEnvOn serves another server.New over st on a new listener. publicURL "" means the
// listener's own address; replicas of one deployment share the first one's.
func newEnvOn(t testing.TB, st *store.Store, publicURL string, opts oauth.Options) *env {
	t.Helper()
	return newEnvListening(t, listen(t), st, publicURL, opts)
}

func listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// newEnvListening is newEnvOn on a listener the test already holds (to know the URL first).
func newEnvListening(t testing.TB, ln net.Listener, st *store.Store, publicURL string, opts oauth.Options) *env {
	t.Helper()
	base := "http://" + ln.Addr().String()
	if publicURL == "" {
		publicURL = base
	}
	fake := &fakeCIMD{docs: map[string]*oauth.ClientMetadata{}}
	// The tests make many requests from one address; those of the limits set their own.
	if opts.AuthorizeBurst == 0 {
		opts.AuthorizeBurst = 10_000
	}
	if opts.TokenBurst == 0 {
		opts.TokenBurst = 10_000
	}
	if opts.ClientMetadata == nil {
		opts.ClientMetadata = fake
	}
	logs := &testsupport.Buffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := server.New(ctx, server.Config{
		PublicURL: publicURL, Version: "test", AuthServer: opts,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}, st)
	if err != nil {
		ln.Close()
		t.Fatalf("server.New: %v", err)
	}
	hs := httptest.NewUnstartedServer(srv.Handler)
	hs.Listener.Close()
	hs.Listener = ln
	hs.Start()
	t.Cleanup(hs.Close)
	return &env{t: t, st: st, srv: srv, base: base, cimd: fake, logs: logs}
}

func (e *env) bases() oauthtest.Bases {
	return oauthtest.Bases{Authorize: e.base, Login: e.base, Consent: e.base}
}

// count runs a count(*) query in the maintenance context.
func (e *env) count(sql string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.st.Pool().QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func (e *env) exec(sql string, args ...any) {
	e.t.Helper()
	if _, err := e.st.Pool().Exec(context.Background(), sql, args...); err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
}

// grant runs the whole flow for a public client as the demo user email and returns the
// token response, the client and the browser's flow.
func (e *env) grant(t testing.TB, c oauthtest.Client, email, scope string) (oauthtest.TokenResponse, oauthtest.Flow) {
	t.Helper()
	verifier, challenge := oauthtest.NewPKCE()
	f := oauthtest.NewBrowser(t).Authorize(oauthtest.Request{
		ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: scope, State: "st-1", Challenge: challenge,
	}, e.bases(), email, seed.DemoPassword, "approve")
	code := f.Callback.Query().Get("code")
	if code == "" {
		t.Fatalf("no code in %s", f.Final.Location)
	}
	tok := oauthtest.Exchange(t, e.base, c, code, verifier)
	if tok.Status != http.StatusOK {
		t.Fatalf("exchange: %d %s %s", tok.Status, tok.Error, tok.ErrorDescription)
	}
	return tok, f
}

// code runs the flow up to the code, for tests of the token endpoint.
func (e *env) code(t testing.TB, c oauthtest.Client, email, scope string) (code, verifier string) {
	t.Helper()
	verifier, challenge := oauthtest.NewPKCE()
	f := oauthtest.NewBrowser(t).Authorize(oauthtest.Request{
		ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: scope, Challenge: challenge,
	}, e.bases(), email, seed.DemoPassword, "approve")
	code = f.Callback.Query().Get("code")
	if code == "" {
		t.Fatalf("no code in %s", f.Final.Location)
	}
	return code, verifier
}

// fakeCIMD serves client metadata documents from a map and counts fetches.
type fakeCIMD struct {
	mu    sync.Mutex
	docs  map[string]*oauth.ClientMetadata
	calls int
}

func (f *fakeCIMD) Fetch(_ context.Context, clientID string) (*oauth.ClientMetadata, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	d, ok := f.docs[clientID]
	if !ok {
		return nil, errNoDoc
	}
	cp := *d
	return &cp, nil
}

func (f *fakeCIMD) put(d *oauth.ClientMetadata) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.docs[d.ClientID] = d
}

func (f *fakeCIMD) fetches() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

type docError string

func (e docError) Error() string { return string(e) }

const errNoDoc = docError("no such document")

// noRedirect asserts a page is an error page of the authorization server: the status, HTML,
// and no Location header at all.
func noRedirect(t *testing.T, p oauthtest.Page, status int) {
	t.Helper()
	if p.Status != status || p.Location != "" || !strings.Contains(p.Header.Get("Content-Type"), "text/html") {
		t.Errorf("want an HTML error page %d without Location, got %d Location=%q %s", status, p.Status, p.Location, oauthtest.Snippet(p.Body))
	}
}

// errorRedirect asserts p redirects to the client's redirect URI with error, the state and iss.
func errorRedirect(t *testing.T, p oauthtest.Page, redirectURI, wantErr, state, iss string) {
	t.Helper()
	if p.Status != http.StatusFound && p.Status != http.StatusSeeOther {
		t.Errorf("want a redirect with error=%s, got %d %s", wantErr, p.Status, oauthtest.Snippet(p.Body))
		return
	}
	u, err := url.Parse(p.Location)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if q.Get("error") == "" && u.Fragment != "" {
		// Errors for implicit-flow response types travel in the fragment (RFC 6749 §4.2.2.1).
		q, _ = url.ParseQuery(u.Fragment)
	}
	if got := u.Scheme + "://" + u.Host + u.Path; got != redirectURI {
		t.Errorf("redirected to %s, want %s", got, redirectURI)
	}
	if q.Get("error") != wantErr || q.Get("state") != state || len(q["iss"]) != 1 || q.Get("iss") != iss || q.Get("code") != "" {
		t.Errorf("redirect %s: want error=%s state=%s iss=%s and no code", p.Location, wantErr, state, iss)
	}
}

func jsonDecode(resp *http.Response, v any) error { return json.NewDecoder(resp.Body).Decode(v) }
