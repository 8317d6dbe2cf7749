package mcp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/mcp"
)

const (
	chartURI = "ui://neemias/attendance-chart"
	viewMIME = "text/html;profile=mcp-app"
	uiExt    = "io.modelcontextprotocol/ui"
)

// viewSpec is the fake registry with summaries.
func viewSpec() fakeSpec {
	caps := make([]capability.Capability, len(fakeCaps))
	for i, c := range fakeCaps {
		c = capability.Clone(c)
		switch c.ID {
		case "attendance_summary":
			c.Summary = "{{.total_checkins}} check-ins from {{.from}} to {{.to}}."
		case "neemias_checkin_register":
			c.Summary = "Child {{.child_id}} is checked in (check-in {{.checkin_id}})."
		}
		caps[i] = c
	}
	return fakeSpec{caps: caps}
}

// viewOptions: the fake registry with summaries, read tools and one view linked to
// attendance_summary (its read tool), like spec/capabilities.yaml's attendance_chart.
func viewOptions() mcp.Options {
	opts := testOptions(nil)
	opts.ReadToolPrefix = "neemias_"
	opts.Gate = viewSpec().gate()
	opts.Views = []capability.View{{
		ID: "attendance_chart", URI: chartURI, Title: "Attendance chart", Description: "Check-ins per day.",
		HTML: "<!doctype html><html lang=\"pt-BR\"><title>x</title></html>", Capabilities: []string{"attendance_summary"},
		Visibility: []string{"model", "app"},
	}}
	return opts
}

// uiCaps are client capabilities declaring MCP Apps.
func uiCaps() map[string]any {
	return map[string]any{"extensions": map[string]any{uiExt: map[string]any{"mimeTypes": []string{viewMIME}}}}
}

// listVariant sends method in era ("modern" or "legacy") with or without the UI capability in
// the request's client capabilities.
func listVariant(t *testing.T, srv *httptest.Server, era, method string, ui bool, token string, params map[string]any) exchange {
	t.Helper()
	auth := map[string]string{"Authorization": "Bearer " + token}
	if params == nil {
		params = map[string]any{}
	}
	cc := map[string]any{}
	if ui {
		cc = uiCaps()
	}
	if era == "modern" {
		params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": cc}
		return modern(t, srv, auth, method, params)
	}
	if ui {
		params["_meta"] = map[string]any{"io.modelcontextprotocol/clientCapabilities": cc}
	}
	return post(t, srv, auth, rpc(3, method, params))
}

func decode[T any](t *testing.T, v any) T {
	t.Helper()
	var out T
	b, _ := json.Marshal(v)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return out
}

