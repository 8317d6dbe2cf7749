package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/neemias/neemias-mcp/internal/oauth/external/oidctest"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
	"github.com/neemias/neemias-mcp/internal/testsupport"
)

// TestServeExternalProviderFlags runs `serve --demo` in external provider mode from its flags
// (issuer, CA file, role claim and map, a required claim) against a test OpenID Connect
// issuer: the printed instructions and the metadata name the issuer, the built-in
// authorization server is absent, and a provider token of a subject linked with `identity
// link` is served with the role the claim maps to; without the required claim, or for an
// unlinked subject, it is refused. (internal/server's TestExternalProviderMode runs the mode
// against the built-in authorization server as a real provider.)
func TestServeExternalProviderFlags(t *testing.T) {
	idp := oidctest.New(t)
	caFile := filepath.Join(t.TempDir(), "idp-ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: idp.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	dbURL := storetest.NewEmptyDatabase(t)
	ctx, cancel := context.WithCancel(context.Background())
	var out testsupport.Buffer
	cmd := root()
	cmd.SetOut(&out)
	cmd.SetErr(io.Discard)
	cmd.SetArgs([]string{"serve", "--demo", "--addr", "127.0.0.1:0", "--database-url", dbURL,
		"--oauth-issuer", idp.URL, "--oauth-ca-file", caFile, "--oauth-role-claim", "groups",
		"--oauth-role-map", "ministerio-secretaria=CADASTRO,ministerio-lideres=ADMIN", "--oauth-required-claim", "token_use=access"})
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("serve did not stop")
		}
	})
	endpoint := regexp.MustCompile(`MCP endpoint:\s+(\S+)`)
	deadline := time.Now().Add(90 * time.Second)
	for !strings.Contains(out.String(), "identity link") {
		select {
		case err := <-done:
			done <- nil
			t.Fatalf("serve exited early: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no instructions printed:\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	text := out.String()
	if !strings.Contains(text, "external provider mode") || !regexp.MustCompile(`OAuth server:\s+`+regexp.QuoteMeta(idp.URL)).MatchString(text) ||
		strings.Contains(text, "ADMIN ") || strings.Contains(text, "Bearer") {
		t.Errorf("instructions in external provider mode (no dev tokens):\n%s", text)
	}
	mcpURL := endpoint.FindStringSubmatch(text)[1]
	base := strings.TrimSuffix(mcpURL, "/mcp")

	var md struct {
		AuthorizationServers []string `json:"authorization_servers"`
	}
	resp, err := http.Get(base + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	_ = json.NewDecoder(resp.Body).Decode(&md)
	resp.Body.Close()
	if len(md.AuthorizationServers) != 1 || md.AuthorizationServers[0] != idp.URL {
		t.Errorf("authorization_servers = %v, want [%s]", md.AuthorizationServers, idp.URL)
	}
	for _, p := range []string{"/authorize", "/token", "/register", "/jwks", "/.well-known/oauth-authorization-server"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, resp.StatusCode)
		}
	}

	var linkOut bytes.Buffer
	link := root()
	link.SetOut(&linkOut)
	link.SetErr(&linkOut)
	link.SetArgs([]string{"identity", "link", "--database-url", dbURL, "--issuer", idp.URL, "--subject", "conta-123", "--email", seed.DemoVoluntarioEmail,
		"--trusted-issuer", idp.URL})
	if err := link.Execute(); err != nil {
		t.Fatalf("identity link: %v %s", err, linkOut.String())
	}
	token := func(sub string, edit func(map[string]any)) string {
		c := idp.Claims(sub, mcpURL)
		c["scope"], c["token_use"], c["groups"] = "roster:read attendance:read", "access", []string{"ministerio-secretaria", "outro-grupo"}
		if edit != nil {
			edit(c)
		}
		return idp.Sign(t, c, oidctest.SignOpts{})
	}
	// The linked voluntario acts as CADASTRO (the group's role): roster:read yes,
	// attendance:read no (VOLUNTARIO would have it; CADASTRO never has: not found, no step-up).
	if status, _, body := oauthtest.ReadRoster(t, base, token("conta-123", nil)); status != http.StatusOK || !strings.Contains(body, "total_children") {
		t.Errorf("linked subject: %d %s", status, oauthtest.Snippet(body))
	}
	if status, challenge, body := oauthtest.MCP(t, base, token("conta-123", nil), "resources/read", map[string]any{"uri": "neemias://attendance/summary"}); challenge != "" ||
		!strings.Contains(body, "Resource not found") {
		t.Errorf("outside the mapped role: %d %q %s, want not found without a challenge", status, challenge, oauthtest.Snippet(body))
	}
	if status, _, _ := oauthtest.ReadRoster(t, base, token("conta-123", func(c map[string]any) { delete(c, "token_use") })); status != http.StatusUnauthorized {
		t.Errorf("without the required claim: %d, want 401", status)
	}
	if status, _, _ := oauthtest.ReadRoster(t, base, token(seed.DemoVoluntarioID.String(), nil)); status != http.StatusForbidden {
		t.Errorf("unlinked subject (the local user's own id): %d, want 403", status)
	}
}

// TestServeExternalFlagMistakes: settings of one mode given to the other stop serve before it
// touches the database.
func TestServeExternalFlagMistakes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--oauth-role-map", "a=ADMIN"}, "set --oauth-issuer too"},
		{[]string{"--oauth-audience", "https://x.example/mcp"}, "set --oauth-issuer too"},
		{[]string{"--oauth-issuer", "https://idp.example", "--access-token-ttl", "5m"}, "--access-token-ttl configures the built-in"},
		{[]string{"--oauth-issuer", "https://idp.example", "--login-provider-issuer", "https://up.example"}, "--login-provider-issuer configures the built-in"},
		// the deprecated name (issue 26) is the same setting
		{[]string{"--oauth-issuer", "https://idp.example", "--upstream-issuer", "https://up.example"}, "--login-provider-issuer configures the built-in"},
		{[]string{"--oauth-issuer", "https://idp.example", "--extra-resource", "https://rs.example/mcp"}, "--extra-resource configures the built-in"},
		{[]string{"--oauth-issuer", "https://idp.example", "--oauth-role-claim", "groups"}, "go together"},
		{[]string{"--oauth-issuer", "https://idp.example", "--oauth-role-claim", "groups", "--oauth-role-map", "ADMIN"}, "not NAME=VALUE"},
		{[]string{"--oauth-issuer", "https://idp.example", "--oauth-ca-file", "/nonexistent.pem"}, "--oauth-ca-file"},
		{[]string{"--oauth-metadata-proxy"}, "set --oauth-issuer too"},
		{[]string{"--oauth-accept-missing-aud", "claude"}, "set --oauth-issuer too"},
		{[]string{"--oauth-introspection-url", "https://idp.example/introspect"}, "set --oauth-issuer too"},
		{[]string{"--oauth-issuer", "https://idp.example", "--oauth-introspection-url", "https://idp.example/introspect"}, "needs --oauth-introspection-client-id"},
		{[]string{"--oauth-issuer", "https://idp.example", "--oauth-introspection-client-id", "rs"}, "need --oauth-introspection-url"},
		{[]string{"--oauth-issuer", "https://idp.example", "--oauth-introspection-url", "https://idp.example/introspect",
			"--oauth-introspection-client-id", "rs", "--oauth-introspection-secret-file", "/nonexistent"}, "--oauth-introspection-secret-file"},
		{[]string{"--oauth-issuer", "https://idp.example", "--login-provider-only"}, "--login-provider-only"},
		{[]string{"--login-provider-only"}, "set --login-provider-issuer"},
		{[]string{"--upstream-only"}, "set --login-provider-issuer"},
		// issue 25's settings
		{[]string{"--oauth-scopes-from-role"}, "set --oauth-issuer too"},
		{[]string{"--oauth-client-id", "neemias-mcp"}, "set --oauth-issuer too"},
		{[]string{"--oauth-issuer", "https://idp.example", "--oauth-scope-grant", "g=health:read"}, "go with --oauth-scopes-from-role"},
		{[]string{"--oauth-issuer", "https://idp.example", "--oauth-scopes-from-role", "--oauth-scope-grant", "health:read"}, "is not GROUP=SCOPE"},
		{[]string{"--upstream-issuer", "https://a.example", "--login-provider-issuer", "https://b.example"}, "--upstream-issuer is the deprecated name of --login-provider-issuer: give only --login-provider-issuer"},
	} {
		cmd := root()
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		cmd.SetArgs(append([]string{"serve", "--database-url", "postgres://unused.invalid/x"}, tc.args...))
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.args, err, tc.want)
		}
	}
	var help bytes.Buffer
	cmd := root()
	cmd.SetOut(&help)
	cmd.SetArgs([]string{"token", "--help"})
	if err := cmd.Execute(); err != nil || !strings.Contains(help.String(), "Built-in mode only") {
		t.Errorf("token --help does not say it is for built-in mode only: %v\n%s", err, help.String())
	}
}
