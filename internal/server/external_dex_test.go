package server_test

import (
	"context"
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
	"github.com/neemias/neemias-mcp/internal/oauth/external/dextest"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/server"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
	"github.com/neemias/neemias-mcp/internal/testsupport"
)

// Dex's accounts of the tests: the church's staff, by group.
var (
	dexAdmin     = dextest.User{Email: "lider@igreja.example", Username: "lider", UserID: "0b1d7c52-0000-4000-8000-000000000001", Password: "senha-do-lider-1", Groups: []string{"neemias-admins", "neemias-secretaria"}}
	dexVolunteer = dextest.User{Email: "voluntaria@igreja.example", Username: "voluntaria", UserID: "0b1d7c52-0000-4000-8000-000000000002", Password: "senha-da-voluntaria-1", Groups: []string{"neemias-voluntarios"}}
	dexBothRoles = dextest.User{Email: "dupla@igreja.example", Username: "dupla", UserID: "0b1d7c52-0000-4000-8000-000000000003", Password: "senha-dupla-1", Groups: []string{"neemias-admins", "neemias-voluntarios"}}
	dexStranger  = dextest.User{Email: "visitante@igreja.example", Username: "visitante", UserID: "0b1d7c52-0000-4000-8000-000000000004", Password: "senha-visitante-1"}
)

