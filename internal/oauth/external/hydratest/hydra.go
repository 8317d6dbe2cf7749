package hydratest

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neemias/neemias-mcp/internal/freeport"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
	"github.com/neemias/neemias-mcp/internal/testsupport"
)

// Options configure a Hydra.
type Options struct {
	// OpaqueTokens selects Hydra's default opaque access tokens (validated by introspection at
	// AdminURL+"/admin/oauth2/introspect"); false selects JWT access tokens.
	OpaqueTokens bool
	// EditDiscovery, when set, rewrites Hydra's discovery documents
	// (/.well-known/openid-configuration and /.well-known/oauth-authorization-server) as the
	// TLS front serves them, e.g. to drop "none" from token_endpoint_auth_methods_supported
	// the way Keycloak's looks.
	EditDiscovery func(doc map[string]any)
}

// Hydra is a running ORY Hydra: its public port behind a TLS front of the test's own (the
// issuer, https://127.0.0.1:port), its admin port on plain loopback http, its login and
// consent app answered by this package through the admin API, on a PostgreSQL database of
// its own.
type Hydra struct {
	// Issuer is the front's https URL, Hydra's issuer; RootCAs and Client trust the front.
	Issuer  string
	RootCAs *x509.CertPool
	Client  *http.Client
	// AdminURL is the admin API, http://127.0.0.1:port.
	AdminURL string
	// DiscoveryHits counts requests for the discovery documents through the front.
	DiscoveryHits func() int

	front  *httptest.Server
	logs   *testsupport.Buffer
	bin    string
	env    []string
	proc   sync.Mutex // guards cmd and done
	cmd    *exec.Cmd
	done   chan struct{}
	mu     sync.Mutex // guards user and hits
	user   User
	hits   int
	frontU *url.URL
}

// User is who the login app logs in and what the consent app grants.
type User struct {
	// Subject is the account id Hydra puts in sub.
	Subject string
	// Claims are added to the access token (Hydra puts them under "ext", for JWT and
	// introspection alike): groups, roles, a church id.
	Claims map[string]any
	// Audience is granted as the access token's aud; nil grants no audience at all (a token
	// without aud).
	Audience []string
	// Scopes, when set, are granted instead of all requested scopes.
	Scopes []string
}