// TestViewsNegotiation: the extension is advertised in initialize and server/discover; a
// client declaring it (per request) sees the linked tool's _meta.ui and the ui:// resource,
// readable as text/html;profile=mcp-app; one that does not sees nothing about views, in both
// eras: no _meta.ui, no listed view, and a read of the view's URI answers as for an unknown
// resource with the era's code; a caller who reaches no linked capability never sees the view.
func TestViewsNegotiation(t *testing.T) {
	srv := newServer(t, viewOptions())

	init := do(t, srv, http.MethodPost, nil, rpc(1, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": uiCaps(), "clientInfo": map[string]any{"name": "host", "version": "1"},
	}))
	disc := modern(t, srv, nil, "server/discover", nil)
	for name, ex := range map[string]exchange{"initialize": init, "server/discover": disc} {
		caps, _ := ex.result()["capabilities"].(map[string]any)
		ext, _ := caps["extensions"].(map[string]any)
		ui, _ := ext[uiExt].(map[string]any)
		if mt, _ := ui["mimeTypes"].([]any); !slices.Contains(mt, any(viewMIME)) {
			t.Errorf("%s: capabilities.extensions lacks %s with %s: %s", name, uiExt, viewMIME, ex.body)
		}
	}

	type tool struct {
		Name string         `json:"name"`
		Meta map[string]any `json:"_meta"`
	}
	type resource struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType"`
	}
	for _, era := range []string{"modern", "legacy"} {
		for _, ui := range []bool{true, false} {
			name := era + map[bool]string{true: "/ui", false: "/no-ui"}[ui]
			t.Run(name, func(t *testing.T) {
				tl := listVariant(t, srv, era, "tools/list", ui, tokAdmin, nil)
				tools := decode[struct{ Tools []tool }](t, tl.result()).Tools
				var seen bool
				for _, x := range tools {
					uiMeta, has := x.Meta["ui"].(map[string]any)
					if x.Name == "neemias_attendance_summary" {
						seen = true
						if ui && (!has || uiMeta["resourceUri"] != chartURI || !slices.Equal(decode[[]string](t, uiMeta["visibility"]), []string{"model", "app"})) {
							t.Errorf("attendance read tool _meta = %v, want ui.resourceUri %s, visibility [model app]", x.Meta, chartURI)
						}
					}
					if has && (!ui || x.Name != "neemias_attendance_summary") {
						t.Errorf("tool %s has _meta.ui %v (ui=%v)", x.Name, uiMeta, ui)
					}
				}
				if !seen {
					t.Fatalf("no neemias_attendance_summary in %s", tl.body)
				}
				if strings.Contains(tl.body, "ui://") != ui {
					t.Errorf("tools/list mentions ui:// = %v, want %v: %s", !ui, ui, tl.body)
				}

				rl := listVariant(t, srv, era, "resources/list", ui, tokAdmin, nil)
				res := decode[struct{ Resources []resource }](t, rl.result()).Resources
				idx := slices.IndexFunc(res, func(r resource) bool { return r.URI == chartURI })
				if (idx >= 0) != ui {
					t.Fatalf("resources/list lists %s = %v, want %v: %s", chartURI, idx >= 0, ui, rl.body)
				}
				if ui && res[idx].MIMEType != viewMIME {
					t.Errorf("view resource mimeType %q, want %q", res[idx].MIMEType, viewMIME)
				}

				rd := listVariant(t, srv, era, "resources/read", ui, tokAdmin, map[string]any{"uri": chartURI})
				if !ui {
					// Unknown, with the era's code, exactly like a ui:// URI that names no view.
					wantStatus, wantCode := map[string]int{"modern": 400, "legacy": 200}[era], map[string]float64{"modern": -32602, "legacy": -32002}[era]
					none := listVariant(t, srv, era, "resources/read", ui, tokAdmin, map[string]any{"uri": "ui://neemias/no-such-view"})
					for _, ex := range []exchange{rd, none} {
						if ex.status != wantStatus || ex.errorCode() != wantCode || ex.errorMessage() != "Resource not found" || strings.Contains(ex.body, "doctype") {
							t.Errorf("resources/read without the extension: %d %s, want %d/%v Resource not found", ex.status, ex.body, wantStatus, wantCode)
						}
					}
					if a, b := rd.body, strings.ReplaceAll(none.body, "no-such-view", "attendance-chart"); a != b {
						t.Errorf("a hidden view and no view answer differently:\n%s\n%s", a, b)
					}
					return
				}
				contents := decode[struct {
					Contents []struct{ URI, MIMEType, Text string }
				}](t, rd.result()).Contents
				if len(contents) != 1 || contents[0].MIMEType != viewMIME || !strings.HasPrefix(contents[0].Text, "<!doctype html>") {
					t.Errorf("resources/read %s: %s", chartURI, rd.body)
				}
			})
		}
	}

	// 2025 era: the UI session id counts as the declaration for reads too.
	sid := uiSession(t, srv)
	for _, withID := range []bool{true, false} {
		hdr := map[string]string{"Authorization": "Bearer " + tokAdmin, "MCP-Protocol-Version": "2025-11-25"}
		if withID {
			hdr["Mcp-Session-Id"] = sid
		}
		rd := post(t, srv, hdr, rpc(5, "resources/read", map[string]any{"uri": chartURI}))
		if got := strings.Contains(rd.body, "doctype html"); got != withID || !withID && rd.errorCode() != -32002 {
			t.Errorf("legacy resources/read with UI session id = %v: %s", withID, rd.body)
		}
	}

	// tokNone reaches no capability the view is linked to: no view, even with the extension.
	rl := listVariant(t, srv, "modern", "resources/list", true, tokNone, nil)
	if strings.Contains(rl.body, "ui://") {
		t.Errorf("a caller without attendance:read is shown the view: %s", rl.body)
	}
}

