package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/oauth/external"
	"github.com/neemias/neemias-mcp/internal/oauth/external/hydratest"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/server"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
	"github.com/neemias/neemias-mcp/internal/testsupport"
)

// hydraGroups maps the Hydra test users' groups (the "ext.groups" claim Hydra puts custom
// access-token claims under, in JWTs and introspection answers alike) to local roles, as
// docs/external-provider.md shows for Hydra.
var hydraGroups = external.ClaimMapping{Role: "ext.groups", Roles: map[string]string{
	"neemias-admins": "ADMIN", "neemias-voluntarios": "VOLUNTARIO", "neemias-responsaveis": "RESPONSAVEL",
}}

// extRS is one in-process resource server in external provider mode.
type extRS struct {
	srv  *server.Server
	base string
	mcp  string
	logs *testsupport.Buffer
}

func startExtRS(t *testing.T, st *store.Store, x server.ExternalAuth) *extRS {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rs := &extRS{base: "http://" + ln.Addr().String(), logs: &testsupport.Buffer{}}
	rs.mcp = rs.base + "/mcp"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if x.RefreshInterval == 0 {
		x.RefreshInterval = 50 * time.Millisecond
	}
	rs.srv, err = server.New(ctx, server.Config{PublicURL: rs.base, Version: "0.1.0-test", External: &x,
		Logger: slog.New(slog.NewJSONHandler(rs.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}, st)
	if err != nil {
		ln.Close()
		t.Fatalf("server.New in external mode: %v", err)
	}
	hs := httptest.NewUnstartedServer(rs.srv.Handler)
	hs.Listener.Close()
	hs.Listener = ln
	hs.Start()
	t.Cleanup(hs.Close)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("resource server %s log:\n%s", rs.base, rs.logs.String())
		}
	})
	return rs
}

// hydraFlow is a public client's authorization code + PKCE flow at Hydra's endpoints (or
// those of a metadata document naming them), the user's browser played by hydratest.
func hydraFlow(t *testing.T, h *hydratest.Hydra, c hydratest.Client, authURL, tokenURL string, scope ...string) *oauth2.Token {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := oauth2.Config{ClientID: c.ID, RedirectURL: c.RedirectURIs[0], Scopes: scope,
		Endpoint: oauth2.Endpoint{AuthURL: authURL, TokenURL: tokenURL, AuthStyle: oauth2.AuthStyleInParams}}
	verifier := oauth2.GenerateVerifier()
	cb, err := h.Browse(ctx, cfg.AuthCodeURL("state-0123456789", oauth2.S256ChallengeOption(verifier)))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, h.Client), cb.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func hydraToken(t *testing.T, h *hydratest.Hydra, c hydratest.Client, scope ...string) string {
	t.Helper()
	return hydraFlow(t, h, c, h.Issuer+"/oauth2/auth", h.Issuer+"/oauth2/token", scope...).AccessToken
}

// sdkOAuthSession connects the go-sdk MCP client to mcpURL with the SDK's own OAuth handler
// (authorization code + PKCE with a pre-registered public client): it discovers the
// authorization server from the 401 and the protected-resource metadata, and Hydra's login and
// consent are answered by hydratest.
func sdkOAuthSession(t *testing.T, h *hydratest.Hydra, c hydratest.Client, mcpURL string) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	handler, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		PreregisteredClient: &oauthex.ClientCredentials{ClientID: c.ID, Issuer: h.Issuer},
		RedirectURL:         c.RedirectURIs[0],
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			cb, err := h.Browse(ctx, args.URL)
			if err != nil {
				return nil, err
			}
			return &auth.AuthorizationResult{Code: cb.Query().Get("code"), State: cb.Query().Get("state"), Iss: cb.Query().Get("iss")}, nil
		},
		Client: h.Client,
	})
	if err != nil {
		t.Fatal(err)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "neemias-hydra-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: mcpURL, OAuthHandler: handler, HTTPClient: h.Client}, nil)
	if err != nil {
		t.Fatalf("go-sdk client with OAuth against %s: %v", mcpURL, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func readRosterSDK(t *testing.T, cs *sdk.ClientSession) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "neemias://roster/children"})
	if err != nil {
		t.Fatalf("resources/read roster: %v", err)
	}
	if len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, "total_children") {
		t.Fatalf("roster: %+v", res.Contents)
	}
}

