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
	// The sheet is the class list; the model's check-in tool is linked to it too (its pick-up
	// code is shown in the sheet), and the sheet reads each child's pick-up list.
	sheetTool   = "neemias_class_list"
	checkinTool = "neemias_checkin_register"
	pickupTool  = "neemias_pickup_adults"
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
	// The sheet's cases: what each child's row (by handle) and each class's header (by class
	// id) must show.
	wantRows, wantClasses map[string][]string
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
	tab, cancelTab := context.WithTimeout(tab, 120*time.Second)
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
// called on demo data (a month with check-ins; the class list of the demo church's busiest
// day). The host page runs the official host side of @modelcontextprotocol/ext-apps
// (AppBridge, built at test time from testdata/apphost's lock): it puts the view in a sandboxed
// srcdoc iframe, gives it the tool as tools/list lists it and the real tool result, and
// forwards the view's tools/call and resources/read to the real server. The chart must show the
// totals of the structured content; the sheet every class with its counts and every child's
// row (label, handle, status, times, who took and who released them), full names to ADMIN and
// none to VOLUNTARIO; no request leaves the harness's origin. Then the sheet's actions are
// driven for both roles (driveSheet), and a check-in the model made is shown with its code
// (modelCheckin). Screenshots go to $NEEMIAS_ARTIFACTS (else $NEEMIAS_TEST_ARTIFACTS, else a
// temporary dir).
func TestBrowserViews(t *testing.T) {
	exe := chromiumPath(t)
	artifacts := viewArtifactDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
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
	// Alerts and limits the views must show (the demo seed has none): an allergy and a health
	// note on one child of each class of the busiest day, and capacities on every class.
	alerted := a.query(t, `UPDATE children c SET allergies = 'amendoim e castanhas', medical_notes = 'asma: bombinha na mochila'
		WHERE c.id IN (SELECT DISTINCT ON (k.class_id) k.child_id FROM checkins k WHERE k.church_id = $1 AND k.service_date = $2::date ORDER BY k.class_id, k.child_id)
		RETURNING c.handle`, seed.DemoChurchID, day)
	if len(alerted) < 2 {
		t.Fatalf("alerts put on %d children of %s", len(alerted), day)
	}
	a.query(t, `UPDATE classes SET soft_capacity = 20, firm_capacity = 200, children_per_volunteer = 8 WHERE church_id = $1 RETURNING id::text`, seed.DemoChurchID)
	htmlByURI := map[string]string{}
	for _, v := range views.All() {
		htmlByURI[v.URI] = v.HTML
	}
	// Every child's full name, by handle: ADMIN's labels, and what VOLUNTARIO must never see.
	fullNames := map[string]string{}
	for _, row := range a.query(t, `SELECT handle || '|' || name FROM children WHERE church_id = $1`, seed.DemoChurchID) {
		handle, name, _ := strings.Cut(row, "|")
		fullNames[handle] = name
	}
	allNames := slices.Sorted(func(yield func(string) bool) {
		for _, n := range fullNames {
			if !yield(n) {
				return
			}
		}
	})

	h := newViewHarness(t)
	// ADMIN's host: pt-BR, light, says its time zone; VOLUNTARIO's: English, dark with CSS
	// variables of its own, no time zone (the sheet uses the church's, which the class list
	// carries).
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
			cases = append(cases, c)
		}
	}

	// What each case must show, from the structured content.
	for _, c := range cases {
		switch c.tool {
		case chartTool:
			c.wantText = append(c.wantText, chartWants(t, c.locale, c.sc)...)
		case sheetTool:
			cl := classListOf(t, c.sc)
			if cl.Date != day || cl.TimeZone != "America/Sao_Paulo" {
				t.Errorf("%s: the class list of %s says date %s, time zone %q", c.name, day, cl.Date, cl.TimeZone)
			}
			checkins := 0
			var classNames []string
			for _, k := range cl.Classes {
				checkins += k.CheckedIn
				classNames = append(classNames, k.ClassName)
			}
			if checkins == 0 {
				t.Errorf("%s: no check-ins on %s", c.name, day)
			}
			// VOLUNTARIO serves Jardim and Primários only (internal/seed).
			if c.role == voluntario && !slices.Equal(classNames, []string{"Jardim", "Primários"}) {
				t.Errorf("VOLUNTARIO's class list has the classes %v, want [Jardim Primários]", classNames)
			}
			c.wantText = append(c.wantText, day, zoneSentence(c.locale, cl.TimeZone))
			c.wantRows, c.wantClasses = sheetWants(t, c.locale, cl, brasilia)
			alerts := 0
			for _, k := range cl.Classes {
				for _, kid := range k.Children {
					if kid.Allergies != "" && kid.MedicalNotes != "" {
						alerts++
					}
				}
			}
			if alerts == 0 { // VOLUNTARIO holds health:read for their classes
				t.Errorf("%s: the class list of %s carries no child's alerts (put on %v)", c.name, day, alerted)
			}
			for _, k := range cl.Classes {
				for _, kid := range k.Children {
					switch full := fullNames[kid.Handle]; {
					case c.role == admin && kid.Label != full:
						t.Errorf("ADMIN's label of %s is %q, want the full name %q", kid.Handle, kid.Label, full)
					case c.role != admin && kid.Label == full:
						t.Errorf("the server sent %s (no children:read) the full name of %s: %q", c.role.role, kid.Handle, kid.Label)
					}
				}
			}
			if c.role != admin {
				c.denyText = allNames
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
			inFrame := chromedp.WithPollingInFrame(frames[0])
			if c.wantRows != nil {
				checkSheetRows(t, tab, inFrame, c)
			}
			wantLang := map[string]string{"pt-BR": "pt-BR", "en-US": "en"}[c.locale]
			if lang := value(t, tab, chromedp.Poll[string](`document.documentElement.lang`, inFrame)); lang != wantLang {
				t.Errorf("the view's language is %q with host locale %s, want %s", lang, c.locale, wantLang)
			}
			// The host's theme: data-theme, and its CSS variables win over the view's colours.
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
			if c.tool == chartTool {
				checkChart(t, a, tab, h, c, inFrame, chromedp.FromNode(frames[0]), from, artifacts)
			}
			if c.styles != nil {
				// host-context-changed: the host turns light and Portuguese.
				run(t, tab, "send host-context-changed", chromedp.Evaluate[chromedp.Void](`window.hostContextChanged({theme: "light", locale: "pt-BR"})`))
				if got := value(t, tab, chromedp.Poll[string](`document.documentElement.getAttribute("data-theme") === "light" && document.documentElement.lang === "pt-BR" ? "ok" : null`,
					inFrame, chromedp.WithPollingTimeout(10*time.Second))); got != "ok" {
					t.Errorf("host-context-changed was not applied")
				}
			}

			// The host tears the view down (ui/resource-teardown): the bridge answers.
			run(t, tab, "tear the view down", chromedp.Evaluate[chromedp.Void](`void window.hostBridge.teardownResource({}).then(function () { window.tornDown = "ok"; }, function (e) { window.tornDown = String(e); })`))
			if got := value(t, tab, chromedp.Poll[string](`window.tornDown || null`, chromedp.WithPollingTimeout(10*time.Second))); got != "ok" {
				t.Errorf("ui/resource-teardown: %s", got)
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

	// The sheet's actions, driven through the view for both roles on today's class list: tap a
	// child who is not here (the app-only neemias_checkin_sheet_checkin through the host's
	// proxied tools/call), see the pick-up code for the guardian, open the child's check-out
	// panel (its pick-up list, a restricted adult in red), refusals in words (the restricted
	// adult, a wrong code, a guardian restricted while the panel was open, a locked check-in),
	// then the right code and a guardian from the list check the child out; the database
	// changes each time and the sheet re-reads the class list after every action.
	today := a.one(t, `SELECT (now() AT TIME ZONE time_zone)::date::text FROM churches WHERE id = $1`, seed.DemoChurchID)
	adminKid := a.sheetKid(t, false)
	volKid := a.sheetKid(t, true, adminKid.id)
	for _, r := range []struct {
		user   demoUser
		locale string
		kid    sheetKid
		args   map[string]any
	}{
		// ADMIN's model asked for the child's class only: the sheet keeps that filter when it re-reads.
		{admin, "pt-BR", adminKid, map[string]any{"date": today, "class": adminKid.className}},
		{voluntario, "en-US", volKid, map[string]any{"date": today}},
	} {
		cs := a.connectUI(t, ctx, eras[0], a.token(t, r.user))
		// A restriction on the child's list before the sheet opens: shown in red, never selectable.
		a.one(t, `INSERT INTO pickup_adults (church_id, child_id, name, relationship, authorized, note, created_by)
			VALUES ($1, $2, $3, 'tio', false, $4, $5) RETURNING id::text`, seed.DemoChurchID, r.kid.id, restrictedAdult, restrictedNote, seed.DemoAdminID.String())
		// An allergy the volunteer must see at the door, and a room past its soft capacity
		// once the child is in: the check-in succeeds with both said.
		a.one(t, `UPDATE children SET allergies = $2 WHERE id = $1 RETURNING id::text`, r.kid.id, kidAllergy)
		a.one(t, `UPDATE classes SET soft_capacity = 1 WHERE id = $1 RETURNING id::text`, r.kid.classID)
		if n := a.one(t, `SELECT count(*)::text FROM checkins WHERE class_id = $1 AND service_date = $2::date AND checked_out_at IS NULL`, r.kid.classID, today); n == "0" {
			// One child in the room already, so the sheet's check-in takes it past 1.
			other := a.one(t, `SELECT c.handle FROM children c WHERE c.class_id = $1 AND c.archived_at IS NULL AND c.id <> $2::uuid AND NOT (c.id::text = ANY($3::text[]))
				AND NOT EXISTS (SELECT 1 FROM checkins k WHERE k.child_id = c.id AND k.service_date = $4::date) ORDER BY c.id LIMIT 1`,
				r.kid.classID, r.kid.id, []string{adminKid.id, volKid.id}, today)
			if res, _ := callJSON(t, cs, checkinTool, map[string]any{"child": other}); res.IsError {
				t.Fatalf("checking in %s first: %s", other, resultText(res))
			}
		}
		res, sc := callJSON(t, cs, sheetTool, r.args)
		if res.IsError || sc == nil {
			t.Fatalf("%s %s %v: %s", r.user.role, sheetTool, r.args, resultText(res))
		}
		c := &viewCase{
			name: strings.ToLower(r.user.role) + "-checkin-sheet-actions", role: r.user, locale: r.locale, uri: sheetURI,
			tool: sheetTool, args: r.args, result: res, toolDef: listedTool(t, ctx, cs, sheetTool), sc: sc, cs: cs,
		}
		h.mu.Lock()
		h.cases[c.name] = c
		h.mu.Unlock()
		t.Run("browser/"+c.name, func(t *testing.T) {
			driveSheet(t, a, h, br, c, r.kid, allNames, artifacts)
		})
	}

	// A check-in the model made (neemias_checkin_register, linked to the sheet): the host shows
	// the sheet with that result; its pick-up code, in _meta for the view only, is shown for the
	// guardian, then the class list of the day.
	t.Run("browser/admin-checkin-sheet-model-checkin", func(t *testing.T) {
		modelCheckin(t, a, h, br, ctx, a.sheetKid(t, false, adminKid.id, volKid.id), today, artifacts)
	})

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
		t.Logf("the views called the server through the host: %d requests", len(calls))
	}
}

// The restriction driveSheet puts on its child's pick-up list before the sheet opens, and the
// one it puts on a guardian while the check-out panel is open.
const (
	restrictedAdult = "Rogério Teixeira Restrito"
	restrictedNote  = "Ordem judicial: não entregar a criança; chamar a coordenação."
	guardianNote    = "Guarda suspensa desde hoje: chamar a coordenação."
	kidAllergy      = "leite e derivados"
)

// checkViewsOverMCP: on a session declaring MCP Apps, the tools linked to a view (the read
// tools of the chart and the class list, the model's check-in tool, and the sheet's app-only
// tools) carry _meta.ui.resourceUri of their view and each view reads as the embedded HTML,
// typed text/html;profile=mcp-app. In 2026-07-28 the go-sdk client declares the extension per
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
	if want := map[string]string{chartTool: chartURI, sheetTool: sheetURI, checkinTool: sheetURI, sheetCheckin: sheetURI, sheetCheckout: sheetURI}; !mapsEqual(got, want) {
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

// classList is the structured content of neemias_class_list (gen/schemas/class_list.output.json).
type classList struct {
	Date     string `json:"date"`
	Today    string `json:"today"`
	TimeZone string `json:"time_zone"`
	Classes  []struct {
		ClassID   string      `json:"class_id"`
		ClassName string      `json:"class_name"`
		Headcount int         `json:"headcount"`
		CheckedIn int         `json:"checked_in"`
		Enrolled  int         `json:"enrolled"`
		Children  []listChild `json:"children"`
		// The class's limits (absent: none) and its volunteers.
		SoftCapacity         int `json:"soft_capacity"`
		FirmCapacity         int `json:"firm_capacity"`
		ChildrenPerVolunteer int `json:"children_per_volunteer"`
		Volunteers           int `json:"volunteers"`
	} `json:"classes"`
}

type listChild struct {
	Handle      string `json:"handle"`
	Label       string `json:"label"`
	Status      string `json:"status"`
	CheckinID   string `json:"checkin_id"`
	CheckedInAt string `json:"checked_in_at"`
	PickedUpAt  string `json:"picked_up_at"`
	PickedUpBy  string `json:"picked_up_by"`
	ReleasedBy  string `json:"released_by"`
	// With health:read only.
	Allergies    string `json:"allergies"`
	MedicalNotes string `json:"medical_notes"`
}

func classListOf(t *testing.T, sc map[string]any) classList {
	t.Helper()
	var cl classList
	b, _ := json.Marshal(sc)
	if err := json.Unmarshal(b, &cl); err != nil {
		t.Fatalf("class list %s: %v", b, err)
	}
	return cl
}

// sheetWords are the sheet's words a test looks for, per host locale.
type sheetWords struct {
	status                              map[string]string
	in, out, takenBy, releasedBy        string
	counts                              string // headcount, checked in, enrolled
	zone                                string // the church's time zone
	give, wrong, attempts4, locked      string
	notAuthorized, deniedPick, noteIs   string
	codeLabel, legend, checkedOut, gone string
	allergy, medical, capWarn           string
	capacity                            string // headcount, firm, soft
	ratio                               func(n, v int) string
}

func wordsFor(locale string) sheetWords {
	if locale == "pt-BR" {
		return sheetWords{
			status: map[string]string{"not_here": "Ausente", "checked_in": "Na turma", "picked_up": "Retirada"},
			in:     "Entrada ", out: "Saída ", takenBy: "Levada por ", releasedBy: "Liberada por ",
			counts: "Na turma agora: %d · Check-ins: %d · Matriculadas: %d", zone: "Horários no fuso da igreja, %s.",
			give: "Entregue este código ao responsável de ", wrong: "Código de retirada incorreto", attempts4: "Mais 4 tentativas erradas",
			locked: "um membro da equipe deve liberar", notAuthorized: "Este adulto NÃO está autorizado a levar a criança",
			deniedPick: " NÃO está autorizado(a) a levar esta criança", noteIs: "Observação: ",
			codeLabel: "Código de retirada (apresentado por quem vem buscar)", legend: "Quem vai levar a criança",
			checkedOut: "Retirada registrada: ",
			allergy:    "Alergia: ", medical: "Saúde: ", capWarn: "Aviso de lotação (avise a coordenação): ",
			capacity: "Lotação: %d de %d (aviso a partir de %d)",
			ratio: func(n, v int) string {
				return fmt.Sprintf("%d crianças por voluntário; %d %s", n, v, map[bool]string{true: "voluntário designado", false: "voluntários designados"}[v == 1])
			},
		}
	}
	return sheetWords{
		status: map[string]string{"not_here": "Not here", "checked_in": "In class", "picked_up": "Picked up"},
		in:     "In ", out: "Out ", takenBy: "Taken by ", releasedBy: "Released by ",
		counts: "In class now: %d · Checked in: %d · Enrolled: %d", zone: "Times in the church's time zone, %s.",
		give: "Give this code to the guardian of ", wrong: "Wrong pick-up code", attempts4: "4 more wrong attempts",
		locked: "a staff member must release", notAuthorized: "This adult is NOT authorized to take the child home",
		deniedPick: " is NOT authorized to take this child home", noteIs: "Note: ",
		codeLabel: "Pick-up code (shown by whoever comes for the child)", legend: "Who is taking the child",
		checkedOut: "Picked up: ",
		allergy:    "Allergy: ", medical: "Health: ", capWarn: "Capacity warning (tell the coordinator): ",
		capacity: "Capacity: %d of %d (warning from %d)",
		ratio: func(n, v int) string {
			return fmt.Sprintf("%d children per volunteer; %d %s", n, v, map[bool]string{true: "volunteer assigned", false: "volunteers assigned"}[v == 1])
		},
	}
}

func zoneSentence(locale, zone string) string { return fmt.Sprintf(wordsFor(locale).zone, zone) }

// clock is how the sheet shows a time of the class list: in Brasília (the church's zone), as
// 15:04 in pt-BR and 03:04 (then AM/PM) in English.
func clock(t *testing.T, locale, iso string, zone *time.Location) string {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, iso)
	if err != nil {
		t.Fatalf("time %q: %v", iso, err)
	}
	return at.In(zone).Format(map[string]string{"pt-BR": "15:04", "en-US": "03:04"}[locale])
}

// sheetWants are what the sheet must show of a class list: per child (by handle) its label,
// handle, status and times, who took and who released them; per class (by id) its name and
// counts.
func sheetWants(t *testing.T, locale string, cl classList, zone *time.Location) (rows, classes map[string][]string) {
	t.Helper()
	w := wordsFor(locale)
	rows, classes = map[string][]string{}, map[string][]string{}
	for _, k := range cl.Classes {
		classes[k.ClassID] = []string{k.ClassName, fmt.Sprintf(w.counts, k.Headcount, k.CheckedIn, k.Enrolled)}
		if k.FirmCapacity > 0 && k.SoftCapacity > 0 {
			classes[k.ClassID] = append(classes[k.ClassID], fmt.Sprintf(w.capacity, k.Headcount, k.FirmCapacity, k.SoftCapacity))
		}
		if k.ChildrenPerVolunteer > 0 {
			classes[k.ClassID] = append(classes[k.ClassID], w.ratio(k.ChildrenPerVolunteer, k.Volunteers))
		}
		for _, c := range k.Children {
			want := []string{c.Label, c.Handle, w.status[c.Status]}
			if c.CheckedInAt != "" {
				want = append(want, w.in+clock(t, locale, c.CheckedInAt, zone))
			}
			if c.PickedUpAt != "" {
				want = append(want, w.out+clock(t, locale, c.PickedUpAt, zone))
			}
			if c.PickedUpBy != "" {
				want = append(want, w.takenBy+c.PickedUpBy)
			}
			if c.ReleasedBy != "" {
				want = append(want, w.releasedBy+c.ReleasedBy)
			}
			if c.Allergies != "" {
				want = append(want, w.allergy+c.Allergies)
			}
			if c.MedicalNotes != "" {
				want = append(want, w.medical+c.MedicalNotes)
			}
			rows[c.Handle] = want
		}
	}
	return rows, classes
}

// sheetShown is what the sheet shows, per row (tr.child by data-handle) and per class header
// (by data-class-id).
type sheetShown struct {
	Rows    map[string]string `json:"rows"`
	Status  map[string]string `json:"status"`
	Classes map[string]string `json:"classes"`
}

const sheetShownJS = `JSON.stringify((function () {
	var o = { rows: {}, status: {}, classes: {} };
	document.querySelectorAll("tr.child").forEach(function (r) { var h = r.getAttribute("data-handle"); o.rows[h] = r.innerText; o.status[h] = r.getAttribute("data-status"); });
	document.querySelectorAll("section.class").forEach(function (s) { o.classes[s.getAttribute("data-class-id")] = s.querySelector(".class-head").innerText; });
	return o;
})())`

func readSheet(t *testing.T, tab context.Context, inFrame chromedp.PollOption) sheetShown {
	t.Helper()
	var got sheetShown
	if err := json.Unmarshal([]byte(value(t, tab, chromedp.Poll[string](sheetShownJS, inFrame))), &got); err != nil {
		t.Fatalf("the sheet's rows: %v", err)
	}
	return got
}

// checkSheetRows: the sheet shows every class of c's class list with its counts and every child
// in a row of their own, with what sheetWants says.
func checkSheetRows(t *testing.T, tab context.Context, inFrame chromedp.PollOption, c *viewCase) {
	t.Helper()
	got := readSheet(t, tab, inFrame)
	if len(got.Rows) != len(c.wantRows) {
		t.Errorf("the sheet shows %d child rows, the class list has %d", len(got.Rows), len(c.wantRows))
	}
	for handle, want := range c.wantRows {
		row, ok := got.Rows[handle]
		if !ok {
			t.Errorf("no row for child %s", handle)
			continue
		}
		for _, w := range want {
			if !strings.Contains(row, w) {
				t.Errorf("the row of %s does not show %q: %q", handle, w, row)
			}
		}
	}
	if len(got.Classes) != len(c.wantClasses) {
		t.Errorf("the sheet shows %d classes, the class list has %d", len(got.Classes), len(c.wantClasses))
	}
	for id, want := range c.wantClasses {
		for _, w := range want {
			if !strings.Contains(got.Classes[id], w) {
				t.Errorf("the header of class %s does not show %q: %q", id, w, got.Classes[id])
			}
		}
	}
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

// sheetKid is a child the sheet's actions are driven for, as the database has them.
type sheetKid struct {
	id, handle, name, classID, className string
	guardians                            []adult // the child's guardians, in the pick-up list's order (by name)
}

type adult struct{ id, name string }

// sheetKid picks a child of the demo church placed in a class (one of the demo volunteer's if
// volunteer, else one of the others), not checked in today, with two guardians and no guardian
// account (so no other test's guardian sees them change), nothing on the pick-up list yet, and
// none of not.
func (a *app) sheetKid(t *testing.T, volunteer bool, not ...string) sheetKid {
	t.Helper()
	in := "NOT IN"
	if volunteer {
		in = "IN"
	}
	ids := a.query(t, `SELECT c.id::text FROM children c
		WHERE c.church_id = $1 AND c.class_id IS NOT NULL AND c.archived_at IS NULL
		  AND c.class_id `+in+` (SELECT class_id FROM volunteer_assignments WHERE user_id = $2::uuid)
		  AND NOT EXISTS (SELECT 1 FROM checkins k WHERE k.child_id = c.id
		                  AND k.service_date = (SELECT (now() AT TIME ZONE time_zone)::date FROM churches WHERE id = c.church_id))
		  AND NOT EXISTS (SELECT 1 FROM guardian_children gc JOIN guardians g ON g.id = gc.guardian_id
		                  WHERE gc.child_id = c.id AND g.user_id IS NOT NULL)
		  AND (SELECT count(*) FROM guardian_children gc WHERE gc.child_id = c.id) = 2
		  AND NOT EXISTS (SELECT 1 FROM pickup_adults p WHERE p.child_id = c.id)
		  AND NOT (c.id::text = ANY($3::text[]))
		ORDER BY c.id LIMIT 1`, seed.DemoChurchID, seed.DemoVoluntarioID.String(), append([]string{}, not...))
	if len(ids) == 0 {
		t.Fatalf("no child with two guardians, no guardian account and no check-in today (volunteer's classes: %v)", volunteer)
	}
	k := sheetKid{id: ids[0]}
	row := strings.Split(a.one(t, `SELECT c.handle || '|' || c.name || '|' || c.class_id::text || '|' || cl.name
		FROM children c JOIN classes cl ON cl.id = c.class_id WHERE c.id = $1`, k.id), "|")
	k.handle, k.name, k.classID, k.className = row[0], row[1], row[2], row[3]
	for _, g := range a.query(t, `SELECT g.id::text || '|' || g.name FROM guardian_children gc JOIN guardians g ON g.id = gc.guardian_id
		WHERE gc.child_id = $1 ORDER BY g.name, g.id`, k.id) {
		id, name, _ := strings.Cut(g, "|")
		k.guardians = append(k.guardians, adult{id, name})
	}
	return k
}

// driveSheet opens the sheet of case c (today's class list, with restrictedAdult on kid's
// pick-up list) and drives its actions for kid: tap the child to check them in, the pick-up
// code shown once for the guardian (the one stored), the check-out panel with the pick-up list
// (guardians selectable, the restricted adult in red with the note and refused when tapped), a
// wrong code (refused, counted, sent as the string typed), a guardian restricted while the
// panel was open (refused by the server with the note, then shown in red), a locked check-in,
// then the right code and the other guardian: checked out by the user, picked up by that
// guardian. After each step it checks what the view says, the database, the class list's live
// status, and that no child's full name (names) is shown to a caller without children:read.
func driveSheet(t *testing.T, a *app, h *viewHarness, br *browser, c *viewCase, kid sheetKid, names []string, artifacts string) {
	t.Helper()
	tab, requests := h.tab(t, br)
	hostURL := h.hs.URL + "/host.html?case=" + c.name
	run(t, tab, "open the host page with today's class list",
		chromedp.Navigate(hostURL),
		chromedp.Poll[chromedp.Void](`window.hostDelivered === true`, chromedp.WithPollingTimeout(20*time.Second)))
	frames := value(t, tab, chromedp.Nodes(chromedp.CSS("iframe#view")))
	if len(frames) != 1 {
		t.Fatalf("%d view iframes", len(frames))
	}
	frame := frames[0]
	in := chromedp.FromNode(frame)
	inFrame := chromedp.WithPollingInFrame(frame)
	w := wordsFor(c.locale)
	brasilia, _ := time.LoadLocation("America/Sao_Paulo")
	// wait polls JS (in the view) until it returns a non-empty string, and returns it.
	wait := func(what, js string) string {
		t.Helper()
		v, err := chromedp.Run(tab, chromedp.Poll[string](js, inFrame, chromedp.WithPollingTimeout(20*time.Second)))
		if err != nil {
			shown, _ := chromedp.Run(tab, chromedp.Poll[string](`document.body.innerText`, inFrame, chromedp.WithPollingTimeout(2*time.Second)))
			t.Fatalf("%s: %v; the view shows:\n%s", what, err, shown)
		}
		return v
	}
	shown := func() string { return wait("the view's text", `document.body.innerText || null`) }
	noName := func(step string) {
		t.Helper()
		if c.role == admin {
			return
		}
		body := shown()
		for _, n := range append([]string{kid.name}, names...) {
			if strings.Contains(body, n) {
				t.Errorf("%s: the view shows the child name %q to %s (no children:read)", step, n, c.role.role)
			}
		}
	}
	// calls counts the view's tools/call requests of tool so far.
	calls := func(tool string) int {
		n := 0
		for _, call := range h.viewCalls() {
			if strings.Contains(call, `"method":"tools/call"`) && strings.Contains(call, `"name":"`+tool+`"`) {
				n++
			}
		}
		return n
	}
	// live: the class list as the server has it now (the tool input's filters), and the row
	// and header the sheet must show for it.
	live := func(step string) {
		t.Helper()
		res, sc := callJSON(t, c.cs, sheetTool, c.args)
		if res.IsError {
			t.Fatalf("%s: %s", step, resultText(res))
		}
		rows, classes := sheetWants(t, c.locale, classListOf(t, sc), brasilia)
		got := readSheet(t, tab, inFrame)
		for _, want := range rows[kid.handle] {
			if !strings.Contains(got.Rows[kid.handle], want) {
				t.Errorf("%s: the row of %s does not show %q: %q", step, kid.handle, want, got.Rows[kid.handle])
			}
		}
		for _, want := range classes[kid.classID] {
			if !strings.Contains(got.Classes[kid.classID], want) {
				t.Errorf("%s: the header of %s does not show %q: %q", step, kid.className, want, got.Classes[kid.classID])
			}
		}
		if len(got.Classes) != len(classes) {
			t.Errorf("%s: the sheet shows %d classes, the class list (%v) has %d", step, len(got.Classes), c.args, len(classes))
		}
	}
	status := func(s string) string {
		return fmt.Sprintf(`(function () { var r = document.querySelector('tr.child[data-handle="%s"]'); return r && r.getAttribute("data-status") === "%s" && !document.querySelector("button[disabled]") ? r.innerText : null; })()`, kid.handle, s)
	}
	panelMsg := func(what, re string) string {
		return wait(what, `(function () { var m = document.getElementById("panel-msg"); return m && m.className.indexOf("err") >= 0 && /`+re+`/.test(m.innerText) && !document.querySelector("button[disabled]") ? m.innerText : null; })()`)
	}
	typeCode := func(code string) {
		t.Helper()
		wait("clear the code", `(function () { var i = document.getElementById("checkout-code"); if (!i) return null; i.value = ""; i.dispatchEvent(new Event("input")); return "ok"; })()`)
		run(t, tab, "type the pick-up code", chromedp.SendKeys("#checkout-code", code, in))
	}
	choose := func(g adult) {
		t.Helper()
		run(t, tab, "choose "+g.name, chromedp.Click(`#adults label[for="`+wait("the radio of "+g.name, fmt.Sprintf(
			`(function () { var r = document.querySelector('#adults input[type=radio][data-adult-id="%s"]'); return r ? r.id : null; })()`, g.id))+`"]`, in))
		if v := wait("the choice", `(function () { var r = document.querySelector("#adults input[type=radio]:checked"); return r ? r.value : "none"; })()`); v != g.name {
			t.Errorf("after choosing %s the checked adult is %q", g.name, v)
		}
	}

	row := wait("the child's row", status("not_here"))
	if c.role == admin && !strings.Contains(row, kid.name) {
		t.Errorf("ADMIN's row of %s does not show the child's name %q: %q", kid.handle, kid.name, row)
	}
	if !strings.Contains(row, kid.handle) || !strings.Contains(row, w.status["not_here"]) {
		t.Errorf("the row of %s before the check-in: %q", kid.handle, row)
	}
	noName("the class list")

	// Tap the child who is not here: ADMIN taps the row, VOLUNTARIO its check-in button.
	since := a.one(t, `SELECT now()::text`)
	tap := `tr.child[data-handle="` + kid.handle + `"] th`
	if c.role != admin {
		tap = "#act-" + kid.handle
	}
	run(t, tab, "tap the child to check them in", chromedp.Click(tap, in))
	code := wait("the pick-up code", `(function () { var c = document.getElementById("pickup-code"); return c ? c.textContent : null; })()`)
	if n := a.one(t, `SELECT count(*)::text FROM checkins WHERE child_id = $1 AND service_date = $2::date AND checked_out_at IS NULL AND checked_in_by = $3`,
		kid.id, c.args["date"], c.role.id.String()); n != "1" {
		t.Fatalf("after the tap: %s open check-ins of %s on %v by %s, want 1", n, kid.handle, c.args["date"], c.role.role)
	}
	checkinID := a.one(t, `SELECT id::text FROM checkins WHERE child_id = $1 AND service_date = $2::date`, kid.id, c.args["date"])
	if !pickupCodeMatches(t, a, checkinID, code) {
		t.Errorf("the view shows pick-up code %q, which is not the one stored for %s", code, checkinID)
	}
	handoff := wait("the code's instructions", `(function () { var b = document.getElementById("handoff"); return b && !b.hidden ? b.innerText : null; })()`)
	if !strings.Contains(handoff, w.give) {
		t.Errorf("the pick-up code box says %q, want %q…", handoff, w.give)
	}
	// What the volunteer must act on, said with the check-in: the room past its soft capacity
	// and the child's allergy.
	warned := wait("the check-in's warnings", `(function () { var f = document.getElementById("flash"); return f && f.className.indexOf("warn") >= 0 && f.getAttribute("role") === "alert" ? f.innerText : null; })()`)
	for _, want := range []string{w.capWarn, "past its soft capacity of 1", w.allergy + kidAllergy} {
		if !strings.Contains(warned, want) {
			t.Errorf("the check-in's message %q does not say %q", warned, want)
		}
	}
	// The sheet re-read the class list: the row is "in class", the counts are the server's.
	row = wait("the row in class", status("checked_in"))
	if !strings.Contains(row, w.status["checked_in"]) || !strings.Contains(row, w.in) {
		t.Errorf("the row after the check-in: %q", row)
	}
	live("after the check-in")
	if n := strings.Count(shown(), code); n != 1 {
		t.Errorf("the pick-up code is shown %d times, want once", n)
	}
	noName("after the check-in")
	screenshot(t, tab, filepath.Join(artifacts, "view-"+c.name+"-checked-in.png"))
	// Given to the guardian: dismissed, the code is gone from the view.
	run(t, tab, "dismiss the code", chromedp.Click("#handoff-done", in))
	wait("the code dismissed", `document.getElementById("handoff").hidden && !document.getElementById("pickup-code") ? "ok" : null`)
	if strings.Contains(shown(), code) {
		t.Errorf("the pick-up code is still shown after it was dismissed")
	}

	// Tap the child in class: the check-out panel with the code field and the pick-up list.
	run(t, tab, "open the check-out panel", chromedp.Click("#act-"+kid.handle, in))
	if lbl := wait("the code input's label", `(function () { var i = document.getElementById("checkout-code"); return i && i.labels.length ? i.labels[0].textContent : null; })()`); lbl != w.codeLabel {
		t.Errorf("the pick-up code input is labelled %q, want %q", lbl, w.codeLabel)
	}
	adults := wait("the pick-up list", `(function () { var f = document.getElementById("adults"); return f && f.querySelector("input[type=radio], button.denied") ? f.innerText : null; })()`)
	if !strings.Contains(adults, w.legend) || !strings.Contains(adults, restrictedAdult) || !strings.Contains(adults, restrictedNote) {
		t.Errorf("the pick-up list shows %q, want the legend, %q in it and the note %q", adults, restrictedAdult, restrictedNote)
	}
	radios := wait("the selectable adults", `JSON.stringify(Array.prototype.map.call(document.querySelectorAll("#adults input[type=radio]"), function (r) { return r.value; }))`)
	if want, _ := json.Marshal([]string{kid.guardians[0].name, kid.guardians[1].name}); radios != string(want) {
		t.Errorf("the selectable adults are %s, want the guardians %s", radios, want)
	}
	// The restricted adult is in red (the sheet's danger colour; the host sends none) and not
	// selectable: tapping them says so, with the note, and sends nothing.
	if v := wait("the restricted adult", `(function () { var b = document.querySelector("#adults button.denied"); return b ? getComputedStyle(b).color + "|" + (b.querySelector("input") ? "input" : "none") : null; })()`); v != "rgb(164, 22, 26)|none" {
		t.Errorf("the restricted adult's entry: colour and control %s, want rgb(164, 22, 26) and no input", v)
	}
	before := calls(sheetCheckout)
	run(t, tab, "tap the restricted adult", chromedp.Click("#adults button.denied", in))
	if got := panelMsg("the refusal of the restricted adult", "NÃO|NOT"); !strings.Contains(got, restrictedAdult+w.deniedPick) || !strings.Contains(got, w.noteIs+restrictedNote) {
		t.Errorf("tapping the restricted adult, the view says %q", got)
	}
	if v := wait("no adult chosen", `document.querySelector("#adults input[type=radio]:checked") ? "chosen" : "none"`); v != "none" {
		t.Errorf("tapping the restricted adult chose an adult")
	}
	if n := calls(sheetCheckout); n != before {
		t.Errorf("tapping the restricted adult sent %d check-out calls", n-before)
	}
	screenshot(t, tab, filepath.Join(artifacts, "view-"+c.name+"-not-authorized.png"))

	// A wrong code, all digits with a leading zero (sent as the string typed): refused in
	// words, nothing changes but the attempt counter.
	choose(kid.guardians[1])
	typeCode("0427")
	run(t, tab, "confirm with a wrong code", chromedp.Click("#checkout-confirm", in))
	if got := panelMsg("the wrong-code message", "incorreto|Wrong"); !strings.Contains(got, w.wrong) || !strings.Contains(got, w.attempts4) {
		t.Errorf("after a wrong code the view says %q", got)
	}
	if v := a.one(t, `SELECT (checked_out_at IS NULL)::text || ' ' || failed_pickup_attempts FROM checkins WHERE id = $1`, checkinID); v != "true 1" {
		t.Errorf("after a wrong code: checked_out_at IS NULL, failed attempts = %s; want true 1", v)
	}
	sent := false
	for _, call := range h.viewCalls() {
		sent = sent || strings.Contains(call, `"name":"`+sheetCheckout+`"`) && strings.Contains(call, `"pickup_code":"0427"`) &&
			strings.Contains(call, `"picked_up_by":"`+kid.guardians[1].name+`"`) && strings.Contains(call, `"child":"`+kid.handle+`"`)
	}
	if !sent {
		t.Errorf("the view did not send the check-out with child %s, pickup_code \"0427\" (a string) and picked_up_by %q", kid.handle, kid.guardians[1].name)
	}
	screenshot(t, tab, filepath.Join(artifacts, "view-"+c.name+"-wrong-code.png"))

	// A guardian restricted while the panel is open (the list on screen is stale): the server
	// refuses them whatever the code, the view says so with the note, re-reads the list and
	// shows them in red; the attempt counter does not move.
	g0 := kid.guardians[0]
	a.one(t, `INSERT INTO pickup_adults (church_id, child_id, guardian_id, name, relationship, authorized, note, created_by)
		VALUES ($1, $2, $3, $4, 'responsável', false, $5, $6) RETURNING id::text`, seed.DemoChurchID, kid.id, g0.id, g0.name, guardianNote, seed.DemoAdminID.String())
	choose(g0)
	typeCode(code)
	run(t, tab, "confirm with the restricted guardian", chromedp.Click("#checkout-confirm", in))
	if got := panelMsg("the server's refusal of the restricted guardian", "NÃO|NOT"); !strings.Contains(got, w.notAuthorized) || !strings.Contains(got, w.noteIs+guardianNote) {
		t.Errorf("checking out with a restricted guardian, the view says %q", got)
	}
	wait("the guardian shown as restricted", fmt.Sprintf(`(function () { var d = Array.prototype.some.call(document.querySelectorAll("#adults button.denied"), function (b) { return b.innerText.indexOf(%q) >= 0; });
		return d && !document.querySelector('#adults input[type=radio][value=%q]') ? "ok" : null; })()`, guardianNote, g0.name))
	if v := a.one(t, `SELECT (checked_out_at IS NULL)::text || ' ' || failed_pickup_attempts FROM checkins WHERE id = $1`, checkinID); v != "true 1" {
		t.Errorf("after the restricted guardian: checked_out_at IS NULL, failed attempts = %s; want true 1", v)
	}
	screenshot(t, tab, filepath.Join(artifacts, "view-"+c.name+"-not-authorized-server.png"))

	// A locked check-in (as after too many wrong codes): refused in words, even with the right code.
	a.one(t, `UPDATE checkins SET locked_at = now() WHERE id = $1 RETURNING id::text`, checkinID)
	choose(kid.guardians[1])
	typeCode(code + "\n")
	if got := panelMsg("the locked message", "bloqueado|locked"); !strings.Contains(got, w.locked) {
		t.Errorf("on a locked check-in the view says %q", got)
	}
	if v := a.one(t, `SELECT (checked_out_at IS NULL)::text FROM checkins WHERE id = $1`, checkinID); v != "true" {
		t.Errorf("a locked check-in was checked out")
	}
	a.one(t, `UPDATE checkins SET locked_at = NULL, failed_pickup_attempts = 0 WHERE id = $1 RETURNING id::text`, checkinID)

	// The right code (VOLUNTARIO types it in lower case, without the hyphen) and the other
	// guardian: checked out; the sheet refreshes to "picked up", by whom and released by whom.
	g1 := kid.guardians[1]
	choose(g1)
	typed := code
	if c.role != admin {
		typed = strings.ToLower(strings.ReplaceAll(code, "-", ""))
	}
	typeCode(typed)
	run(t, tab, "confirm with the right code", chromedp.Click("#checkout-confirm", in))
	picked := wait("the row picked up", status("picked_up"))
	releaser := a.one(t, `SELECT display_name FROM users WHERE id = $1`, c.role.id.String())
	for _, want := range []string{w.status["picked_up"], w.out, w.takenBy + g1.name, w.releasedBy + releaser} {
		if !strings.Contains(picked, want) {
			t.Errorf("after the right code the row says %q, want %q in it", picked, want)
		}
	}
	if got := wait("the check-out message", `(function () { var f = document.getElementById("flash"); return f && f.className.indexOf("ok") >= 0 && f.innerText ? f.innerText : null; })()`); !strings.Contains(got, w.checkedOut) || !strings.Contains(got, g1.name) {
		t.Errorf("after the right code the sheet says %q", got)
	}
	if v := a.one(t, `SELECT (checked_out_at IS NOT NULL)::text || ' ' || coalesce(checked_out_by::text, '') || ' ' || coalesce(picked_up_by_guardian::text, '') || ' ' || coalesce(picked_up_by_name, '')
		FROM checkins WHERE id = $1`, checkinID); v != "true "+c.role.id.String()+" "+g1.id+" "+g1.name {
		t.Errorf("after the right code the check-in has checked out, checked_out_by, picked_up_by_guardian, picked_up_by_name = %s; want true %s %s %s", v, c.role.id, g1.id, g1.name)
	}
	live("after the check-out")
	// The same audit as the model's tools: the check-in, the wrong code, the restricted
	// guardian, the lock, the pick-up (tapping the restricted adult sent nothing).
	acts := a.query(t, `SELECT action || ' ' || outcome FROM audit_log WHERE user_id = $1 AND $2::uuid = ANY(target_ids)
		AND capability IN ('neemias_checkin_register', 'neemias_checkout_register') AND at >= $3::timestamptz ORDER BY id`, c.role.id, kid.id, since)
	if want := []string{"checkin allowed", "checkout.wrong_code denied", "checkout.not_authorized denied", "checkout.locked denied", "checkout allowed"}; !slices.Equal(acts, want) {
		t.Errorf("audit entries of the child: %v, want %v", acts, want)
	}
	noName("after the check-out")
	shot := filepath.Join(artifacts, "view-"+c.name+"-checked-out.png")
	screenshot(t, tab, shot)
	checkPNG(t, shot)

	// The view called the app-only tools and the read tools through the host, never the
	// model's check-in and pick-up tools.
	for _, tool := range []string{sheetCheckin, sheetCheckout, sheetTool, pickupTool} {
		if calls(tool) == 0 {
			t.Errorf("the view never called %s through the host", tool)
		}
	}
	for _, tool := range []string{checkinTool, "neemias_checkout_register"} {
		if n := calls(tool); n != 0 {
			t.Errorf("the view called %s %d times", tool, n)
		}
	}
	// Every re-read kept the tool input's filters.
	for _, call := range h.viewCalls() {
		if cls, ok := c.args["class"].(string); ok && strings.Contains(call, `"name":"`+sheetTool+`"`) && strings.Contains(call, `"date":"`+fmt.Sprint(c.args["date"])+`"`) &&
			!strings.Contains(call, `"class":"`+cls+`"`) {
			t.Errorf("a re-read of the class list lost the class filter %q: %s", cls, call)
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

// modelCheckin: the model checks kid in with neemias_checkin_register over a session with MCP
// Apps; the pick-up code is in the result's _meta["neemias/handoff"] only (not in
// structuredContent, not in the text the model reads). The host shows the sheet with that
// result: the sheet shows the code for the guardian (the one stored) and then the day's class
// list with the child in class.
func modelCheckin(t *testing.T, a *app, h *viewHarness, br *browser, ctx context.Context, kid sheetKid, today, artifacts string) {
	t.Helper()
	cs := a.connectUI(t, ctx, eras[0], a.token(t, admin))
	args := map[string]any{"child": kid.handle}
	res, sc := callJSON(t, cs, checkinTool, args)
	if res.IsError || sc == nil {
		t.Fatalf("%s %v: %s", checkinTool, args, resultText(res))
	}
	ho, _ := res.Meta["neemias/handoff"].(map[string]any)
	code, _ := ho["pickup_code"].(string)
	if code == "" {
		t.Fatalf("%s with MCP Apps: no _meta[neemias/handoff].pickup_code in %v", checkinTool, res.Meta)
	}
	if _, ok := sc["pickup_code"]; ok || strings.Contains(resultText(res), code) {
		t.Errorf("%s with MCP Apps: the pick-up code reached structuredContent or the text: %v / %q", checkinTool, sc, resultText(res))
	}
	checkinID, _ := sc["checkin_id"].(string)
	if !pickupCodeMatches(t, a, checkinID, code) {
		t.Fatalf("the _meta pick-up code is not the one stored for %s", checkinID)
	}
	c := &viewCase{name: "admin-checkin-sheet-model-checkin", role: admin, locale: "pt-BR", uri: sheetURI, tool: checkinTool, args: args,
		result: res, toolDef: listedTool(t, ctx, cs, checkinTool), sc: sc, cs: cs, timeZone: "America/Sao_Paulo"}
	h.mu.Lock()
	h.cases[c.name] = c
	h.mu.Unlock()
	tab, requests := h.tab(t, br)
	hostURL := h.hs.URL + "/host.html?case=" + c.name
	run(t, tab, "open the host page with the model's check-in",
		chromedp.Navigate(hostURL),
		chromedp.Poll[chromedp.Void](`window.hostDelivered === true`, chromedp.WithPollingTimeout(20*time.Second)))
	frames := value(t, tab, chromedp.Nodes(chromedp.CSS("iframe#view")))
	if len(frames) != 1 {
		t.Fatalf("%d view iframes", len(frames))
	}
	inFrame := chromedp.WithPollingInFrame(frames[0])
	shown := value(t, tab, chromedp.Poll[string](`(function () { var c = document.getElementById("pickup-code");
		var r = document.querySelector('tr.child[data-handle="`+kid.handle+`"]');
		return c && r && r.getAttribute("data-status") === "checked_in" ? c.textContent : null; })()`, inFrame, chromedp.WithPollingTimeout(20*time.Second)))
	if shown != code {
		t.Errorf("the sheet shows the pick-up code %q, the model's check-in issued %q", shown, code)
	}
	body := value(t, tab, chromedp.Poll[string](`document.body.innerText`, inFrame))
	for _, want := range []string{wordsFor("pt-BR").give + kid.name, "Dia " + today + " (hoje)", zoneSentence("pt-BR", "America/Sao_Paulo")} {
		if !strings.Contains(body, want) {
			t.Errorf("the sheet after the model's check-in does not show %q:\n%s", want, body)
		}
	}
	shot := filepath.Join(artifacts, "view-"+c.name+".png")
	screenshot(t, tab, shot)
	checkPNG(t, shot)
	for _, u := range h.outside(requests()) {
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
	var kid *string
	err := a.st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT pickup_code_salt, pickup_code_hash, pickup_key_id FROM checkins WHERE id = $1`, id).Scan(&salt, &hash, &kid)
	})
	if err != nil {
		t.Fatalf("reading the pick-up code of %s: %v", id, err)
	}
	var key *store.PickupKey
	if kid != nil {
		k, err := (&store.PickupKeys{Pool: a.st.Pool()}).Get(ctx, *kid)
		if err != nil {
			t.Fatalf("the pick-up key of %s: %v", id, err)
		}
		key = &k
	}
	return store.CheckPickupCode(key, salt, hash, code)
}

// checkAppOnlyTools: over real go-sdk sessions, the sheet's app-only tools reach the model's
// tool for a client with MCP Apps (a check-out of a check-in that does not exist answers "not
// found" from the handler, as neemias_checkout_register does), while a client without it does
// not list them and has the call refused, naming the model's tool, with the refusal audited.
func checkAppOnlyTools(t *testing.T, ctx context.Context, a *app, u demoUser, ui, plain *sdk.ClientSession) {
	t.Helper()
	args := map[string]any{"checkin_id": uuid.NewString(), "pickup_code": "1234", "picked_up_by": "Maria Souza"}
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
	_, err = plain.CallTool(ctx, &sdk.CallToolParams{Name: sheetCheckout, Arguments: map[string]any{"checkin_id": id, "pickup_code": "1234", "picked_up_by": "Maria Souza"}})
	if err == nil || !strings.Contains(err.Error(), "app-only") || !strings.Contains(err.Error(), "neemias_checkout_register") {
		t.Errorf("%s without MCP Apps: %v, want the app-only refusal naming neemias_checkout_register", sheetCheckout, err)
	}
	if got := a.query(t, `SELECT action || ' ' || outcome FROM audit_log WHERE user_id = $1 AND capability = 'neemias_checkout_register'
		AND $2::uuid = ANY(target_ids) AND at >= $3::timestamptz`, u.id, id, since); !slices.Equal(got, []string{"checkout.forbidden denied"}) {
		t.Errorf("audit of the refused app-only call: %v, want [checkout.forbidden denied]", got)
	}
}

// chartWants is what the attendance chart must show of an attendance summary: the answer's
// figures (different children, check-ins, the range), which classes it covers when the caller
// sees only some, and the per-class table's rows (class, children, check-ins).
func chartWants(t *testing.T, locale string, sc map[string]any) []string {
	t.Helper()
	kids, total := num(sc["children"]), num(sc["total_checkins"])
	if kids == 0 || total < kids {
		t.Errorf("attendance summary %v: %d children, %d check-ins", sc["from"], kids, total)
	}
	lead := map[string]string{"pt-BR": "%d crianças diferentes vieram de %s a %s: %d check-ins em ", "en-US": "%d different children came from %s to %s: %d check-ins over "}[locale]
	want := []string{fmt.Sprintf(lead, kids, sc["from"], sc["to"], total)}
	if covers, _ := sc["covers"].(string); covers != "" {
		want = append(want, map[string]string{"pt-BR": "Só as suas turmas: ", "en-US": "Only your classes: "}[locale]+strings.TrimPrefix(covers, "your classes: "))
	}
	classes, _ := sc["classes"].([]any)
	if len(classes) == 0 {
		t.Errorf("attendance summary %v..%v: no classes", sc["from"], sc["to"])
	}
	for _, k := range classes {
		m := k.(map[string]any)
		want = append(want, fmt.Sprintf("%s\t%d\t%d", m["class_name"], num(m["children"]), num(m["checkins"])))
	}
	return want
}

// checkChart: the chart draws one bar segment per day and class of the summary, then its range
// picker reads the month before through the host (neemias_attendance_summary) and shows that
// answer.
func checkChart(t *testing.T, a *app, tab context.Context, h *viewHarness, c *viewCase, inFrame chromedp.PollOption, in chromedp.QueryOption, from, artifacts string) {
	t.Helper()
	days, _ := c.sc["days"].([]any)
	if n := value(t, tab, chromedp.Poll[string](`String(document.querySelectorAll("#chart rect[data-class]").length)`, inFrame)); n != fmt.Sprint(len(days)) {
		t.Errorf("the chart draws %s bar segments, the summary has %d days × classes", n, len(days))
	}
	prevFrom := a.one(t, `SELECT (date_trunc('month', $1::date) - interval '1 month')::date::text`, from)
	prevTo := a.one(t, `SELECT (date_trunc('month', $1::date) - interval '1 day')::date::text`, from)
	res, sc := callJSON(t, c.cs, chartTool, map[string]any{"from": prevFrom, "to": prevTo})
	if res.IsError || sc == nil {
		t.Fatalf("%s %s..%s: %s", chartTool, prevFrom, prevTo, resultText(res))
	}
	pick := func(what, click string, from, to string, act ...chromedp.Action[chromedp.Void]) string {
		t.Helper()
		run(t, tab, what, append(act, chromedp.Click(click, in))...)
		shown, err := chromedp.Run(tab, chromedp.Poll[string](fmt.Sprintf(`(function () { var s = document.getElementById("status").innerText;
			return s.indexOf(%q) >= 0 && s.indexOf(%q) >= 0 && !document.querySelector("button[disabled]") ? document.body.innerText : null; })()`, from+" ", to),
			inFrame, chromedp.WithPollingTimeout(20*time.Second)))
		if err != nil {
			body := value(t, tab, chromedp.Poll[string](`document.body.innerText`, inFrame))
			t.Fatalf("%s (%s..%s): %v; the chart shows:\n%s", what, from, to, err, body)
		}
		asked := false
		for _, call := range h.viewCalls() {
			asked = asked || strings.Contains(call, `"name":"`+chartTool+`"`) && strings.Contains(call, `"from":"`+from+`"`) && strings.Contains(call, `"to":"`+to+`"`)
		}
		if !asked {
			t.Errorf("%s: the view did not call %s for %s..%s through the host", what, chartTool, from, to)
		}
		return shown
	}
	shown := pick("pick the month before", "#show", prevFrom, prevTo, chromedp.SetValue("#from", prevFrom, in), chromedp.SetValue("#to", prevTo, in))
	if num(sc["total_checkins"]) == 0 {
		// An empty range says so and offers the nearest service day with data, whose month
		// the button shows.
		nearest, _ := sc["nearest_day"].(string)
		none := map[string]string{"pt-BR": "Nenhum check-in de %s a %s.", "en-US": "No check-ins from %s to %s."}[c.locale]
		if !strings.Contains(shown, fmt.Sprintf(none, prevFrom, prevTo)) || nearest == "" || !strings.Contains(shown, nearest) {
			t.Errorf("the empty range %s..%s (nearest day %q) shows:\n%s", prevFrom, prevTo, nearest, shown)
		}
		prevFrom = a.one(t, `SELECT date_trunc('month', $1::date)::date::text`, nearest)
		prevTo = a.one(t, `SELECT (date_trunc('month', $1::date) + interval '1 month - 1 day')::date::text`, nearest)
		if res, sc = callJSON(t, c.cs, chartTool, map[string]any{"from": prevFrom, "to": prevTo}); res.IsError {
			t.Fatalf("%s %s..%s: %s", chartTool, prevFrom, prevTo, resultText(res))
		}
		shown = pick("show the nearest day's month", "#nearest", prevFrom, prevTo)
	}
	for _, want := range chartWants(t, c.locale, sc) {
		if !strings.Contains(shown, want) {
			t.Errorf("after picking %s..%s the chart does not show %q:\n%s", prevFrom, prevTo, want, shown)
		}
	}
	shot := filepath.Join(artifacts, "view-"+c.name+"-range.png")
	screenshot(t, tab, shot)
	checkPNG(t, shot)
}