// TestExternalDex is resource-server mode with Dex v2.45.1 (built from the Go module proxy) as
// the church's provider, configured as docs/external-provider.md says: Dex's static public
// client neemias-mcp (no registration, no redirect URIs: any loopback redirect; "none" added
// to its metadata by --oauth-metadata-proxy), the
// audience its client id (--oauth-audience neemias-mcp), roles from Dex's groups,
// --oauth-scopes-from-role with the sensitive scopes granted by group, and clients told to ask
// for "openid groups" with client id neemias-mcp. A token from Dex's real authorization code
// flow with PKCE (its password form filled in) is served within the role's non-sensitive
// scopes and the group's sensitive ones; a cross-client token of a trusted peer
// (audience:server:client_id:neemias-mcp) too; a token of another client (aud its own id) is
// refused (401); an unlinked account and one in two role groups get 403 saying why.
func TestExternalDex(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs Dex")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	mcpClient := dextest.Client{ID: "neemias-mcp", Name: "Neemias MCP", Public: true, TrustedPeers: []string{"secretaria-scripts"}}
	scripts := dextest.Client{ID: "secretaria-scripts", Secret: "scripts-secret-123", Name: "Scripts da secretaria", RedirectURIs: []string{"http://127.0.0.1:9/cb"}}
	d := dextest.Start(t, dextest.Config{Clients: []dextest.Client{mcpClient, scripts}, Users: []dextest.User{dexAdmin, dexVolunteer, dexBothRoles, dexStranger}})

	dbURL := storetest.NewDatabase(t)
	if _, err := seed.Run(ctx, storetest.Pool(t, dbURL), seed.Options{ChildrenPerChurch: 5, Months: 1}); err != nil {
		t.Fatal(err)
	}
	st, err := store.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	for sub, user := range map[string]uuid.UUID{dexAdmin.Subject(): seed.DemoAdminID, dexVolunteer.Subject(): seed.DemoVoluntarioID, dexBothRoles.Subject(): seed.DemoCadastroID} {
		if err := oauth.LinkUpstreamIdentity(ctx, st, d.Issuer, sub, seed.DemoChurchID, user); err != nil {
			t.Fatal(err)
		}
	}
	logs := &testsupport.Buffer{}
	ln := extListen(t)
	base := "http://" + ln.Addr().String()
	// The docs' Dex recipe (docs/external-provider.md), flag for flag.
	srv, err := server.New(ctx, server.Config{
		PublicURL: base, Version: "0.1.0-test", Logger: slog.New(slog.NewJSONHandler(logs, nil)),
		External: &server.ExternalAuth{
			Issuer: d.Issuer, Audience: "neemias-mcp", ScopesFromRole: true,
			Claims: external.ClaimMapping{
				Role: "groups", Roles: map[string]string{"neemias-admins": "ADMIN", "neemias-voluntarios": "VOLUNTARIO"},
				ScopeGrants: map[string][]string{"neemias-secretaria": {"children:read", "guardians:read"}},
			},
			ChallengeScopes: []string{"openid", "groups"}, ClientID: "neemias-mcp",
			// Dex's metadata omits "none" from token_endpoint_auth_methods_supported although
			// its public clients need no secret: public MCP clients need the proxy.
			MetadataProxy: true,
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
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("resource server log:\n%s", logs.String())
		}
	})

	var md struct {
		AS       []string `json:"authorization_servers"`
		Scopes   []string `json:"scopes_supported"`
		ClientID string   `json:"client_id"`
	}
	if status := extGetJSON(t, http.DefaultClient, base+"/.well-known/oauth-protected-resource/mcp", &md); status != http.StatusOK ||
		!slices.Equal(md.AS, []string{base}) || !slices.Equal(md.Scopes, []string{"openid", "groups"}) || md.ClientID != "neemias-mcp" {
		t.Errorf("protected-resource metadata: %d %+v", status, md)
	}
	var asm struct {
		Issuer  string   `json:"issuer"`
		Methods []string `json:"token_endpoint_auth_methods_supported"`
		Authz   string   `json:"authorization_endpoint"`
	}
	if status := extGetJSON(t, http.DefaultClient, base+"/.well-known/oauth-authorization-server", &asm); status != http.StatusOK ||
		asm.Issuer != d.Issuer || !slices.Contains(asm.Methods, "none") || asm.Authz != d.Issuer+"/auth" {
		t.Errorf("Dex's metadata through the proxy: %d %+v", status, asm)
	}

	// What an MCP client does with what it was told: Dex's authorization code flow with PKCE
	// as the public client neemias-mcp, a loopback redirect, scope "openid groups".
	login := func(u dextest.User) string {
		t.Helper()
		tok := d.AuthorizationCode(t, mcpClient, "http://127.0.0.1:33418/oauth/callback", strings.Join(md.Scopes, " "), u.Email, u.Password, nil)
		if tok.Status != http.StatusOK || tok.AccessToken == "" {
			t.Fatalf("Dex flow for %s: %+v", u.Email, tok)
		}
		return tok.AccessToken
	}
	child := map[string]any{"uri": "neemias://roster/children/" + uuid.NewString()}
	admin := login(dexAdmin)
	if status, _, body := oauthtest.ReadRoster(t, base, admin); status != http.StatusOK || !strings.Contains(body, "total_children") {
		t.Errorf("ADMIN through Dex: %d %s", status, oauthtest.Snippet(body))
	}
	if status, challenge, body := oauthtest.MCP(t, base, admin, "resources/read", child); status == http.StatusForbidden || challenge != "" {
		t.Errorf("children:read through the neemias-secretaria group: %d %q %s", status, challenge, oauthtest.Snippet(body))
	}
	vol := login(dexVolunteer)
	if status, _, _ := oauthtest.ReadRoster(t, base, vol); status != http.StatusOK {
		t.Errorf("VOLUNTARIO through Dex: %d", status)
	}
	// pickups:read is sensitive and within VOLUNTARIO's role: not granted without a group.
	pickups := map[string]any{"uri": "neemias://children/" + uuid.NewString() + "/pickup-adults"}
	if status, challenge, _ := oauthtest.MCP(t, base, vol, "resources/read", pickups); status != http.StatusForbidden || !strings.Contains(challenge, "pickups:read") {
		t.Errorf("pickups:read without a group granting it: %d %q, want 403", status, challenge)
	}
	for _, tc := range []struct {
		u    dextest.User
		want string
	}{{dexStranger, "not linked"}, {dexBothRoles, "more than one Neemias role"}} {
		status, challenge, body := oauthtest.ReadRoster(t, base, login(tc.u))
		if status != http.StatusForbidden || !strings.Contains(challenge, "access_denied") || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %q %s, want 403 saying %q", tc.u.Email, status, challenge, oauthtest.Snippet(body), tc.want)
		}
	}
	if !strings.Contains(logs.String(), dexStranger.Subject()) {
		t.Error("the log does not name the unlinked subject")
	}

	// A trusted peer's cross-client token names neemias-mcp in aud: served. The peer's own
	// token (aud its client id) is not for us: 401.
	cross := d.PasswordToken(t, scripts, dexAdmin.Email, dexAdmin.Password, "openid groups audience:server:client_id:neemias-mcp")
	if status, _, _ := oauthtest.ReadRoster(t, base, cross.AccessToken); cross.Status != http.StatusOK || status != http.StatusOK {
		t.Errorf("cross-client token: Dex %d, resource server %d", cross.Status, status)
	}
	own := d.PasswordToken(t, scripts, dexAdmin.Email, dexAdmin.Password, "openid groups")
	if status, challenge, _ := oauthtest.ReadRoster(t, base, own.AccessToken); own.Status != http.StatusOK || status != http.StatusUnauthorized || !strings.Contains(challenge, "invalid_token") {
		t.Errorf("another client's token: Dex %d, resource server %d %q, want 401", own.Status, status, challenge)
	}
}
