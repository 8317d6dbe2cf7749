package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/oauth/external/dextest"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/server"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
	"github.com/neemias/neemias-mcp/internal/testsupport"
)

// TestOwnASWithDexLogin is the mode docs/external-provider.md recommends for Dex (and Google,
// plain OIDC): Neemias's own authorization server, with Dex v2.45.1 (built from the Go module
// proxy) as the only login (--login-provider-issuer, --login-provider-only). MCP clients
// register, ask for our scopes, see our consent page, and step up exactly as with local
// passwords; the person logs in at Dex. The TypeScript SDKs (1.32.2 and
// @modelcontextprotocol/client 2.x) and mcp-remote 0.15.1 complete OAuth and step up, the
// step-up asking for consent only (the login session).
func TestOwnASWithDexLogin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs Dex")
	}
	node := nodeBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ln := extListen(t)
	base := "http://" + ln.Addr().String()
	// The docs' Dex client for the login: confidential, redirect URI <public URL>/login/callback.
	loginClient := dextest.Client{ID: "neemias-login", Secret: "neemias-login-secret-1", Name: "Neemias", RedirectURIs: []string{base + "/login/callback"}}
	d := dextest.Start(t, dextest.Config{Clients: []dextest.Client{loginClient}, Users: []dextest.User{dexAdmin}})

	st := storetest.NewSeeded(t, seed.Options{ChildrenPerChurch: 20, Months: 1})
	if err := oauth.LinkUpstreamIdentity(ctx, st, d.Issuer, dexAdmin.Subject(), seed.DemoChurchID, seed.DemoAdminID); err != nil {
		t.Fatal(err)
	}
	logs := &testsupport.Buffer{}
	srv, err := server.New(ctx, server.Config{
		PublicURL: base, Version: "0.1.0-test", Logger: slog.New(slog.NewJSONHandler(logs, nil)),
		AuthServer: oauth.Options{Upstream: &oauth.Upstream{Issuer: d.Issuer, ClientID: loginClient.ID, ClientSecret: loginClient.Secret,
			Name: "Dex da igreja", Only: true}},
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
			t.Logf("server log:\n%s", logs.String())
		}
	})
	mcpURL := base + "/mcp"

	for _, tc := range []struct {
		sdk   string
		extra []string
	}{{"v1", []string{"--no-refresh-token"}}, {"v2", nil}} {
		t.Run("TypeScript SDK "+tc.sdk, func(t *testing.T) {
			script, _ := filepath.Abs(filepath.Join(harness, "oauth-stepup.mjs"))
			cmd := exec.CommandContext(ctx, node, append([]string{script, mcpURL, dexAdmin.Email, dexAdmin.Password, "--sdk", tc.sdk, "--upstream"}, tc.extra...)...)
			cmd.Dir = harness
			out, err := cmd.Output()
			var rep stepUpReport
			if jerr := json.Unmarshal(out, &rep); jerr != nil {
				t.Fatalf("output is not JSON (%v; exit %v): %s", jerr, err, out)
			}
			if err != nil || len(rep.Errors) > 0 {
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					t.Logf("stderr: %s", ee.Stderr)
				}
				t.Fatalf("client failed (%v): %v\n%s", err, rep.Errors, out)
			}
			if len(rep.Authorizations) != 2 || len(rep.TokenScopes) < 2 {
				t.Fatalf("authorizations %+v, tokens %v: want one login and one step-up", rep.Authorizations, rep.TokenScopes)
			}
			last := rep.TokenScopes[len(rep.TokenScopes)-1]
			if !slices.Contains(last, "children:write") || !slices.Contains(last, "roster:read") {
				t.Errorf("token after step-up %v", last)
			}
			if !rep.Authorizations[0].PasswordAsked || rep.Authorizations[1].PasswordAsked || !rep.Authorizations[1].ConsentShown {
				t.Errorf("authorizations %+v: want Dex's password once, then consent only", rep.Authorizations)
			}
			if rep.Enroll.IsError || rep.Enroll.ChildID == nil || !rep.RosterRead {
				t.Errorf("enroll after step-up %+v, roster read %v", rep.Enroll, rep.RosterRead)
			}
		})
	}

	t.Run("mcp-remote", func(t *testing.T) {
		cs, authorizations := mcpRemoteSessionTo(t, ctx, mcpURL, func(tab context.Context) error {
			return chromedp.Do(tab, chromedp.WaitVisible(chromedp.ID("login-upstream")), chromedp.Click(chromedp.ID("login-upstream")),
				chromedp.WaitVisible(chromedp.ID("login")), // Dex's password form
				chromedp.SendKeys(chromedp.ID("login"), dexAdmin.Email), chromedp.SendKeys(chromedp.ID("password"), dexAdmin.Password),
				chromedp.Click(chromedp.ID("submit-login")))
		})
		if got := toolNames(t, cs); !slices.Contains(got, "neemias_child_enroll") {
			t.Errorf("tools through mcp-remote: %v", got)
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "neemias_child_enroll", Arguments: map[string]any{
			"name": "Criança Dex Passo", "birth_date": "2021-05-01",
			"guardian": map[string]any{"name": "Responsável Dex", "phone": "+55 11 97777-1234", "relationship": "mother"},
			"consent":  map[string]any{"granted": true, "text_version": "2026-01", "legal_basis": "consent"},
		}})
		if err != nil || res.IsError {
			t.Fatalf("enroll after step-up: %v %+v", err, res)
		}
		auths := authorizations()
		if len(auths) != 2 || !strings.Contains(auths[1].url, "children") || !auths[0].passwordAsked || auths[1].passwordAsked {
			t.Errorf("authorizations %+v: want Dex's login once, then a step-up with consent only", auths)
		}
	})
}