// hydraScopes are every scope the Hydra clients may ask for.
func hydraScopes() []string {
	out := []string{"openid", "offline_access"}
	for _, s := range scopes.All() {
		out = append(out, s.Name)
	}
	return out
}

// TestExternalHydra runs Neemias in external provider mode against ORY Hydra v2.3.0, a real
// third-party OpenID Connect provider (built from the module proxy and run by hydratest on
// its own database, behind a TLS front), on a seeded database of its own where Hydra's test
// subjects are linked to the demo users:
//   - JWT access tokens with our audience: the go-sdk client's OAuth handler completes the
//     flow and reads the roster; group → role mapping from Hydra's ext.groups claim;
//   - opaque tokens validated by RFC 7662 introspection: the go-sdk client again; answers
//     cached (one introspection for repeated calls), a revocation seen once the cache time has
//     passed, a refresh token refused, the introspection endpoint down → 503 + Retry-After;
//   - the metadata proxy over a Hydra front that drops "none" (Keycloak's shape);
//   - tokens without aud: refused by default, accepted only for a listed client with our
//     scopes (logged and audited), another resource's aud refused regardless;
//   - start-up with the provider down: 503 + Retry-After and /readyz unavailable, then
//     recovery without a restart.
func TestExternalHydra(t *testing.T) {
	st := storetest.NewSeeded(t, seed.Options{ChildrenPerChurch: 20, Months: 1})
	dropNone := func(doc map[string]any) {
		methods, _ := doc["token_endpoint_auth_methods_supported"].([]any)
		doc["token_endpoint_auth_methods_supported"] = slices.DeleteFunc(methods, func(m any) bool { return m == "none" })
	}
	hj := hydratest.Start(t, hydratest.Options{EditDiscovery: dropNone})
	ho := hydratest.Start(t, hydratest.Options{OpaqueTokens: true})
	ctx := context.Background()
	for _, h := range []*hydratest.Hydra{hj, ho} {
		for sub, user := range map[string]uuid.UUID{"hydra-voluntario": seed.DemoVoluntarioID, "hydra-admin": seed.DemoAdminID} {
			if err := oauth.LinkUpstreamIdentity(ctx, st, h.Issuer, sub, seed.DemoChurchID, user); err != nil {
				t.Fatal(err)
			}
		}
	}

	// A: JWTs, groups mapped. C: JWTs, metadata proxy, tokens without aud from client
	// "cliC" accepted. B: opaque tokens by introspection through a switchable, counting proxy.
	rsA := startExtRS(t, st, server.ExternalAuth{Issuer: hj.Issuer, RootCAs: hj.RootCAs, Claims: hydraGroups})
	var introCalls atomic.Int64
	var introDown atomic.Bool
	adminURL, _ := url.Parse(ho.AdminURL)
	adminProxy := httputil.NewSingleHostReverseProxy(adminURL)
	intro := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if introDown.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		introCalls.Add(1)
		adminProxy.ServeHTTP(w, r)
	}))
	t.Cleanup(intro.Close)
	const cacheTTL = time.Second
	rsB := startExtRS(t, st, server.ExternalAuth{Issuer: ho.Issuer, RootCAs: ho.RootCAs, Claims: hydraGroups,
		Introspection: &external.Introspection{Endpoint: intro.URL + "/admin/oauth2/introspect", ClientID: "neemias-rs", ClientSecret: "s3cret", CacheTTL: cacheTTL}})

	cliA := hj.CreateClient(t, "http://127.0.0.1:9/callback", hydraScopes(), []string{rsA.mcp})
	cliB := ho.CreateClient(t, "http://127.0.0.1:9/callback", hydraScopes(), []string{rsB.mcp})
	vol := func(aud string, groups ...string) hydratest.User {
		return hydratest.User{Subject: "hydra-voluntario", Audience: []string{aud}, Claims: map[string]any{"groups": groups}}
	}

	t.Run("JWT access tokens: the go-sdk OAuth client", func(t *testing.T) {
		hj.SetUser(vol(rsA.mcp, "neemias-voluntarios"))
		readRosterSDK(t, sdkOAuthSession(t, hj, cliA, rsA.mcp))
	})

	t.Run("opaque tokens by introspection: the go-sdk OAuth client", func(t *testing.T) {
		ho.SetUser(vol(rsB.mcp, "neemias-voluntarios"))
		readRosterSDK(t, sdkOAuthSession(t, ho, cliB, rsB.mcp))
	})

	t.Run("group to role mapping from Hydra's claims", func(t *testing.T) {
		// The linked user is VOLUNTARIO; a mapped group overrides it. RESPONSAVEL may never
		// read the roster (answered as not found, no step-up); two mapped roles are ambiguous
		// and refused.
		const counts, notFound = "total_children", "Resource not found"
		cases := []struct {
			name   string
			groups []string
			want   int
			body   string
		}{
			{"mapped to VOLUNTARIO", []string{"neemias-voluntarios", "coral"}, http.StatusOK, counts},
			{"mapped to ADMIN", []string{"neemias-admins"}, http.StatusOK, counts},
			{"mapped to RESPONSAVEL", []string{"neemias-responsaveis"}, http.StatusOK, notFound},
			{"no mapped group: the linked user's role", []string{"coral"}, http.StatusOK, counts},
			{"two mapped roles", []string{"neemias-admins", "neemias-responsaveis"}, http.StatusForbidden, ""},
		}
		for _, tc := range cases {
			for _, p := range []struct {
				name string
				h    *hydratest.Hydra
				c    hydratest.Client
				rs   *extRS
			}{{"jwt", hj, cliA, rsA}, {"introspected", ho, cliB, rsB}} {
				p.h.SetUser(vol(p.rs.mcp, tc.groups...))
				tok := hydraToken(t, p.h, p.c, "roster:read")
				if status, _, body := oauthtest.ReadRoster(t, p.rs.base, tok); status != tc.want || !strings.Contains(body, tc.body) {
					t.Errorf("%s (%s): %d %s, want %d %q", tc.name, p.name, status, oauthtest.Snippet(body), tc.want, tc.body)
				}
			}
		}
	})

	t.Run("introspection: cache, revocation, refresh tokens, endpoint down", func(t *testing.T) {
		ho.SetUser(vol(rsB.mcp, "neemias-voluntarios"))
		tok := hydraFlow(t, ho, cliB, ho.Issuer+"/oauth2/auth", ho.Issuer+"/oauth2/token", "roster:read", "offline_access")
		before := introCalls.Load()
		for i := range 3 {
			if status, _, body := oauthtest.ReadRoster(t, rsB.base, tok.AccessToken); status != http.StatusOK {
				t.Fatalf("opaque token, call %d: %d %s", i, status, oauthtest.Snippet(body))
			}
		}
		if n := introCalls.Load() - before; n != 1 {
			t.Errorf("%d introspections for three calls within the cache time, want 1", n)
		}
		if tok.RefreshToken == "" {
			t.Fatal("no refresh token for offline_access")
		}
		if status, _, _ := oauthtest.ReadRoster(t, rsB.base, tok.RefreshToken); status != http.StatusUnauthorized {
			t.Errorf("a refresh token (active at introspection, token_use refresh_token) as bearer: %d, want 401", status)
		}
		// Revoked at Hydra: seen once the cached answer has expired.
		ho.RevokeConsent(t, "hydra-voluntario")
		time.Sleep(cacheTTL + 100*time.Millisecond)
		if status, _, _ := oauthtest.ReadRoster(t, rsB.base, tok.AccessToken); status != http.StatusUnauthorized {
			t.Errorf("revoked token after the cache time: %d, want 401", status)
		}
		// The endpoint down: a token not in the cache cannot be decided.
		fresh := hydraToken(t, ho, cliB, "roster:read")
		introDown.Store(true)
		defer introDown.Store(false)
		resp := mcpPost(t, rsB.mcp, fresh)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Errorf("introspection endpoint down: %d Retry-After %q, want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		introDown.Store(false)
		if status, _, _ := oauthtest.ReadRoster(t, rsB.base, fresh); status != http.StatusOK {
			t.Errorf("introspection back: %d, want 200", status)
		}
	})

	rsC := startExtRS(t, st, server.ExternalAuth{Issuer: hj.Issuer, RootCAs: hj.RootCAs, MetadataProxy: true})
	cliC := hj.CreateClient(t, "http://127.0.0.1:9/callback", hydraScopes(), []string{rsC.mcp, "https://other.example/mcp"})
	other := hj.CreateClient(t, "http://127.0.0.1:9/callback", hydraScopes(), nil)
	rsC2 := startExtRS(t, st, server.ExternalAuth{Issuer: hj.Issuer, RootCAs: hj.RootCAs, AcceptMissingAudience: []string{cliC.ID}})

	t.Run("metadata proxy over a provider without none", func(t *testing.T) {
		var upstream map[string]any
		if status := extGetJSON(t, hj.Client, hj.Issuer+"/.well-known/openid-configuration", &upstream); status != http.StatusOK ||
			slices.Contains(strs(upstream["token_endpoint_auth_methods_supported"]), "none") {
			t.Fatalf("Hydra's front: %d, methods %v (want no none)", status, upstream["token_endpoint_auth_methods_supported"])
		}
		// Off by default.
		resp, err := http.Get(rsA.base + "/.well-known/oauth-authorization-server")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("metadata proxy off: %d, want 404", resp.StatusCode)
		}
		// An MCP client's discovery: 401 → protected-resource metadata → the authorization
		// server it names (our origin) → its metadata, which must offer "none" to a public
		// client; then the flow against the endpoints it names (Hydra's).
		status, challenge, _ := oauthtest.ReadRoster(t, rsC.base, "")
		if status != http.StatusUnauthorized {
			t.Fatalf("no token: %d", status)
		}
		var prm struct {
			AuthorizationServers []string `json:"authorization_servers"`
		}
		prmURL := between(challenge, `resource_metadata="`, `"`)
		if status := extGetJSON(t, http.DefaultClient, prmURL, &prm); status != http.StatusOK || !slices.Equal(prm.AuthorizationServers, []string{rsC.base}) {
			t.Fatalf("protected-resource metadata %s: %d %+v, want authorization_servers [%s]", prmURL, status, prm, rsC.base)
		}
		var proxied map[string]any
		if status := extGetJSON(t, http.DefaultClient, prm.AuthorizationServers[0]+"/.well-known/oauth-authorization-server", &proxied); status != http.StatusOK {
			t.Fatalf("proxied metadata: %d", status)
		}
		if got := strs(proxied["token_endpoint_auth_methods_supported"]); !slices.Contains(got, "none") {
			t.Fatalf("proxied token_endpoint_auth_methods_supported %v: no none", got)
		}
		rest := maps.Clone(proxied)
		delete(rest, "token_endpoint_auth_methods_supported")
		delete(upstream, "token_endpoint_auth_methods_supported")
		if !jsonEqual(rest, upstream) {
			t.Errorf("proxied metadata differs from the provider's beyond token_endpoint_auth_methods_supported:\n%v\n%v", rest, upstream)
		}
		hj.SetUser(vol(rsC.mcp, "x"))
		tok := hydraFlow(t, hj, cliC, proxied["authorization_endpoint"].(string), proxied["token_endpoint"].(string), "roster:read")
		cs, _ := (&app{mcp: rsC.mcp}).connect(t, ctx, eras[0], tok.AccessToken)
		readRosterSDK(t, cs)
	})

	t.Run("tokens without aud", func(t *testing.T) {
		noAud := func(c hydratest.Client, scope ...string) string {
			hj.SetUser(hydratest.User{Subject: "hydra-voluntario"}) // no audience granted
			tok := hydraToken(t, hj, c, scope...)
			if _, p := oauthtest.JWT(t, tok); p["aud"] != nil && len(p["aud"].([]any)) != 0 {
				t.Fatalf("Hydra granted aud %v", p["aud"])
			}
			return tok
		}
		listed, unlisted := noAud(cliC, "roster:read"), noAud(other, "roster:read")
		onlyOpenID := noAud(cliC, "openid")
		hj.SetUser(hydratest.User{Subject: "hydra-voluntario", Audience: []string{"https://other.example/mcp"}})
		otherAud := hydraToken(t, hj, cliC, "roster:read")
		auditsBefore := countAudits(t, st)
		cases := []struct {
			name  string
			base  string
			token string
			want  int
		}{
			{"no list: refused (the default)", rsA.base, listed, http.StatusUnauthorized},
			{"listed client", rsC2.base, listed, http.StatusOK},
			{"unlisted client", rsC2.base, unlisted, http.StatusUnauthorized},
			{"listed client, none of our scopes", rsC2.base, onlyOpenID, http.StatusUnauthorized},
			{"listed client, another resource's aud", rsC2.base, otherAud, http.StatusUnauthorized},
		}
		for _, tc := range cases {
			if status, _, body := oauthtest.ReadRoster(t, tc.base, tc.token); status != tc.want {
				t.Errorf("%s: %d %s, want %d", tc.name, status, oauthtest.Snippet(body), tc.want)
			}
		}
		if n := countAudits(t, st) - auditsBefore; n != 1 {
			t.Errorf("%d audit entries token.accepted_without_aud, want 1 (the one acceptance)", n)
		}
		if got := strings.Count(rsC2.logs.String(), "access token without audience accepted"); got != 1 {
			t.Errorf("%d log lines of an acceptance without audience, want 1", got)
		}
		if strings.Contains(rsC2.logs.String(), listed) {
			t.Error("the token is in the log")
		}
	})

	t.Run("start-up with the provider down, then recovery", func(t *testing.T) {
		hj.SetUser(vol(rsA.mcp, "neemias-voluntarios"))
		tok := hydraToken(t, hj, cliA, "roster:read")
		hj.Stop() // the TLS front answers 502, as a provider whose backend is down
		start := time.Now()
		rsD := startExtRS(t, st, server.ExternalAuth{Issuer: hj.Issuer, RootCAs: hj.RootCAs, Audience: rsA.mcp})
		t.Logf("server.New with the provider down: %v", time.Since(start))
		if status, body := readyz(t, rsD.base); status != http.StatusServiceUnavailable || !strings.Contains(body, "identity_provider") {
			t.Errorf("/readyz with the provider down: %d %s", status, body)
		}
		resp := mcpPost(t, rsD.mcp, tok)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Errorf("MCP with the provider down: %d Retry-After %q, want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		hj.Resume(t)
		deadline := time.Now().Add(10 * time.Second)
		for {
			status, body := readyz(t, rsD.base)
			if status == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("/readyz did not recover: %d %s", status, body)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if status, _, body := oauthtest.ReadRoster(t, rsD.base, tok); status != http.StatusOK {
			t.Errorf("MCP after the provider came back: %d %s", status, oauthtest.Snippet(body))
		}
	})
}

func mcpPost(t *testing.T, mcpURL, token string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, mcpURL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"neemias://roster/children"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// readyz returns /readyz's status and body.
func readyz(t *testing.T, base string) (int, string) {
	t.Helper()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func countAudits(t *testing.T, st *store.Store) int {
	t.Helper()
	var n int
	if err := st.Pool().QueryRow(context.Background(),
		`SELECT count(*) FROM audit_log WHERE capability = 'oauth_external' AND action = 'token.accepted_without_aud' AND outcome = 'allowed'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func between(s, from, to string) string {
	_, after, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(after, to)
	return v
}

func strs(v any) []string {
	a, _ := v.([]any)
	out := make([]string, 0, len(a))
	for _, e := range a {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