// TestSummaryText: a tool result's text is the summary sentence, a blank line, then
// structuredContent rendered for the model (capability.RenderText); resources/read stays JSON
// alone; a capability without a summary has the rendering alone.
func TestSummaryText(t *testing.T) {
	srv := newServer(t, viewOptions())
	admin := map[string]string{"Authorization": "Bearer " + tokAdmin}
	for _, era := range []string{"modern", "legacy"} {
		for _, tc := range []struct {
			tool     string
			args     map[string]any
			sentence string
		}{
			{"neemias_attendance_summary", map[string]any{}, "42 check-ins from 2026-06-01 to 2026-06-30."},
			{"neemias_checkin_register", map[string]any{"child_id": childA}, "Child " + childA + " is checked in (check-in 0b9f3e1a-6c2d-4e8f-a1b2-c3d4e5f6a7b8)."},
			{"neemias_roster_children", map[string]any{}, ""},
		} {
			params := map[string]any{"name": tc.tool, "arguments": tc.args}
			var ex exchange
			if era == "modern" {
				ex = modern(t, srv, admin, "tools/call", params)
			} else {
				ex = post(t, srv, admin, rpc(4, "tools/call", params))
			}
			r := decode[struct {
				Content []struct {
					Type, Text string
				}
				StructuredContent json.RawMessage
				IsError           bool
			}](t, ex.result())
			if r.IsError || len(r.Content) != 1 {
				t.Fatalf("%s %s: %s", era, tc.tool, ex.body)
			}
			want, err := capability.RenderText(r.StructuredContent, nil)
			if err != nil || strings.HasPrefix(want, "{") {
				t.Fatalf("%s %s: structuredContent %s rendered %q, %v", era, tc.tool, r.StructuredContent, want, err)
			}
			if tc.sentence != "" {
				want = tc.sentence + "\n\n" + want
			}
			if r.Content[0].Text != want {
				t.Errorf("%s %s text:\n%q\nwant\n%q", era, tc.tool, r.Content[0].Text, want)
			}
		}
	}
	read := modern(t, srv, admin, "resources/read", map[string]any{"uri": "neemias://attendance/summary"})
	if strings.Contains(read.body, "check-ins from") || !strings.Contains(read.body, `total_checkins`) {
		t.Errorf("resources/read must stay JSON: %s", read.body)
	}
}

// TestViewsCacheVariant: the UI and non-UI variants of tools/list and resources/list differ in
// what their cache hints say: both are cacheScope "private" (the spec's only scopes are public
// and private, and the lists follow the token's scopes), and _meta["neemias/cacheVariant"]
// names the variant ("mcp-apps" or "core"), in both eras, whether the legacy declaration came
// in the request's _meta or through the UI session id.
func TestViewsCacheVariant(t *testing.T) {
	srv := newServer(t, viewOptions())
	type hints struct {
		TTLMs      *int           `json:"ttlMs"`
		CacheScope string         `json:"cacheScope"`
		Meta       map[string]any `json:"_meta"`
	}
	sid := uiSession(t, srv)
	for _, era := range []string{"modern", "legacy", "legacy-session"} {
		for _, method := range []string{"tools/list", "resources/list"} {
			got := map[bool]hints{}
			for _, ui := range []bool{true, false} {
				var ex exchange
				if era == "legacy-session" {
					hdr := map[string]string{"Authorization": "Bearer " + tokAdmin, "MCP-Protocol-Version": "2025-11-25"}
					if ui {
						hdr["Mcp-Session-Id"] = sid
					}
					ex = post(t, srv, hdr, rpc(3, method, map[string]any{}))
				} else {
					ex = listVariant(t, srv, era, method, ui, tokAdmin, nil)
				}
				h := decode[hints](t, ex.result())
				if h.TTLMs == nil || h.CacheScope != "private" {
					t.Errorf("%s %s ui=%v: ttlMs %v cacheScope %q, want a ttlMs and private: %s", era, method, ui, h.TTLMs, h.CacheScope, ex.body)
				}
				want := map[bool]string{true: "mcp-apps", false: "core"}[ui]
				if h.Meta["neemias/cacheVariant"] != want {
					t.Errorf("%s %s ui=%v: _meta[neemias/cacheVariant] = %v, want %q: %s", era, method, ui, h.Meta["neemias/cacheVariant"], want, ex.body)
				}
				got[ui] = h
			}
			if got[true].Meta["neemias/cacheVariant"] == got[false].Meta["neemias/cacheVariant"] {
				t.Errorf("%s %s: both variants' cache hints say the same: %v", era, method, got)
			}
		}
	}
	// A list that does not vary with the declaration names no variant.
	ex := listVariant(t, srv, "modern", "resources/templates/list", true, tokAdmin, nil)
	if strings.Contains(ex.body, "cacheVariant") {
		t.Errorf("resources/templates/list names a variant: %s", ex.body)
	}
}