// Start builds Hydra if needed (Binary), migrates a fresh database and serves Hydra on free
// loopback ports until tb ends.
func Start(tb testing.TB, opts Options) *Hydra {
	tb.Helper()
	bin := Binary(tb)
	dsn := storetest.NewEmptyDatabase(tb)
	h := &Hydra{logs: &testsupport.Buffer{}}
	h.DiscoveryHits = func() int { h.mu.Lock(); defer h.mu.Unlock(); return h.hits }

	addrs := freeAddrs(tb, 2)
	public, admin := addrs[0], addrs[1]
	h.AdminURL = "http://" + admin
	h.startFront(tb, public, opts.EditDiscovery)
	app := httptest.NewServer(h.loginConsentApp())
	tb.Cleanup(app.Close)

	env := append(os.Environ(),
		"DSN="+dsn,
		"URLS_SELF_ISSUER="+h.Issuer,
		"URLS_LOGIN="+app.URL+"/login",
		"URLS_CONSENT="+app.URL+"/consent",
		"SECRETS_SYSTEM=neemias-hydratest-system-secret-0123456789",
		"SERVE_PUBLIC_HOST=127.0.0.1", "SERVE_PUBLIC_PORT="+port(public),
		"SERVE_ADMIN_HOST=127.0.0.1", "SERVE_ADMIN_PORT="+port(admin),
		"LOG_LEVEL=warn", "LOG_LEAK_SENSITIVE_VALUES=false",
	)
	if !opts.OpaqueTokens {
		env = append(env, "STRATEGIES_ACCESS_TOKEN=jwt")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mig := exec.CommandContext(ctx, bin, "migrate", "sql", "up", "-e", "--yes")
	mig.Env = env
	if out, err := mig.CombinedOutput(); err != nil {
		tb.Fatalf("hydra migrate sql up: %v\n%s", err, out)
	}
	h.bin, h.env = bin, env
	tb.Cleanup(func() {
		h.Stop()
		if tb.Failed() {
			tb.Logf("hydra output:\n%s", h.logs.String())
		}
	})
	h.serve(tb)
	return h
}

// serve starts `hydra serve all` and waits until its admin port reports ready.
func (h *Hydra) serve(tb testing.TB) {
	tb.Helper()
	h.proc.Lock()
	defer h.proc.Unlock()
	cmd := exec.Command(h.bin, "serve", "all", "--dev", "--sqa-opt-out")
	cmd.Env, cmd.Stdout, cmd.Stderr = h.env, h.logs, h.logs
	if err := cmd.Start(); err != nil {
		tb.Fatalf("hydra serve: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	h.cmd, h.done = cmd, done
	for deadline := time.Now().Add(time.Minute); ; {
		resp, err := http.Get(h.AdminURL + "/health/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-done:
			tb.Fatalf("hydra exited:\n%s", h.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("hydra did not become ready:\n%s", h.logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Stop interrupts Hydra and waits for it to exit; the front stays up (answering 502), as a
// provider whose backend died would. Resume starts it again on the same ports and database.
func (h *Hydra) Stop() {
	h.proc.Lock()
	cmd, done := h.cmd, h.done
	h.cmd = nil
	h.proc.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// Resume starts a stopped Hydra again (same keys, clients and tokens: same database).
func (h *Hydra) Resume(tb testing.TB) {
	tb.Helper()
	h.serve(tb)
}

// SetUser sets who the next logins log in and what their consents grant.
func (h *Hydra) SetUser(u User) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.user = u
}

func (h *Hydra) startFront(tb testing.TB, backend string, edit func(map[string]any)) {
	target := &url.URL{Scheme: "http", Host: backend}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
			r.Out.Header.Set("X-Forwarded-Proto", "https")
		},
		ModifyResponse: func(resp *http.Response) error {
			if !isDiscovery(resp.Request.URL.Path) || resp.StatusCode != http.StatusOK || edit == nil {
				return nil
			}
			var doc map[string]any
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return err
			}
			if err := json.Unmarshal(body, &doc); err != nil {
				return err
			}
			edit(doc)
			body, _ = json.Marshal(doc)
			resp.Body = io.NopCloser(bytes.NewReader(body))
			resp.ContentLength = int64(len(body))
			resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
			return nil
		},
		ErrorLog: log.New(io.Discard, "", 0),
	}
	h.front = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isDiscovery(r.URL.Path) {
			h.mu.Lock()
			h.hits++
			h.mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	}))
	h.front.StartTLS()
	tb.Cleanup(h.front.Close)
	h.Issuer = h.front.URL
	h.frontU, _ = url.Parse(h.front.URL)
	h.RootCAs = x509.NewCertPool()
	h.RootCAs.AddCert(h.front.Certificate())
	h.Client = h.front.Client()
}

func isDiscovery(p string) bool {
	return p == "/.well-known/openid-configuration" || p == "/.well-known/oauth-authorization-server"
}

// loginConsentApp is Hydra's login and consent UI: it accepts every challenge for the
// current User through the admin API.
func (h *Hydra) loginConsentApp() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		u := h.user
		h.mu.Unlock()
		ch := url.QueryEscape(r.URL.Query().Get("login_challenge"))
		var out struct {
			RedirectTo string `json:"redirect_to"`
		}
		if err := h.admin(r.Context(), http.MethodPut, "/admin/oauth2/auth/requests/login/accept?login_challenge="+ch,
			map[string]any{"subject": u.Subject}, &out); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		http.Redirect(w, r, out.RedirectTo, http.StatusFound)
	})
	mux.HandleFunc("GET /consent", func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		u := h.user
		h.mu.Unlock()
		ch := url.QueryEscape(r.URL.Query().Get("consent_challenge"))
		var req struct {
			RequestedScope []string `json:"requested_scope"`
		}
		if err := h.admin(r.Context(), http.MethodGet, "/admin/oauth2/auth/requests/consent?consent_challenge="+ch, nil, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		grant := req.RequestedScope
		if u.Scopes != nil {
			grant = u.Scopes
		}
		aud := u.Audience
		if aud == nil {
			aud = []string{}
		}
		claims := u.Claims
		if claims == nil {
			claims = map[string]any{}
		}
		var out struct {
			RedirectTo string `json:"redirect_to"`
		}
		if err := h.admin(r.Context(), http.MethodPut, "/admin/oauth2/auth/requests/consent/accept?consent_challenge="+ch, map[string]any{
			"grant_scope": grant, "grant_access_token_audience": aud,
			"session": map[string]any{"access_token": claims, "id_token": map[string]any{}},
		}, &out); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		http.Redirect(w, r, out.RedirectTo, http.StatusFound)
	})
	return mux
}

