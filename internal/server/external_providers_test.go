package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/oauth/external"
	"github.com/neemias/neemias-mcp/internal/oauth/external/oidctest"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/server"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
	"github.com/neemias/neemias-mcp/internal/testsupport"
)

// TestExternalProviderWithoutOurScopes is resource-server mode for a provider shaped like Dex
// (issue 25), against a test issuer on loopback http: a client-id audience, no scope claim,
// no registration. What clients are told (the 401's scope, scopes_supported, the
// pre-registered client id, the OpenAPI document's endpoints) is the provider's; tokens
// without our scopes get the role's non-sensitive scopes with --oauth-scopes-from-role (a
// risk said at start-up), sensitive ones by group; an unlinked account gets 403 saying so
// (logged at the default level); and a 503 for an unreachable provider carries the
// request's JSON-RPC id.
func TestExternalProviderWithoutOurScopes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dbURL := storetest.NewDatabase(t)
	if _, err := seed.Run(ctx, storetest.Pool(t, dbURL), seed.Options{ChildrenPerChurch: 5, Months: 1}); err != nil {
		t.Fatal(err)
	}
	st, err := store.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	idp := oidctest.NewPlain(t) // http://127.0.0.1:port, like Dex's dev issuer
	logs := &testsupport.Buffer{}
	start := func(t *testing.T, issuer string) string {
		t.Helper()
		ln := extListen(t)
		base := "http://" + ln.Addr().String()
		srv, err := server.New(ctx, server.Config{
			PublicURL: base, Version: "0.1.0-test", Metrics: newMetrics(), MetricsOnMain: true,
			Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})), // the default level
			External: &server.ExternalAuth{
				Issuer: issuer, Audience: "neemias-mcp", ScopesFromRole: true, RefreshInterval: 50 * time.Millisecond,
				Claims:          external.ClaimMapping{ScopeGrants: map[string][]string{"secretaria": {"children:read"}}},
				ChallengeScopes: []string{"openid", "groups", "audience:server:client_id:neemias-mcp"},
				ClientID:        "neemias-mcp",
			},
		}, st)
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewUnstartedServer(srv.Handler)
		hs.Listener.Close()
		hs.Listener = ln
		hs.Start()
		t.Cleanup(hs.Close)
		return base
	}
	base := start(t, idp.URL)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	if !strings.Contains(logs.String(), `"level":"WARN","msg":"risk: tokens without this server's scopes`) {
		t.Errorf("no start-up warning for --oauth-scopes-from-role:\n%s", logs.String())
	}

	t.Run("what clients are told", func(t *testing.T) {
		var md struct {
			Scopes   []string `json:"scopes_supported"`
			ClientID string   `json:"client_id"`
			AS       []string `json:"authorization_servers"`
		}
		if status := extGetJSON(t, http.DefaultClient, base+"/.well-known/oauth-protected-resource/mcp", &md); status != http.StatusOK ||
			!slices.Equal(md.Scopes, []string{"openid", "groups", "audience:server:client_id:neemias-mcp"}) || md.ClientID != "neemias-mcp" ||
			!slices.Equal(md.AS, []string{idp.URL}) {
			t.Errorf("protected-resource metadata: %d %+v", status, md)
		}
		status, challenge, _ := oauthtest.ReadRoster(t, base, "")
		if status != http.StatusUnauthorized || !strings.Contains(challenge, `scope="openid groups audience:server:client_id:neemias-mcp"`) {
			t.Errorf("401 challenge: %d %q", status, challenge)
		}
		var doc struct {
			Components struct {
				SecuritySchemes map[string]struct {
					Flows struct {
						AuthorizationCode struct {
							AuthorizationURL string `json:"authorizationUrl"`
							TokenURL         string `json:"tokenUrl"`
						} `json:"authorizationCode"`
					} `json:"flows"`
				} `json:"securitySchemes"`
			} `json:"components"`
		}
		extGetJSON(t, http.DefaultClient, base+"/api/openapi.json", &doc)
		if f := doc.Components.SecuritySchemes["oauth2"].Flows.AuthorizationCode; f.AuthorizationURL != idp.URL+"/authorize" || f.TokenURL != idp.URL+"/token" {
			t.Errorf("OpenAPI oauth2 flow names %+v, want the provider's endpoints", f)
		}
	})

	token := func(sub string, groups ...string) string {
		c := idp.Claims(sub, "neemias-mcp") // Dex: aud is the client id
		delete(c, "client_id")
		c["azp"] = "neemias-mcp"
		if groups != nil {
			c["groups"] = groups
		}
		return idp.Sign(t, c, oidctest.SignOpts{Typ: "-"}) // Dex signs without typ
	}
	t.Run("unlinked account: 403 that says so", func(t *testing.T) {
		status, challenge, body := oauthtest.ReadRoster(t, base, token("CiQwOGE4Njg0Yi1kYjg4LTRiNzMtOTBhOS0zY2QxNjYxZjU0NjYSBWxvY2Fs"))
		if status != http.StatusForbidden || !strings.Contains(challenge, `error="access_denied"`) || !strings.Contains(body, "not linked") {
			t.Errorf("unlinked: %d %q %s, want 403 access_denied saying the account is not linked", status, challenge, oauthtest.Snippet(body))
		}
		// REST says the same.
		req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/roster/children", nil)
		req.Header.Set("Authorization", "Bearer "+token("CiQwOGE4Njg0Yi1kYjg4LTRiNzMtOTBhOS0zY2QxNjYxZjU0NjYSBWxvY2Fs"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		rb, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(rb), "not linked") {
			t.Errorf("REST, unlinked: %d %s", resp.StatusCode, rb)
		}
		if _, _, text := restCall(t, "GET", base+"/metrics", "", ""); !strings.Contains(text, `neemias_auth_failures_total{reason="denied",surface="mcp"} 1`) {
			t.Errorf("/metrics does not count the denial")
		}
		if !strings.Contains(logs.String(), `"subject":"CiQwOGE4Njg0Yi1kYjg4LTRiNzMtOTBhOS0zY2QxNjYxZjU0NjYSBWxvY2Fs"`) {
			t.Errorf("the log does not name the subject to link at the default level:\n%s", logs.String())
		}
	})

	t.Run("scopes from the role, sensitive ones by group", func(t *testing.T) {
		if err := oauth.LinkUpstreamIdentity(ctx, st, idp.URL, "sub-admin", seed.DemoChurchID, seed.DemoAdminID); err != nil {
			t.Fatal(err)
		}
		if status, _, body := oauthtest.ReadRoster(t, base, token("sub-admin")); status != http.StatusOK || !strings.Contains(body, "total_children") {
			t.Errorf("roster:read from the role: %d %s", status, oauthtest.Snippet(body))
		}
		child := map[string]any{"uri": "neemias://roster/children/" + uuid.NewString()}
		if status, challenge, _ := oauthtest.MCP(t, base, token("sub-admin"), "resources/read", child); status != http.StatusForbidden ||
			!strings.Contains(challenge, "children:read") {
			t.Errorf("children:read without the group: %d %q, want 403", status, challenge)
		}
		if status, challenge, body := oauthtest.MCP(t, base, token("sub-admin", "secretaria"), "resources/read", child); status == http.StatusForbidden || challenge != "" {
			t.Errorf("children:read through the secretaria group: %d %q %s", status, challenge, oauthtest.Snippet(body))
		}
	})

	t.Run("503 for an unreachable provider carries the JSON-RPC id", func(t *testing.T) {
		down := oidctest.NewPlain(t)
		down.SetJWKSMode(oidctest.JWKSDown)
		b := start(t, down.URL)
		c := down.Claims("sub-admin", "neemias-mcp")
		req, _ := http.NewRequest(http.MethodPost, b+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":"req-\u00e9-9007199254740993","method":"tools/list"}`))
		req.Header.Set("Authorization", "Bearer "+down.Sign(t, c, oidctest.SignOpts{}))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var rpc struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(body, &rpc)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || string(rpc.ID) != `"req-\u00e9-9007199254740993"` {
			t.Errorf("provider down: %d Retry-After %q %s, want 503 with the request's id byte for byte", resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	})
}
