package server_test

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/seed"
)

// authorizeURLPattern finds the authorization URL mcp-remote prints ("Please authorize this
// client by visiting: …").
var authorizeURLPattern = regexp.MustCompile(`https?://\S+/authorize\?\S+`)

// TestMCPRemoteThroughOAuth: Claude Desktop's way to a remote server, mcp-remote 0.15.1
// (pinned), spawned as Claude Desktop spawns it, with a Go SDK client on its stdio. The OAuth
// flow (registration, login, consent) is completed in headless Chromium at the URL mcp-remote
// prints, as a person would. Then the ADMIN sees every tool of the role, read tools included,
// and a call needing a scope not yet granted steps up: a second authorization in the same
// browser, which asks for consent to the new scope, and the call goes through.
func TestMCPRemoteThroughOAuth(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs, authorizations := mcpRemoteSession(t, ctx, a)
	if got, want := toolNames(t, cs), roleTools(admin.role); !slices.Equal(got, want) {
		t.Errorf("tools through mcp-remote = %v, want every tool of the ADMIN role %v", got, want)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "neemias_attendance_summary", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("a read tool: %v %+v", err, res)
	}
	// children:write was not asked at first (the 401 hints the non-sensitive scopes): the
	// enrollment steps up.
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "neemias_child_enroll", Arguments: map[string]any{
		"name": "Criança Remota Passo", "birth_date": "2021-05-01",
		"guardian": map[string]any{"name": "Responsável Remota", "phone": "+55 11 98888-1234", "relationship": "father"},
		"consent":  map[string]any{"granted": true, "text_version": "2026-01", "legal_basis": "consent"},
	}})
	if err != nil || res.IsError {
		t.Fatalf("enroll after step-up: %v %+v", err, res)
	}
	auths := authorizations()
	if len(auths) != 2 {
		t.Fatalf("%d authorizations, want the first login and one step-up: %+v", len(auths), auths)
	}
	if !strings.Contains(auths[1].url, "children") {
		t.Errorf("the step-up authorization %s does not ask for children:write", auths[1].url)
	}
	if !auths[0].passwordAsked || auths[1].passwordAsked {
		t.Errorf("authorizations %+v: want the password once, then consent only (the login session)", auths)
	}
}

// mcpAuthorization is one authorization URL mcp-remote printed and what completing it showed.
type mcpAuthorization struct {
	url           string
	passwordAsked bool
}

// mcpRemoteSession spawns mcp-remote 0.15.1 (pinned) against a as Claude Desktop spawns it,
// with a Go SDK client on its stdio, and completes every authorization it asks for in
// headless Chromium as the demo ADMIN (login when asked, then consent). It returns the
// session and the authorizations completed so far.
func mcpRemoteSession(t *testing.T, ctx context.Context, a *app) (*sdk.ClientSession, func() []mcpAuthorization) {
	t.Helper()
	return mcpRemoteSessionTo(t, ctx, a.mcp, func(tab context.Context) error {
		return chromedp.Do(tab, chromedp.WaitVisible(chromedp.ID("email")),
			chromedp.SendKeys(chromedp.ID("email"), seed.DemoAdminEmail), chromedp.SendKeys(chromedp.ID("password"), seed.DemoPassword),
			chromedp.Click(chromedp.ID("login-submit")))
	})
}

// mcpRemoteSessionTo is mcpRemoteSession against the MCP URL mcpURL, with login filling in
// whatever login the authorization server shows (its own form, or a provider's).
func mcpRemoteSessionTo(t *testing.T, ctx context.Context, mcpURL string, login func(tab context.Context) error) (*sdk.ClientSession, func() []mcpAuthorization) {
	t.Helper()
	node := nodeBin(t)
	exe := chromiumPath(t)
	br := newBrowser(t, ctx, exe)
	tab, closeTab := chromedp.NewContext(br.ctx)
	t.Cleanup(closeTab)

	proxy, _ := filepath.Abs(filepath.Join(harness, "node_modules", "mcp-remote", "dist", "proxy.js"))
	cmd := exec.CommandContext(ctx, node, proxy, mcpURL, "--host", "127.0.0.1")
	cmd.Dir = harness
	cmd.Env = append(cmd.Environ(), "MCP_REMOTE_CONFIG_DIR="+t.TempDir(), "BROWSER=none")
	stderr, w := io.Pipe()
	cmd.Stderr = w
	t.Cleanup(func() { w.Close() })

	// Every authorization URL mcp-remote prints is completed in the browser; what each one
	// showed is recorded.
	var (
		mu    sync.Mutex
		auths []mcpAuthorization
		log   strings.Builder
	)
	go func() {
		var pending string // an authorization URL not opened yet
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			log.WriteString(line + "\n")
			mu.Unlock()
			// Open the printed URL once mcp-remote listens for the callback: on a step-up it
			// prints the URL before its callback server is up, and a callback that arrives
			// first is lost (a person reading the consent page is never that fast, but a
			// login session makes this scripted one skip the login form).
			if u := authorizeURLPattern.FindString(line); u != "" {
				pending = u
				continue
			}
			if pending == "" || !strings.Contains(line, "OAuth callback server running") {
				continue
			}
			u := pending
			pending = ""
			rec := mcpAuthorization{url: u}
			if err := chromedp.Do(tab, chromedp.Navigate(u)); err != nil {
				t.Errorf("opening %s: %v", u, err)
				continue
			}
			// The login form, unless the authorization server remembers this browser.
			_ = chromedp.Do(tab, chromedp.WaitReady("body"))
			loc, _ := chromedp.Run(tab, chromedp.Location())
			if strings.Contains(loc, "/login") {
				rec.passwordAsked = true
				if err := login(tab); err != nil {
					t.Errorf("login: %v", err)
					continue
				}
			}
			if err := chromedp.Do(tab, chromedp.WaitVisible(chromedp.ID("consent-approve"))); err != nil {
				t.Errorf("consent page: %v", err)
				continue
			}
			// Recorded before the approval: once approved, mcp-remote completes the call and
			// the test may read the authorizations before the browser's next page has loaded.
			mu.Lock()
			auths = append(auths, rec)
			mu.Unlock()
			if err := chromedp.Do(tab, chromedp.Click(chromedp.ID("consent-approve"))); err != nil {
				t.Errorf("consent: %v", err)
			}
		}
	}()
	t.Cleanup(func() {
		if t.Failed() {
			mu.Lock()
			t.Logf("mcp-remote stderr:\n%s", log.String())
			mu.Unlock()
		}
	})

	client := sdk.NewClient(&sdk.Implementation{Name: "claude-desktop-like", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting through mcp-remote: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, func() []mcpAuthorization {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(auths)
	}
}
