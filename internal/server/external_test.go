package server_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neemias/neemias-mcp/internal/oauth/external"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/server"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
	"github.com/neemias/neemias-mcp/internal/testsupport"
)

// TestExternalProviderMode runs Neemias in external provider mode against a real OpenID
// Connect provider: the built-in Neemias authorization server, as separate OS processes of the
// real binary (go build) on a database of their own, behind a TLS-terminating reverse proxy
// (the external verifier accepts only https issuers and JWKS URIs, as in production). Tokens
// are obtained through the IdP's real flow (DCR, /authorize with PKCE and resource = the
// resource server's MCP URL, which the IdP allows through --extra-resource, login as a demo
// user, consent, code exchange). The resource server runs in process on a database of its own,
// where the IdP's accounts are linked with the real `identity link` command.
//
// It asserts: no authorization-server endpoint on the resource server and metadata naming the
// IdP; an unlinked subject refused (401) although a local user with the same id and e-mail
// exists, then the linked one served within its scopes (200) and refused outside (403
// insufficient_scope), and refused while the local user is disabled; the IdP's ID token, and
// its access token for its own resource, refused (401) by the resource server (the latter
// accepted by the IdP itself); claims mapping (church and role from claims) applied; a key rotation at the IdP picked up by one JWKS
// refresh on the unknown kid; and, with the IdP gone, the replica that cached the keys still
// serving while a replica that never fetched them fails closed (503).
func TestExternalProviderMode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	bin := buildServerBinary(t)

	// The resource server's database and listeners first: the IdP must know its MCP URL.
	rsDB := storetest.NewDatabase(t)
	if _, err := seed.Run(ctx, storetest.Pool(t, rsDB), seed.Options{ChildrenPerChurch: 20, Months: 1}); err != nil {
		t.Fatal(err)
	}
	rsStore, err := store.New(ctx, rsDB)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rsStore.Close)
	lnA, lnB, lnC := extListen(t), extListen(t), extListen(t)
	rsBase := "http://" + lnA.Addr().String()
	rsMCP := rsBase + "/mcp"

	// The IdP: its own database, a TLS proxy in front (its issuer is the proxy's https URL).
	idpDB := storetest.NewDatabase(t)
	if _, err := seed.Run(ctx, storetest.Pool(t, idpDB), seed.Options{ChildrenPerChurch: 20, Months: 1}); err != nil {
		t.Fatal(err)
	}
	idpAddrs := extFreeAddrs(t, 2)
	backend := &url.URL{Scheme: "http", Host: idpAddrs[0]}
	var jwksFetches atomic.Int64
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(backend)
			r.Out.Host = r.In.Host // the IdP sees its public host, as behind a real proxy
		},
		ErrorLog: log.New(io.Discard, "", 0),
	}
	proxy := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/jwks" {
			jwksFetches.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	proxy.StartTLS()
	var closeProxy sync.Once
	t.Cleanup(func() { closeProxy.Do(proxy.Close) })
	idp := proxy.URL // https://127.0.0.1:port
	roots := x509.NewCertPool()
	roots.AddCert(proxy.Certificate())
	// Each IdP replica: `serve` on the IdP's database, public URL the proxy's, and the
	// resource server's MCP URL as an extra resource it may issue tokens for.
	idpServe := func(t *testing.T, addr string) *extProcess {
		return startExtProcess(t, bin, addr, "serve", "--addr", addr, "--public-url", idp, "--database-url", idpDB, "--extra-resource", rsMCP)
	}
	idp1 := idpServe(t, idpAddrs[0])
	idpDirect := "http://" + idpAddrs[0] // plain http on loopback, for oauthtest's http.DefaultClient calls

	// The resource server: replica A serves the tests, replica B of the same deployment stays
	// untouched until the IdP is gone (both with the defaults: church and role of the linked
	// user, typ at+jwt or JWT accepted, so only the audience keeps ID tokens out); C maps
	// church and role from claims and demands typ at+jwt.
	rsLogs := &testsupport.Buffer{}
	newRS := func(ln net.Listener, edit func(*server.ExternalAuth)) *server.Server {
		t.Helper()
		x := &server.ExternalAuth{Issuer: idp, RootCAs: roots, RefreshInterval: 50 * time.Millisecond}
		if edit != nil {
			edit(x)
		}
		srv, err := server.New(ctx, server.Config{
			PublicURL: rsBase, Version: "0.1.0-test", External: x,
			Logger: slog.New(slog.NewJSONHandler(rsLogs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		}, rsStore)
		if err != nil {
			t.Fatalf("server.New in external mode: %v", err)
		}
		hs := httptest.NewUnstartedServer(srv.Handler)
		hs.Listener.Close()
		hs.Listener = ln
		hs.Start()
		t.Cleanup(hs.Close)
		return srv
	}
	srvA := newRS(lnA, nil)
	newRS(lnB, nil)
	newRS(lnC, func(x *server.ExternalAuth) {
		x.Claims = external.ClaimMapping{Church: "church_id", Role: "role", Roles: map[string]string{"VOLUNTARIO": "RESPONSAVEL"}}
		x.RequireAccessTokenType = true
	})
	rsB, rsC := "http://"+lnB.Addr().String(), "http://"+lnC.Addr().String()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("resource server log:\n%s", rsLogs.String())
		}
	})
	if srvA.AuthServer != nil || srvA.Verifier != nil || srvA.External == nil || srvA.AuthorizationServer != idp || srvA.ResourceURL != rsMCP {
		t.Fatalf("external-mode server: AuthServer=%v Verifier=%v External=%v AuthorizationServer=%q ResourceURL=%q",
			srvA.AuthServer, srvA.Verifier, srvA.External, srvA.AuthorizationServer, srvA.ResourceURL)
	}

	t.Run("metadata names the IdP; no authorization server here", func(t *testing.T) {
		for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
			var md struct {
				Resource             string   `json:"resource"`
				AuthorizationServers []string `json:"authorization_servers"`
			}
			if status := extGetJSON(t, http.DefaultClient, rsBase+p, &md); status != http.StatusOK ||
				md.Resource != rsMCP || !slices.Equal(md.AuthorizationServers, []string{idp}) {
				t.Errorf("%s: %d %+v, want resource %s and authorization_servers [%s]", p, status, md, rsMCP, idp)
			}
		}
		for _, p := range []string{"/authorize?response_type=code", "/token", "/register", "/revoke", "/jwks", "/login", "/login/upstream",
			"/login/callback", "/consent", "/set-password", "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration",
			"/.well-known/oauth-authorization-server/mcp"} {
			for _, method := range []string{http.MethodGet, http.MethodPost} {
				req, _ := http.NewRequest(method, rsBase+p, strings.NewReader("grant_type=authorization_code"))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusNotFound {
					t.Errorf("%s %s on the resource server: %d, want 404", method, p, resp.StatusCode)
				}
			}
		}
		status, challenge, _ := oauthtest.ReadRoster(t, rsBase, "")
		if status != http.StatusUnauthorized || !strings.Contains(challenge, `resource_metadata="`+rsBase+`/.well-known/oauth-protected-resource/mcp"`) {
			t.Errorf("/mcp without a token: %d %q", status, challenge)
		}
		// The IdP's discovery, as the resource server fetched it.
		var d struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if status := extGetJSON(t, proxy.Client(), idp+"/.well-known/openid-configuration", &d); status != http.StatusOK || d.Issuer != idp || d.JWKSURI != idp+"/jwks" {
			t.Errorf("IdP discovery: %d %+v", status, d)
		}
	})

	// A client of the IdP, and the IdP's flow driven by a cookie-jar browser through the proxy.
	client := oauthtest.RegisterPublic(t, idpDirect, "http://127.0.0.1:3000/cb")
	flow := func(t *testing.T, email, resource, scope, exchangeAt string) oauthtest.TokenResponse {
		t.Helper()
		verifier, challenge := oauthtest.NewPKCE()
		b := oauthtest.NewBrowser(t)
		b.Client.Transport = proxy.Client().Transport
		f := b.Authorize(oauthtest.Request{
			ClientID: client.ID, RedirectURI: client.RedirectURI, Scope: scope, State: "st", Challenge: challenge, Resource: resource,
		}, oauthtest.Bases{Authorize: idp, Login: idp, Consent: idp}, email, seed.DemoPassword, "approve")
		code := f.Callback.Query().Get("code")
		if code == "" || f.Callback.Query().Get("iss") != idp {
			t.Fatalf("IdP callback %s", f.Final.Location)
		}
		if resource != "" && !strings.Contains(f.Consent.Body, resource) {
			t.Errorf("the IdP's consent page does not name the resource %s", resource)
		}
		tok := oauthtest.Exchange(t, exchangeAt, client, code, verifier)
		if tok.Status != http.StatusOK {
			t.Fatalf("IdP token endpoint: %+v", tok)
		}
		return tok
	}
	link := func(t *testing.T, email, subject string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, bin, "identity", "link", "--database-url", rsDB,
			"--issuer", idp, "--subject", subject, "--email", email)
		cmd.Env = append(os.Environ(), "NEEMIAS_OAUTH_ISSUER="+idp) // as the resource server has it
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("identity link: %v\n%s", err, out)
		}
	}

	vol := flow(t, seed.DemoVoluntarioEmail, rsMCP, "openid roster:read", idpDirect)
	h, p := oauthtest.JWT(t, vol.AccessToken)
	kid1, _ := h["kid"].(string)
	if h["typ"] != "at+jwt" || kid1 == "" || p["iss"] != idp || p["aud"] != rsMCP || p["sub"] != seed.DemoVoluntarioID.String() || p["scope"] != "roster:read" {
		t.Fatalf("the IdP's access token for the resource server: header %v claims %v", h, p)
	}
	if vol.IDToken == "" {
		t.Fatal("no ID token for scope openid")
	}

	t.Run("identity by issuer and subject only", func(t *testing.T) {
		// The resource server's database has the same demo users (same ids, same e-mails), but
		// no link yet: refused.
		// A valid token of an unlinked account: 403 saying so, not 401 (no login loop).
		if status, challenge, body := oauthtest.ReadRoster(t, rsBase, vol.AccessToken); status != http.StatusForbidden ||
			!strings.Contains(challenge, `error="access_denied"`) || !strings.Contains(body, "not linked") {
			t.Errorf("unlinked subject: %d %q %s, want 403 access_denied", status, challenge, oauthtest.Snippet(body))
		}
		link(t, seed.DemoVoluntarioEmail, seed.DemoVoluntarioID.String())
		status, _, body := oauthtest.ReadRoster(t, rsBase, vol.AccessToken)
		if status != http.StatusOK || !strings.Contains(body, "total_children") {
			t.Fatalf("linked subject, within scope: %d %s", status, oauthtest.Snippet(body))
		}
		// A disabled local user loses access at once (the lookup runs on every request).
		setDisabled := func(disabled bool) {
			t.Helper()
			if _, err := rsStore.Pool().Exec(ctx, `UPDATE users SET disabled_at = CASE WHEN $2 THEN now() END WHERE id = $1`,
				seed.DemoVoluntarioID, disabled); err != nil {
				t.Fatal(err)
			}
		}
		setDisabled(true)
		if status, _, body := oauthtest.ReadRoster(t, rsBase, vol.AccessToken); status != http.StatusForbidden || !strings.Contains(body, "disabled") {
			t.Errorf("linked but disabled user: %d %s, want 403 saying disabled", status, oauthtest.Snippet(body))
		}
		setDisabled(false)
		// Another IdP account, whose id and e-mail also exist here, is still unknown.
		adm := flow(t, seed.DemoAdminEmail, rsMCP, "roster:read", idpDirect)
		if status, _, _ := oauthtest.ReadRoster(t, rsBase, adm.AccessToken); status != http.StatusForbidden {
			t.Errorf("unknown subject (the IdP's admin, not linked): %d, want 403", status)
		}
	})

	t.Run("scopes", func(t *testing.T) {
		status, challenge, _ := oauthtest.MCP(t, rsBase, vol.AccessToken, "resources/read", map[string]any{"uri": "neemias://attendance/summary"})
		if status != http.StatusForbidden || !strings.Contains(challenge, `error="insufficient_scope"`) || !slices.Contains(testsupport.ChallengeScopes(challenge), "attendance:read") {
			t.Errorf("outside the token's scopes: %d %q, want 403 insufficient_scope asking for attendance:read", status, challenge)
		}
	})

	t.Run("tokens not for this resource", func(t *testing.T) {
		if status, _, _ := oauthtest.ReadRoster(t, rsBase, vol.IDToken); status != http.StatusUnauthorized {
			t.Errorf("the IdP's ID token: %d, want 401", status)
		}
		own := flow(t, seed.DemoVoluntarioEmail, "", "roster:read", idpDirect)
		if _, p := oauthtest.JWT(t, own.AccessToken); p["aud"] != idp+"/mcp" {
			t.Fatalf("token without resource: aud %v, want the IdP's own %s/mcp", p["aud"], idp)
		}
		if status, _, _ := oauthtest.ReadRoster(t, rsBase, own.AccessToken); status != http.StatusUnauthorized {
			t.Errorf("a token whose aud is the IdP's own MCP endpoint: %d, want 401", status)
		}
		if status, _, _ := oauthtest.ReadRoster(t, idpDirect, own.AccessToken); status != http.StatusOK {
			t.Errorf("the same token at the IdP's own /mcp: %d, want 200 (it is valid, only not for us)", status)
		}
	})

	t.Run("claims mapping", func(t *testing.T) {
		// C takes the church from the "church_id" claim (it agrees with the linked user's) and
		// the role from the "role" claim (VOLUNTARIO → RESPONSAVEL); RESPONSAVEL may never hold
		// roster:read (so no step-up is offered), and the grant is the token's scopes ∩ the mapped role's. The IdP's
		// access token passes C's typ at+jwt requirement; its ID token does not.
		if status, _, _ := oauthtest.ReadRoster(t, rsC, vol.IDToken); status != http.StatusUnauthorized {
			t.Errorf("ID token where at+jwt is required: %d, want 401", status)
		}
		status, challenge, body := oauthtest.ReadRoster(t, rsC, vol.AccessToken)
		if challenge != "" || !strings.Contains(body, "Resource not found") {
			t.Errorf("role mapped from the claim: %d %q %s, want not found without a challenge (RESPONSAVEL never holds roster:read)", status, challenge, oauthtest.Snippet(body))
		}
	})

	var rotatedToken string
	t.Run("key rotation at the IdP: one JWKS refresh on the unknown kid", func(t *testing.T) {
		out, err := exec.CommandContext(ctx, bin, "keys", "rotate", "--database-url", idpDB).CombinedOutput()
		if err != nil {
			t.Fatalf("keys rotate: %v\n%s", err, out)
		}
		// A fresh IdP replica signs with the new key at once (the first one caches its key
		// for a minute); the code is redeemed there.
		idp2 := idpServe(t, idpAddrs[1])
		rotated := flow(t, seed.DemoVoluntarioEmail, rsMCP, "roster:read", "http://"+idpAddrs[1])
		if h, _ := oauthtest.JWT(t, rotated.AccessToken); h["kid"] == kid1 || h["kid"] == "" {
			t.Fatalf("rotated token kid %v, want a new one (old %s)", h["kid"], kid1)
		}
		before := jwksFetches.Load()
		for i := range 2 {
			if status, _, body := oauthtest.ReadRoster(t, rsBase, rotated.AccessToken); status != http.StatusOK {
				t.Fatalf("token signed with the new key (call %d): %d %s", i, status, oauthtest.Snippet(body))
			}
		}
		if n := jwksFetches.Load() - before; n != 1 {
			t.Errorf("JWKS fetched %d times for two calls with a new kid, want 1", n)
		}
		if status, _, _ := oauthtest.ReadRoster(t, rsBase, vol.AccessToken); status != http.StatusOK {
			t.Errorf("token of the previous key (still published): %d, want 200", status)
		}
		rotatedToken = rotated.AccessToken
		idp2.stop()
	})

	t.Run("IdP down: cached keys keep working, no keys fail closed", func(t *testing.T) {
		idp1.stop() // the second replica stopped with the rotation subtest
		closeProxy.Do(proxy.Close)
		if _, err := http.Get(idpDirect + "/healthz"); err == nil {
			t.Fatal("the IdP still answers")
		}
		for _, tok := range []string{vol.AccessToken, rotatedToken} {
			if tok == "" {
				continue // the rotation subtest failed
			}
			if status, _, body := oauthtest.ReadRoster(t, rsBase, tok); status != http.StatusOK {
				t.Errorf("replica A (keys cached) with the IdP down: %d %s, want 200", status, oauthtest.Snippet(body))
			}
		}
		status, _, body := oauthtest.ReadRoster(t, rsB, vol.AccessToken)
		if status != http.StatusServiceUnavailable || strings.Contains(body, "total_children") {
			t.Errorf("replica B (no key ever fetched) with the IdP down: %d %s, want 503", status, oauthtest.Snippet(body))
		}
	})
}

