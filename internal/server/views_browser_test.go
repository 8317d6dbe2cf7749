package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/testsupport"
	"github.com/neemias/neemias-mcp/internal/views"
)

const (
	viewMIME  = "text/html;profile=mcp-app"
	uiExtKey  = "io.modelcontextprotocol/ui"
	chartURI  = "ui://neemias/attendance-chart"
	sheetURI  = "ui://neemias/checkin-sheet"
	chartTool = "neemias_attendance_summary"
	sheetTool = "neemias_checkins_by_date"
	// The sheet's app-only tools (visibility [app]): neemias_checkin_register and
	// neemias_checkout_register under names the model never sees.
	sheetCheckin  = "neemias_checkin_sheet_checkin"
	sheetCheckout = "neemias_checkin_sheet_checkout"
)

// hostCSP is what an MCP Apps host applies to a view whose resource declares no domains
// (docs/reference/mcp-apps.md): the host page puts it in the view's document, as hosts do.
const hostCSP = `default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; media-src data:; object-src 'none'; connect-src 'none'`

// viewHostHTML is the test host page: the official MCP Apps host side (AppBridge and
// PostMessageTransport of @modelcontextprotocol/ext-apps, testdata/apphost/host.js, bundled at
// test time by appHostJS from testdata/apphost's package-lock) puts the view's HTML in a
// sandboxed iframe (srcdoc, scripts only: an opaque origin), answers ui/initialize with the
// case's hostContext and, after ui/notifications/initialized, sends the tool input and the real
// tool result; the view's tools/call and resources/read go to /proxy (the test calls the real
// server). What the view sent is in window.hostLog.
const viewHostHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Neemias test host (ext-apps AppBridge)</title>
<style>body{margin:0;padding:8px;font:13px system-ui,sans-serif;background:#eee} iframe{display:block;border:1px solid #888;background:#fff;width:980px;height:1400px}</style>
</head><body>
<p id="host-status">host: loading</p>
<iframe id="view" sandbox="allow-scripts" title="MCP App view"></iframe>
<script src="/apphost.js"></script>
</body></html>`

// appHostJS builds testdata/apphost/host.js with the esbuild and @modelcontextprotocol
// packages pinned in its package-lock (npm ci there when missing): test-only, never committed.
func appHostJS(t *testing.T) []byte {
	t.Helper()
	const dir = "testdata/apphost"
	node := testsupport.NPMPackages(t, dir, "@modelcontextprotocol/ext-apps/package.json", "@modelcontextprotocol/client/package.json",
		"@modelcontextprotocol/core/package.json", "zod/package.json", "esbuild/package.json")
	out := filepath.Join(t.TempDir(), "apphost.js")
	cmd := exec.Command(node, "build.mjs", "--out", out)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node build.mjs in %s: %v\n%s", dir, err, b)
	}
	js, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// viewCase is one view shown to one role.
type viewCase struct {
	name     string // also the case's path on the harness
	role     demoUser
	locale   string
	uri      string
	tool     string
	args     map[string]any
	result   *sdk.CallToolResult
	toolDef  *sdk.Tool // the tool as tools/list gave it to the case's session (the host's toolInfo)
	html     string    // the control's own document; a view's case is read from the server by the host
	sc       map[string]any
	cs       *sdk.ClientSession
	wantText []string // what the rendered view must show
	denyText []string // what it must not show
	// The host's context beyond the locale: theme ("light" when empty), CSS variables,
	// time zone (none when empty).
	theme, timeZone string
	styles          map[string]string
}

// viewHarness is the host page's server on loopback: the page, the cases as JSON, and the
// proxy for the view's own requests (recorded).
type viewHarness struct {
	hs    *httptest.Server
	js    []byte // the host side, built by appHostJS
	mu    sync.Mutex
	cases map[string]*viewCase
	calls []string // JSON-RPC requests the views sent to the host for the server
}

func newViewHarness(t *testing.T) *viewHarness {
	t.Helper()
	h := &viewHarness{cases: map[string]*viewCase{}, js: appHostJS(t)}
	h.hs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/host.html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, viewHostHTML)
		case r.URL.Path == "/apphost.js":
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
			_, _ = w.Write(h.js)
		case strings.HasPrefix(r.URL.Path, "/case/"):
			h.mu.Lock()
			c := h.cases[strings.TrimPrefix(r.URL.Path, "/case/")]
			h.mu.Unlock()
			if c == nil {
				http.NotFound(w, r)
				return
			}
			// A view's case names its ui:// resource, which the host reads from the server; only the
			// control case (no URI) carries its document.
			html := ""
			if c.uri == "" {
				html = c.html
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"uri": c.uri, "html": html, "csp": hostCSP, "tool": c.tool, "toolDef": c.toolDef, "arguments": c.args, "result": c.result, "locale": c.locale,
				"theme": c.theme, "timeZone": c.timeZone, "styles": c.styles})
		case r.URL.Path == "/proxy" && r.Method == http.MethodPost:
			h.proxy(w, r)
		default:
			http.NotFound(w, r) // e.g. /favicon.ico
		}
	}))
	t.Cleanup(h.hs.Close)
	return h
}

// proxy forwards a view's tools/call or resources/read to the real server with the case's
// session (the view of ?case= in the Referer), and records it.
func (h *viewHarness) proxy(w http.ResponseWriter, r *http.Request) {
	var m struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &m)
	h.mu.Lock()
	h.calls = append(h.calls, string(body))
	var c *viewCase
	if ref, err := http.NewRequest(http.MethodGet, r.Referer(), nil); err == nil {
		c = h.cases[ref.URL.Query().Get("case")]
	}
	h.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	reply := func(v any) { _ = json.NewEncoder(w).Encode(v) }
	if c == nil || (m.Method != "tools/call" && m.Method != "resources/read") {
		reply(map[string]any{"error": map[string]any{"code": -32601, "message": "the test host proxies tools/call and resources/read only"}})
		return
	}
	if m.Method == "resources/read" {
		var p sdk.ReadResourceParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			reply(map[string]any{"error": map[string]any{"code": -32602, "message": err.Error()}})
			return
		}
		res, err := c.cs.ReadResource(r.Context(), &p)
		if err != nil {
			reply(map[string]any{"error": map[string]any{"code": -32603, "message": err.Error()}})
			return
		}
		reply(map[string]any{"result": res})
		return
	}
	var p sdk.CallToolParams
	if err := json.Unmarshal(m.Params, &p); err != nil {
		reply(map[string]any{"error": map[string]any{"code": -32602, "message": err.Error()}})
		return
	}
	res, err := c.cs.CallTool(r.Context(), &p)
	if err != nil {
		reply(map[string]any{"error": map[string]any{"code": -32603, "message": err.Error()}})
		return
	}
	reply(map[string]any{"result": res})
}

// tab opens a fresh browser context in Brasília time with network events on; requests
// returns the URLs the tab (its frames included) has requested so far.
func (h *viewHarness) tab(t *testing.T, br *browser) (context.Context, func() []string) {
	t.Helper()
	tab, closeTab := chromedp.NewContext(br.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(closeTab)
	tab, cancelTab := context.WithTimeout(tab, 60*time.Second)
	t.Cleanup(cancelTab)
	var mu sync.Mutex
	var seen []string
	if err := chromedp.Listen(tab, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			seen = append(seen, e.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	run(t, tab, "enable network events and set the time zone", chromedp.Action[chromedp.Void](func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
			return chromedp.Void{}, err
		}
		_, err := cdp.Call(ctx, tg, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "America/Sao_Paulo"})
		return chromedp.Void{}, err
	}))
	return tab, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// outside are the requests not to the harness's origin, about:srcdoc, about:blank or data:.
func (h *viewHarness) outside(urls []string) []string {
	var out []string
	for _, u := range urls {
		if !strings.HasPrefix(u, h.hs.URL+"/") && u != "about:srcdoc" && u != "about:blank" && !strings.HasPrefix(u, "data:") {
			out = append(out, u)
		}
	}
	return out
}

func (h *viewHarness) viewCalls() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.calls)
}

// connectUI opens a go-sdk session pinned to version that declares MCP Apps.
func (a *app) connectUI(t *testing.T, ctx context.Context, version, token string) *sdk.ClientSession {
	t.Helper()
	caps := &sdk.ClientCapabilities{}
	caps.AddExtension(uiExtKey, map[string]any{"mimeTypes": []string{viewMIME}})
	client := sdk.NewClient(&sdk.Implementation{Name: "neemias-views-test", Version: "1"}, &sdk.ClientOptions{Capabilities: caps})
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: a.mcp, HTTPClient: &http.Client{Transport: &bearer{t: t, token: token}}},
		&sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect with the UI extension: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// viewArtifactDir is $NEEMIAS_ARTIFACTS if set, else artifactDir ($NEEMIAS_TEST_ARTIFACTS or
// a temporary directory).
func viewArtifactDir(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("NEEMIAS_ARTIFACTS"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Logf("test artifacts (screenshots) in %s", dir)
		return dir
	}
	return artifactDir(t)
}

// TestBrowserViews renders the MCP Apps views (ui://neemias/attendance-chart and
// ui://neemias/checkin-sheet) as a host would, in headless Chromium: over real MCP with the UI
// extension declared, for ADMIN (children:read) and VOLUNTARIO (no children:read), the linked
// tools carry _meta.ui, each view is read as text/html;profile=mcp-app, and the tools are
// called on demo data (a month with check-ins; the demo church's busiest day). The host page
// runs the official host side of @modelcontextprotocol/ext-apps (AppBridge, built at test time
// from testdata/apphost's lock): it puts the view in a sandboxed srcdoc iframe, gives it the
// tool as tools/list lists it and the real tool result, and forwards the view's tools/call and
// resources/read to the real server. The page must show the totals of the structured content; the sheet shows child
// names to ADMIN and none of them to VOLUNTARIO; no request leaves the harness's origin.
// Screenshots go to $NEEMIAS_ARTIFACTS (else $NEEMIAS_TEST_ARTIFACTS, else a temporary dir).
func TestBrowserViews(t *testing.T) {
	exe := chromiumPath(t)
	artifacts := viewArtifactDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	a := newApp(t)
	day := a.one(t, `SELECT service_date::text FROM checkins WHERE church_id = $1 GROUP BY 1 ORDER BY count(*) DESC, 1 DESC LIMIT 1`, seed.DemoChurchID)
	from := a.one(t, `SELECT date_trunc('month', $1::date)::date::text`, day)
	to := a.one(t, `SELECT LEAST((date_trunc('month', $1::date) + interval '1 month - 1 day')::date,
		(now() AT TIME ZONE 'America/Sao_Paulo')::date)::text`, day)
	brasilia, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	htmlByURI := map[string]string{}
	for _, v := range views.All() {
		htmlByURI[v.URI] = v.HTML
	}

	h := newViewHarness(t)
	// ADMIN's host: pt-BR, light, says its time zone; VOLUNTARIO's: English, dark with CSS
	// variables of its own, no time zone (the view uses the device's, Brasília in the tab).
	roles := []struct {
		user            demoUser
		locale          string
		theme, timeZone string
		styles          map[string]string
	}{
		{admin, "pt-BR", "light", "America/Sao_Paulo", nil},
		{voluntario, "en-US", "dark", "", map[string]string{"--color-background-primary": "#101820", "--color-text-primary": "#f0f4f8"}},
	}
	var cases []*viewCase
	sheets := map[string]map[string]any{} // role → the sheet's structured content
	for _, r := range roles {
		for _, version := range eras { // the browser uses the first
			t.Run("mcp/"+version+"/"+r.user.role, func(t *testing.T) {
				checkViewsOverMCP(t, ctx, a.connectUI(t, ctx, version, a.token(t, r.user)), htmlByURI)
				plain, _ := a.connect(t, ctx, version, a.token(t, r.user))
				checkAppOnlyTools(t, ctx, a, r.user, a.connectUI(t, ctx, version, a.token(t, r.user)), plain)
			})
		}
		cs := a.connectUI(t, ctx, eras[0], a.token(t, r.user))
		for _, v := range []struct {
			uri, tool string
			args      map[string]any
		}{
			{chartURI, chartTool, map[string]any{"from": from, "to": to}},
			{sheetURI, sheetTool, map[string]any{"date": day}},
		} {
			res, sc := callJSON(t, cs, v.tool, v.args)
			if res.IsError || sc == nil {
				t.Fatalf("%s %s %v: isError=%v %s", r.user.role, v.tool, v.args, res.IsError, resultText(res))
			}
			c := &viewCase{
				name: strings.ToLower(r.user.role) + "-" + strings.TrimPrefix(v.uri, "ui://neemias/"),
				role: r.user, locale: r.locale, uri: v.uri, tool: v.tool, args: v.args,
				result: res, toolDef: listedTool(t, ctx, cs, v.tool), sc: sc, cs: cs, theme: r.theme, timeZone: r.timeZone, styles: r.styles,
			}
			if v.tool == sheetTool {
				sheets[r.user.role] = sc
			}
			cases = append(cases, c)
		}
	}

	// What each case must show, from the structured content.
	adminNames := childNames(sheets["ADMIN"])
	if len(adminNames) == 0 {
		t.Fatalf("ADMIN's check-ins of %s carry no child names: %v", day, sheets["ADMIN"])
	}
	if names := childNames(sheets["VOLUNTARIO"]); len(names) != 0 {
		t.Errorf("the server sent VOLUNTARIO (no children:read) child names: %v", names)
	}
	for _, c := range cases {
		switch c.tool {
		case chartTool:
			c.wantText = append(c.wantText, fmt.Sprint(num(c.sc["total_checkins"])), from, to)
			perClass := map[string]int{}
			daysList, _ := c.sc["days"].([]any)
			if len(daysList) == 0 {
				t.Errorf("%s: no days in %s..%s: %v", c.name, from, to, c.sc)
			}
			for _, d := range daysList {
				m := d.(map[string]any)
				perClass[m["class_name"].(string)] += num(m["checkins"])
			}
			for name, n := range perClass {
				c.wantText = append(c.wantText, fmt.Sprintf("%s\t%d", name, n)) // the per-class table's row
			}
		case sheetTool:
			rows, _ := c.sc["checkins"].([]any)
			if len(rows) == 0 {
				t.Errorf("%s: no check-ins on %s", c.name, day)
			}
			c.wantText = append(c.wantText, fmt.Sprint(len(rows)), day)
			perClass := map[string]int{}
			for _, row := range rows {
				m := row.(map[string]any)
				perClass[m["class_name"].(string)]++
				if c.role == voluntario {
					c.wantText = append(c.wantText, m["child_id"].(string))
				}
			}
			for name, n := range perClass {
				c.wantText = append(c.wantText, fmt.Sprintf("%s (%d)", name, n)) // the class caption
			}
			// Times as the church reads them: the tab runs in Brasília time (emulated).
			layout := map[string]string{"pt-BR": "15:04", "en-US": "03:04"}[c.locale]
			for _, row := range rows {
				m := row.(map[string]any)
				at, err := time.Parse(time.RFC3339Nano, m["checked_in_at"].(string))
				if err != nil {
					t.Fatalf("checked_in_at %v: %v", m["checked_in_at"], err)
				}
				c.wantText = append(c.wantText, at.In(brasilia).Format(layout))
			}
			if c.role == admin {
				c.wantText = append(c.wantText, adminNames...)
			} else {
				c.denyText = adminNames
			}
			// The sheet says which zone its times are in (the data does not carry the church's).
			if c.role == admin {
				c.wantText = append(c.wantText, "Horários no fuso America/Sao_Paulo (o do aplicativo")
			} else {
				c.wantText = append(c.wantText, "Times in the America/Sao_Paulo time zone (this device's")
			}
		}
		h.mu.Lock()
		h.cases[c.name] = c
		h.mu.Unlock()
	}

	// IsolateSandboxedIframes (on in Chromium 156) puts the opaque-origin view in a process of
	// its own, out of reach of the tab's network events and execution contexts: with it, the
	// control case below fails and the view's text cannot be read.
	br := newBrowser(t, ctx, exe, "IsolateSandboxedIframes")
	defer br.logOutsideAttempts(t)
	for _, c := range cases {
		t.Run("browser/"+c.name, func(t *testing.T) {
			tab, requests := h.tab(t, br)
			hostURL := h.hs.URL + "/host.html?case=" + c.name
			run(t, tab, "open the host page and wait for the tool result to be delivered",
				chromedp.Navigate(hostURL),
				chromedp.Poll[chromedp.Void](`window.hostDelivered === true`, chromedp.WithPollingTimeout(20*time.Second)))
			frames := value(t, tab, chromedp.Nodes(chromedp.CSS("iframe#view")))
			if len(frames) != 1 {
				t.Fatalf("%d view iframes", len(frames))
			}
			// The view's text once it has rendered (its status line is no longer "waiting").
			shown := value(t, tab, chromedp.Poll[string](`(function () {
				var s = document.getElementById("status");
				if (!s || /Aguardando|Waiting/.test(s.textContent)) return null;
				return document.body.innerText;
			})()`, chromedp.WithPollingInFrame(frames[0]), chromedp.WithPollingTimeout(20*time.Second)))
			for _, want := range c.wantText {
				if !strings.Contains(shown, want) {
					t.Errorf("the view does not show %q:\n%s", want, shown)
				}
			}
			for _, deny := range c.denyText {
				if strings.Contains(shown, deny) {
					t.Errorf("the view shows %q to %s (no children:read)", deny, c.role.role)
				}
			}
			wantLang := map[string]string{"pt-BR": "pt-BR", "en-US": "en"}[c.locale]
			if lang := value(t, tab, chromedp.Poll[string](`document.documentElement.lang`, chromedp.WithPollingInFrame(frames[0]))); lang != wantLang {
				t.Errorf("the view's language is %q with host locale %s, want %s", lang, c.locale, wantLang)
			}
			// The host's theme: data-theme, and its CSS variables win over the view's colours.
			inFrame := chromedp.WithPollingInFrame(frames[0])
			if th := value(t, tab, chromedp.Poll[string](`document.documentElement.getAttribute("data-theme")`, inFrame)); th != c.theme {
				t.Errorf("the view's data-theme is %q, want the host's %q", th, c.theme)
			}
			bg := value(t, tab, chromedp.Poll[string](`getComputedStyle(document.body).backgroundColor`, inFrame))
			if want := map[string]string{"": "rgb(255, 255, 255)", "#101820": "rgb(16, 24, 32)"}[c.styles["--color-background-primary"]]; bg != want {
				t.Errorf("the view's background is %s, want %s (theme %s, host variables %v)", bg, want, c.theme, c.styles)
			}
			// The bridge as the host saw it.
			var init struct {
				ProtocolVersion string `json:"protocolVersion"`
				AppInfo         struct{ Name string }
			}
			initJSON := value(t, tab, chromedp.Evaluate[string](`JSON.stringify(window.hostInit)`))
			if err := json.Unmarshal([]byte(initJSON), &init); err != nil || init.ProtocolVersion == "" || init.AppInfo.Name == "" {
				t.Errorf("ui/initialize params %s", initJSON)
			}
			// The host read the view from the server, as hosts do.
			readIt := false
			for _, call := range h.viewCalls() {
				readIt = readIt || strings.Contains(call, `"method":"resources/read"`) && strings.Contains(call, `"uri":"`+c.uri+`"`)
			}
			if !readIt {
				t.Errorf("the host did not read %s through resources/read", c.uri)
			}
			// The host side is the official AppBridge, which took the view's appInfo from it.
			if got := value(t, tab, chromedp.Evaluate[string](`(window.hostBridge && window.hostBridge.getAppVersion() || {}).name || ""`)); got != init.AppInfo.Name {
				t.Errorf("the AppBridge has the view's appInfo.name %q, want %q", got, init.AppInfo.Name)
			}
			methods := value(t, tab, chromedp.Evaluate[[]string](`window.hostLog.map(function (m) { return m.method || ("response " + m.id); })`))
			if i, j := slices.Index(methods, "ui/initialize"), slices.Index(methods, "ui/notifications/initialized"); i < 0 || j < i {
				t.Errorf("bridge messages from the view: %v, want ui/initialize then ui/notifications/initialized", methods)
			}
			t.Logf("bridge messages from the view: %v", methods)

			shot := filepath.Join(artifacts, "view-"+c.name+".png")
			screenshot(t, tab, shot)
			checkPNG(t, shot)
			if c.styles != nil {
				// host-context-changed: the host turns light and Portuguese.
				run(t, tab, "send host-context-changed", chromedp.Evaluate[chromedp.Void](`window.hostContextChanged({theme: "light", locale: "pt-BR"})`))
				if got := value(t, tab, chromedp.Poll[string](`document.documentElement.getAttribute("data-theme") === "light" && document.documentElement.lang === "pt-BR" ? "ok" : null`,
					inFrame, chromedp.WithPollingTimeout(10*time.Second))); got != "ok" {
					t.Errorf("host-context-changed was not applied")
				}
			}

			// Nothing but the harness's origin (and the srcdoc document) was requested.
			seen := requests()
			if !slices.Contains(seen, hostURL) || !slices.Contains(seen, h.hs.URL+"/case/"+c.name) {
				t.Errorf("network events missed the harness's own requests: %v", seen)
			}
			for _, u := range h.outside(seen) {
				t.Errorf("a request left the harness: %s", u)
			}
		})
	}

	// The sheet's actions, driven through the view for both roles: check a child in (the
	// app-only tool neemias_checkin_sheet_checkin through the host's proxied tools/call), see
	// the pick-up code, a wrong code and a locked check-in refused in words, then the right code
	// checks the child out; the database changes each time and the sheet refreshes itself.
	today := a.one(t, `SELECT (now() AT TIME ZONE time_zone)::date::text FROM churches WHERE id = $1`, seed.DemoChurchID)
	adminChild := a.freeChildren(t, 1, false)[0]
	volChild := a.freeChildren(t, 1, true)[0]
	if adminChild == volChild {
		volChild = a.freeChildren(t, 2, true)[1]
	}
	for _, r := range []struct {
		user   demoUser
		locale string
		child  string
	}{{admin, "pt-BR", adminChild}, {voluntario, "en-US", volChild}} {
		cs := a.connectUI(t, ctx, eras[0], a.token(t, r.user))
		res, sc := callJSON(t, cs, sheetTool, map[string]any{"date": today})
		if res.IsError || sc == nil {
			t.Fatalf("%s %s %s: %s", r.user.role, sheetTool, today, resultText(res))
		}
		c := &viewCase{
			name: strings.ToLower(r.user.role) + "-checkin-sheet-actions", role: r.user, locale: r.locale, uri: sheetURI,
			tool: sheetTool, args: map[string]any{"date": today}, result: res, toolDef: listedTool(t, ctx, cs, sheetTool), sc: sc, cs: cs,
		}
		h.mu.Lock()
		h.cases[c.name] = c
		h.mu.Unlock()
		name := a.one(t, `SELECT name FROM children WHERE id = $1`, r.child)
		t.Run("browser/"+c.name, func(t *testing.T) {
			driveSheet(t, a, h, br, c, r.child, name, adminNames, artifacts)
		})
	}

	// The detector itself: a view that reaches out (blocked by the CSP or refused by the trap
	// proxy, but attempted) is seen from inside the sandboxed iframe.
	t.Run("browser/control-leaky-view", func(t *testing.T) {
		const leak = "http://leak.neemias.test/pixel.png"
		h.mu.Lock()
		h.cases["control"] = &viewCase{name: "control", tool: chartTool, locale: "en", html: `<!doctype html><html><head></head><body>
			<p id="status">leaky</p><img src="` + leak + `"><script>fetch("http://leak.neemias.test/beacon").catch(function () {});</script></body></html>`}
		h.mu.Unlock()
		tab, requests := h.tab(t, br)
		run(t, tab, "open the host page with a leaky view", chromedp.Navigate(h.hs.URL+"/host.html?case=control"))
		deadline := time.Now().Add(15 * time.Second)
		for !slices.Contains(h.outside(requests()), leak) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if out := h.outside(requests()); !slices.Contains(out, leak) {
			t.Errorf("the network listener did not see the view's request to %s: outside %v, all %v", leak, out, requests())
		}
	})
	if calls := h.viewCalls(); len(calls) > 0 {
		t.Logf("the views called the server through the host: %v", calls)
	}
}

// checkViewsOverMCP: on a session declaring MCP Apps, the two read tools carry
// _meta.ui.resourceUri of their view and each view reads as the embedded HTML, typed
// text/html;profile=mcp-app. In 2026-07-28 the go-sdk client declares the extension per
// request; in the 2025 era in initialize only, and it is shown views through the UI session id
// the server issues there and the client echoes (internal/mcp/uisession.go).
func checkViewsOverMCP(t *testing.T, ctx context.Context, cs *sdk.ClientSession, htmlByURI map[string]string) {
	t.Helper()
	tl, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	got := map[string]string{}
	for _, tool := range tl.Tools {
		if ui, ok := tool.Meta["ui"].(map[string]any); ok {
			got[tool.Name], _ = ui["resourceUri"].(string)
			vis := fmt.Sprint(ui["visibility"])
			if want := map[bool]string{true: "[app]", false: "[model app]"}[tool.Name == sheetCheckin || tool.Name == sheetCheckout]; vis != want {
				t.Errorf("tool %s: _meta.ui.visibility %s, want %s", tool.Name, vis, want)
			}
		}
	}
	// The sheet's app-only tools are listed to a client with MCP Apps (and a role with
	// checkins:write: both roles here).
	if want := map[string]string{chartTool: chartURI, sheetTool: sheetURI, sheetCheckin: sheetURI, sheetCheckout: sheetURI}; !mapsEqual(got, want) {
		t.Errorf("tools with _meta.ui.resourceUri: %v, want %v", got, want)
	}
	for uri, want := range htmlByURI {
		rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("resources/read %s: %v", uri, err)
		}
		if len(rr.Contents) == 0 {
			t.Fatalf("resources/read %s: no contents", uri)
		}
		if len(rr.Contents) != 1 || rr.Contents[0].URI != uri || rr.Contents[0].MIMEType != viewMIME || rr.Contents[0].Text != want {
			t.Errorf("resources/read %s: %d contents, first %q %q (%d chars); want the embedded HTML as %s",
				uri, len(rr.Contents), rr.Contents[0].URI, rr.Contents[0].MIMEType, len(rr.Contents[0].Text), viewMIME)
		}
	}
}

// listedTool is the tool named name as cs's tools/list gives it (what a host puts in the view's
// hostContext.toolInfo).
func listedTool(t *testing.T, ctx context.Context, cs *sdk.ClientSession, name string) *sdk.Tool {
	t.Helper()
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		if tool.Name == name {
			return tool
		}
	}
	t.Fatalf("tools/list does not list %s", name)
	return nil
}

// childNames are the child_name values of a checkins_by_date result.
func childNames(sc map[string]any) []string {
	var out []string
	rows, _ := sc["checkins"].([]any)
	for _, r := range rows {
		if n, ok := r.(map[string]any)["child_name"].(string); ok && n != "" {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func num(v any) int {
	f, _ := v.(float64)
	return int(f)
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// driveSheet opens the sheet of case c (today's check-ins) and drives its actions for child
// (named name in the database): check-in by id, a wrong pick-up code, a locked check-in, the
// right code; after each step it checks what the view says, the database, and that the child's
// name (or any of names) is shown only to a caller with children:read.
func driveSheet(t *testing.T, a *app, h *viewHarness, br *browser, c *viewCase, child, name string, names []string, artifacts string) {
	t.Helper()
	tab, requests := h.tab(t, br)
	hostURL := h.hs.URL + "/host.html?case=" + c.name
	run(t, tab, "open the host page with the sheet of today",
		chromedp.Navigate(hostURL),
		chromedp.Poll[chromedp.Void](`window.hostDelivered === true`, chromedp.WithPollingTimeout(20*time.Second)))
	frames := value(t, tab, chromedp.Nodes(chromedp.CSS("iframe#view")))
	if len(frames) != 1 {
		t.Fatalf("%d view iframes", len(frames))
	}
	frame := frames[0]
	in := chromedp.FromNode(frame)
	pt := c.locale == "pt-BR"
	word := func(ptText, enText string) string {
		if pt {
			return ptText
		}
		return enText
	}
	// wait polls JS (in the view) until it returns a non-empty string, and returns it.
	wait := func(what, js string) string {
		t.Helper()
		v, err := chromedp.Run(tab, chromedp.Poll[string](js, chromedp.WithPollingInFrame(frame), chromedp.WithPollingTimeout(20*time.Second)))
		if err != nil {
			shown, _ := chromedp.Run(tab, chromedp.Poll[string](`document.body.innerText`, chromedp.WithPollingInFrame(frame), chromedp.WithPollingTimeout(2*time.Second)))
			t.Fatalf("%s: %v; the view shows:\n%s", what, err, shown)
		}
		return v
	}
	shown := func() string {
		return wait("the view's text", `document.body.innerText || null`)
	}
	noName := func(step string) {
		t.Helper()
		body := shown()
		if c.role.role == "ADMIN" {
			return
		}
		for _, n := range append([]string{name}, names...) {
			if strings.Contains(body, n) {
				t.Errorf("%s: the view shows the child name %q to %s (no children:read)", step, n, c.role.role)
			}
		}
	}
	wait("the sheet rendered", `(function () { var s = document.getElementById("status");
		return s && !/Aguardando|Waiting/.test(s.textContent) && !document.getElementById("actions").hidden ? s.textContent : null; })()`)
	if lbl := wait("the check-in input's label", `(function () { var i = document.getElementById("checkin-child");
		return i && i.labels && i.labels.length ? i.labels[0].textContent : null; })()`); lbl != word("Id da criança", "Child id") {
		t.Errorf("the check-in input is labelled %q", lbl)
	}

	since := a.one(t, `SELECT now()::text`)
	// Check in by child id, from the keyboard: type the id, press Enter.
	run(t, tab, "type the child id and press Enter", chromedp.SendKeys("#checkin-child", child+"\n", in))
	code := wait("the pick-up code", `(function () { var c = document.getElementById("pickup-code"); return c ? c.textContent : null; })()`)
	if n := a.one(t, `SELECT count(*)::text FROM checkins WHERE child_id = $1 AND service_date = $2::date AND checked_out_at IS NULL`, child, c.args["date"]); n != "1" {
		t.Fatalf("after the check-in button: %s open check-ins of %s on %v, want 1", n, child, c.args["date"])
	}
	checkinID := a.one(t, `SELECT id::text FROM checkins WHERE child_id = $1 AND service_date = $2::date`, child, c.args["date"])
	if !pickupCodeMatches(t, a, checkinID, code) {
		t.Errorf("the view shows pick-up code %q, which is not the one stored for %s", code, checkinID)
	}
	// The sheet refreshed itself: the new row, with the name only for children:read.
	row := fmt.Sprintf(`document.querySelector('tr[data-checkin="%s"]')`, checkinID)
	rowText := wait("the new row", `(function () { var r = `+row+`; return r ? r.innerText : null; })()`)
	if c.role.role == "ADMIN" && !strings.Contains(rowText, name) {
		t.Errorf("ADMIN's new row does not show the child's name %q: %q", name, rowText)
	}
	if c.role.role != "ADMIN" && !strings.Contains(rowText, child) {
		t.Errorf("%s's new row does not show the child id: %q", c.role.role, rowText)
	}
	noName("after the check-in")
	screenshot(t, tab, filepath.Join(artifacts, "view-"+c.name+"-checked-in.png"))

	// The row's pick-up code input is labelled for the child (by name or id, as shown).
	codeInput := fmt.Sprintf("#code-%s", checkinID)
	lbl := wait("the code input's label", `(function () { var i = document.querySelector("`+codeInput+`"); return i && i.labels.length ? i.labels[0].textContent : null; })()`)
	if want := word("Código de retirada de ", "Pick-up code of "); !strings.HasPrefix(lbl, want) {
		t.Errorf("the pick-up code input is labelled %q, want %q…", lbl, want)
	}
	msg := fmt.Sprintf(`(function () { var m = document.getElementById("msg-%s"); return m && m.className.indexOf("err") >= 0 ? m.innerText : null; })()`, checkinID)

	// A wrong code: refused in words, nothing changes but the attempt counter.
	wrong := "0000"
	if code == wrong {
		wrong = "9999"
	}
	run(t, tab, "type a wrong code and press the check-out button",
		chromedp.SendKeys(codeInput, wrong, in), chromedp.Click(fmt.Sprintf(`tr[data-checkin="%s"] button.checkout`, checkinID), in))
	if got := wait("the wrong-code message", msg); !strings.Contains(got, word("Código de retirada incorreto", "Wrong pick-up code")) ||
		!strings.Contains(got, word("Mais 4 tentativas erradas", "4 more wrong attempts")) {
		t.Errorf("after a wrong code the view says %q", got)
	}
	if v := a.one(t, `SELECT (checked_out_at IS NULL)::text || ' ' || failed_pickup_attempts FROM checkins WHERE id = $1`, checkinID); v != "true 1" {
		t.Errorf("after a wrong code: checked_out_at IS NULL, failed attempts = %s; want true 1", v)
	}
	screenshot(t, tab, filepath.Join(artifacts, "view-"+c.name+"-wrong-code.png"))

	// A locked check-in (as after too many wrong codes): refused in words, even with the right code.
	a.one(t, `UPDATE checkins SET locked_at = now() WHERE id = $1 RETURNING id::text`, checkinID)
	run(t, tab, "type the right code on the locked check-in and press Enter", chromedp.SendKeys(codeInput, code+"\n", in))
	if got := wait("the locked message", fmt.Sprintf(`(function () { var m = document.getElementById("msg-%s"); return m && /bloqueado|locked/.test(m.innerText) ? m.innerText : null; })()`, checkinID)); !strings.Contains(got, word("um membro da equipe deve liberar", "a staff member must release")) {
		t.Errorf("on a locked check-in the view says %q", got)
	}
	if v := a.one(t, `SELECT (checked_out_at IS NULL)::text FROM checkins WHERE id = $1`, checkinID); v != "true" {
		t.Errorf("a locked check-in was checked out")
	}
	a.one(t, `UPDATE checkins SET locked_at = NULL, failed_pickup_attempts = 0 WHERE id = $1 RETURNING id::text`, checkinID)

	// The right code: checked out; the sheet refreshes to "picked up".
	run(t, tab, "type the right code and press the check-out button",
		chromedp.SendKeys(codeInput, code, in), chromedp.Click(fmt.Sprintf(`tr[data-checkin="%s"] button.checkout`, checkinID), in))
	picked := wait("the row picked up", `(function () { var r = `+row+`; return r && !r.querySelector("button") ? r.innerText : null; })()`)
	if !strings.Contains(picked, word("Retirada às", "Picked up at")) {
		t.Errorf("after the right code the row says %q", picked)
	}
	if v := a.one(t, `SELECT (checked_out_at IS NOT NULL)::text FROM checkins WHERE id = $1`, checkinID); v != "true" {
		t.Errorf("after the right code checked_out_at is still NULL")
	}
	// The same audit as the model's tools: the check-in, the wrong code, the lock, the pick-up.
	acts := a.query(t, `SELECT action || ' ' || outcome FROM audit_log WHERE user_id = $1 AND $2::uuid = ANY(target_ids)
		AND capability IN ('neemias_checkin_register', 'neemias_checkout_register') AND at >= $3::timestamptz ORDER BY id`, c.role.id, child, since)
	if want := []string{"checkin allowed", "checkout.wrong_code denied", "checkout.locked denied", "checkout allowed"}; !slices.Equal(acts, want) {
		t.Errorf("audit entries of the child: %v, want %v", acts, want)
	}
	noName("after the check-out")
	shot := filepath.Join(artifacts, "view-"+c.name+"-checked-out.png")
	screenshot(t, tab, shot)
	checkPNG(t, shot)

	// The view called the app-only tools (and the read tool to refresh) through the host.
	var used []string
	for _, call := range h.viewCalls() {
		for _, tool := range []string{sheetCheckin, sheetCheckout, sheetTool} {
			if strings.Contains(call, `"`+tool+`"`) && !slices.Contains(used, tool) {
				used = append(used, tool)
			}
		}
	}
	for _, tool := range []string{sheetCheckin, sheetCheckout, sheetTool} {
		if !slices.Contains(used, tool) {
			t.Errorf("the view never called %s through the host (calls: %v)", tool, used)
		}
	}
	seen := requests()
	if !slices.Contains(seen, hostURL) {
		t.Errorf("network events missed the harness's own requests: %v", seen)
	}
	for _, u := range h.outside(seen) {
		t.Errorf("a request left the harness: %s", u)
	}
}

// pickupCodeMatches reports whether code is the pick-up code stored (salted and hashed) for
// check-in id.
func pickupCodeMatches(t *testing.T, a *app, id, code string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var salt, hash []byte
	err := a.st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT pickup_code_salt, pickup_code_hash FROM checkins WHERE id = $1`, id).Scan(&salt, &hash)
	})
	if err != nil {
		t.Fatalf("reading the pick-up code of %s: %v", id, err)
	}
	return store.CheckPickupCode(salt, hash, code)
}