// admin calls the admin API with a JSON body (nil: none) and decodes the answer into out.
func (h *Hydra) admin(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.AdminURL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("hydra admin %s %s: %s: %s", method, path, resp.Status, b)
	}
	if out == nil || len(b) == 0 {
		return nil
	}
	return json.Unmarshal(b, out)
}

// Client is an OAuth client registered at Hydra.
type Client struct {
	ID, Secret   string
	RedirectURIs []string
}

// CreateClient registers a public client (token_endpoint_auth_method none, PKCE) allowed the
// given scopes and access token audiences, through the admin API.
func (h *Hydra) CreateClient(tb testing.TB, redirectURI string, scopes, audience []string) Client {
	tb.Helper()
	var out struct {
		ClientID string `json:"client_id"`
	}
	err := h.admin(context.Background(), http.MethodPost, "/admin/clients", map[string]any{
		"client_name": "neemias test client", "redirect_uris": []string{redirectURI},
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
		"scope": strings.Join(scopes, " "), "audience": audience, "token_endpoint_auth_method": "none",
	}, &out)
	if err != nil {
		tb.Fatal(err)
	}
	return Client{ID: out.ClientID, RedirectURIs: []string{redirectURI}}
}

// RevokeConsent revokes every consent of subject, and with them the tokens issued under it.
func (h *Hydra) RevokeConsent(tb testing.TB, subject string) {
	tb.Helper()
	if err := h.admin(context.Background(), http.MethodDelete,
		"/admin/oauth2/auth/sessions/consent?all=true&subject="+url.QueryEscape(subject), nil, nil); err != nil {
		tb.Fatal(err)
	}
}

// Browse plays the user's browser for authURL (an authorization request at Hydra): it follows
// Hydra's redirects through the login and consent app, with cookies, and returns the URL
// Hydra finally redirects to (the client's redirect URI with code and state).
func (h *Hydra) Browse(ctx context.Context, authURL string) (*url.URL, error) {
	jar, _ := cookiejar.New(nil)
	var final *url.URL
	c := &http.Client{
		Transport: h.Client.Transport, Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > 20 {
				return errors.New("too many redirects")
			}
			if req.URL.Host != h.frontU.Host && !strings.HasPrefix(req.URL.Path, "/login") && !strings.HasPrefix(req.URL.Path, "/consent") {
				final = req.URL
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if final == nil {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return nil, fmt.Errorf("hydra did not redirect to the client: %s %s", resp.Status, b)
	}
	if e := final.Query().Get("error"); e != "" {
		return nil, fmt.Errorf("hydra refused the authorization: %s: %s", e, final.Query().Get("error_description"))
	}
	return final, nil
}

func freeAddrs(tb testing.TB, n int) []string {
	tb.Helper()
	out, err := freeport.Addrs(n)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}