// buildServerBinary builds cmd/neemias-mcp once, into the test's temporary directory.
func buildServerBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "neemias-mcp")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/neemias/neemias-mcp/cmd/neemias-mcp")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// extProcess is a `neemias-mcp serve` OS process.
type extProcess struct {
	cmd  *exec.Cmd
	out  *testsupport.Buffer
	once sync.Once
	done chan struct{}
}

// startExtProcess runs bin with args and waits until addr answers /healthz; it is stopped
// (interrupted) when the test ends, if not before.
func startExtProcess(t *testing.T, bin, addr string, args ...string) *extProcess {
	t.Helper()
	p := &extProcess{cmd: exec.Command(bin, args...), out: &testsupport.Buffer{}, done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), "NEEMIAS_LOGIN_PROVIDER_ISSUER=", "NEEMIAS_UPSTREAM_ISSUER=", "NEEMIAS_OAUTH_ISSUER=")
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("%v output:\n%s", args, p.out.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-p.done:
			t.Fatalf("%v exited:\n%s", args, p.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v did not come up:\n%s", args, p.out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop interrupts the process and waits for it to exit (killing it after 15 s).
func (p *extProcess) stop() {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
}

func extListen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// extFreeAddrs returns n loopback addresses that were free a moment ago (for child processes).
func extFreeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().String())
	}
	for _, ln := range lns {
		ln.Close()
	}
	return out
}

func extGetJSON(t *testing.T, c *http.Client, u string, v any) int {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil && resp.StatusCode == http.StatusOK {
		t.Errorf("%s: %v", u, err)
	}
	return resp.StatusCode
}