// checkAppOnlyTools: over real go-sdk sessions, the sheet's app-only tools reach the model's
// tool for a client with MCP Apps (a check-out of a check-in that does not exist answers "not
// found" from the handler, as neemias_checkout_register does), while a client without it does
// not list them and has the call refused, naming the model's tool, with the refusal audited.
func checkAppOnlyTools(t *testing.T, ctx context.Context, a *app, u demoUser, ui, plain *sdk.ClientSession) {
	t.Helper()
	args := map[string]any{"checkin_id": uuid.NewString(), "pickup_code": "1234"}
	res, err := ui.CallTool(ctx, &sdk.CallToolParams{Name: sheetCheckout, Arguments: args})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "not found") {
		t.Errorf("%s with MCP Apps: %v %s, want the model tool's not-found result", sheetCheckout, err, resultText(res))
	}
	tl, err := plain.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list without MCP Apps: %v", err)
	}
	for _, tool := range tl.Tools {
		if tool.Name == sheetCheckin || tool.Name == sheetCheckout {
			t.Errorf("a client without MCP Apps is listed %s", tool.Name)
		}
	}
	since := a.one(t, `SELECT now()::text`)
	id := uuid.NewString()
	_, err = plain.CallTool(ctx, &sdk.CallToolParams{Name: sheetCheckout, Arguments: map[string]any{"checkin_id": id, "pickup_code": "1234"}})
	if err == nil || !strings.Contains(err.Error(), "app-only") || !strings.Contains(err.Error(), "neemias_checkout_register") {
		t.Errorf("%s without MCP Apps: %v, want the app-only refusal naming neemias_checkout_register", sheetCheckout, err)
	}
	if got := a.query(t, `SELECT action || ' ' || outcome FROM audit_log WHERE user_id = $1 AND capability = 'neemias_checkout_register'
		AND $2::uuid = ANY(target_ids) AND at >= $3::timestamptz`, u.id, id, since); !slices.Equal(got, []string{"checkout.forbidden denied"}) {
		t.Errorf("audit of the refused app-only call: %v, want [checkout.forbidden denied]", got)
	}
}