// uiSession returns the UI session id a legacy initialize declaring MCP Apps is issued.
func uiSession(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	init := do(t, srv, http.MethodPost, nil, rpc(1, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": uiCaps(), "clientInfo": map[string]any{"name": "host", "version": "1"},
	}))
	sid := init.header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize declaring MCP Apps got no Mcp-Session-Id: %s", init.body)
	}
	return sid
}

// TestViewCSP: a view declaring CSP domains carries _meta.ui.csp with exactly the declared
// kinds (connectDomains, resourceDomains; no empty lists) on its resources/list entry and on
// its resources/read content; a view declaring none carries no _meta at all (the host's
// deny-all default applies).
func TestViewCSP(t *testing.T) {
	opts := viewOptions()
	opts.Views = append(opts.Views, capability.View{
		ID: "roster_view", URI: "ui://neemias/roster", Title: "Roster", Description: "Counts per class.",
		HTML: "<!doctype html><html><title>r</title></html>", Capabilities: []string{"roster_children"},
		CSP: capability.ViewCSP{ConnectDomains: []string{"https://api.example.com"}, ResourceDomains: []string{"https://cdn.example.com", "https://*.img.example.com"}},
	})
	srv := newServer(t, opts)
	want := map[string]any{
		"connectDomains":  []any{"https://api.example.com"},
		"resourceDomains": []any{"https://cdn.example.com", "https://*.img.example.com"},
	}
	type item struct {
		URI  string         `json:"uri"`
		Meta map[string]any `json:"_meta"`
	}
	check := func(where string, it item) {
		t.Helper()
		if it.URI == chartURI {
			if it.Meta != nil {
				t.Errorf("%s: %s declares no CSP but carries _meta %v", where, it.URI, it.Meta)
			}
			return
		}
		ui, _ := it.Meta["ui"].(map[string]any)
		if got, _ := ui["csp"].(map[string]any); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %s _meta.ui.csp = %v, want %v", where, it.URI, ui["csp"], want)
		}
	}
	for _, era := range []string{"modern", "legacy"} {
		rl := listVariant(t, srv, era, "resources/list", true, tokAdmin, nil)
		var n int
		for _, r := range decode[struct{ Resources []item }](t, rl.result()).Resources {
			if strings.HasPrefix(r.URI, "ui://") {
				n++
				check(era+" resources/list", r)
			}
		}
		if n != 2 {
			t.Fatalf("%s resources/list: %d views, want 2: %s", era, n, rl.body)
		}
		for _, uri := range []string{chartURI, "ui://neemias/roster"} {
			rd := listVariant(t, srv, era, "resources/read", true, tokAdmin, map[string]any{"uri": uri})
			c := decode[struct{ Contents []item }](t, rd.result()).Contents
			if len(c) != 1 {
				t.Fatalf("%s resources/read %s: %s", era, uri, rd.body)
			}
			check(era+" resources/read", c[0])
		}
	}
}
