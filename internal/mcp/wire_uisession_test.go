package mcp_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const uiSessionPrefix = "neemias-ui1-"

// hasUIMeta reports whether the attendance read tool carries _meta.ui in a tools/list body.
func hasUIMeta(t *testing.T, ex exchange) bool {
	t.Helper()
	tools := decode[struct {
		Tools []struct {
			Name string         `json:"name"`
			Meta map[string]any `json:"_meta"`
		}
	}](t, ex.result()).Tools
	for _, x := range tools {
		if x.Name == "neemias_attendance_summary" {
			_, has := x.Meta["ui"]
			return has
		}
	}
	t.Fatalf("no neemias_attendance_summary in %s", ex.body)
	return false
}

// TestLegacyUISession: a legacy initialize declaring MCP Apps gets a UI session id; legacy
// tools/list and resources/list echoing it are shown views, without it (or with a foreign id)
// they are not; initialize without the extension gets no id; modern requests ignore the id.
func TestLegacyUISession(t *testing.T) {
	srv := newServer(t, viewOptions())
	initWith := func(caps map[string]any) exchange {
		return do(t, srv, http.MethodPost, nil, rpc(1, "initialize", map[string]any{
			"protocolVersion": "2025-11-25", "capabilities": caps, "clientInfo": map[string]any{"name": "host", "version": "1"},
		}))
	}
	init := initWith(uiCaps())
	sid := init.header.Get("Mcp-Session-Id")
	if init.status != http.StatusOK || !strings.HasPrefix(sid, uiSessionPrefix) || len(sid) != len(uiSessionPrefix)+32 {
		t.Fatalf("initialize with the UI extension: status %d, Mcp-Session-Id %q", init.status, sid)
	}
	if again := initWith(uiCaps()).header.Get("Mcp-Session-Id"); again == sid {
		t.Errorf("two initializes got the same session id %q", sid)
	}
	for name, caps := range map[string]map[string]any{
		"no capabilities": {},
		"other MIME type": {"extensions": map[string]any{uiExt: map[string]any{"mimeTypes": []string{"text/html"}}}},
	} {
		if got := initWith(caps).header.Get("Mcp-Session-Id"); got != "" {
			t.Errorf("initialize with %s: Mcp-Session-Id %q", name, got)
		}
	}

	admin := func(extra map[string]string) map[string]string {
		h := map[string]string{"Authorization": "Bearer " + tokAdmin}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	for _, tc := range []struct {
		name string
		sid  string
		want bool
	}{
		{"with the UI session id", sid, true},
		{"without a session id", "", false},
		{"with a foreign session id", "abc", false},
		{"with a malformed UI session id", uiSessionPrefix + "XYZ", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			extra := map[string]string{}
			if tc.sid != "" {
				extra["Mcp-Session-Id"] = tc.sid
			}
			tl := post(t, srv, admin(extra), rpc(2, "tools/list", map[string]any{}))
			if got := hasUIMeta(t, tl); got != tc.want {
				t.Errorf("legacy tools/list: _meta.ui present = %v, want %v: %s", got, tc.want, tl.body)
			}
			rl := post(t, srv, admin(extra), rpc(3, "resources/list", map[string]any{}))
			if got := strings.Contains(rl.body, chartURI); got != tc.want {
				t.Errorf("legacy resources/list lists %s = %v, want %v: %s", chartURI, got, tc.want, rl.body)
			}
			if got := tl.header.Get("Mcp-Session-Id") + rl.header.Get("Mcp-Session-Id"); got != "" {
				t.Errorf("a non-initialize response carries Mcp-Session-Id %q", got)
			}
			// 2026-07-28: per-request capabilities only; the session id changes nothing.
			for _, ui := range []bool{false, true} {
				cc := map[string]any{}
				if ui {
					cc = uiCaps()
				}
				m := modern(t, srv, admin(extra), "tools/list", map[string]any{"_meta": map[string]any{
					"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": cc,
				}})
				if got := hasUIMeta(t, m); got != ui {
					t.Errorf("modern tools/list (ui=%v): _meta.ui present = %v: %s", ui, got, m.body)
				}
				if s := m.header.Get("Mcp-Session-Id"); s != "" {
					t.Errorf("modern response carries Mcp-Session-Id %q", s)
				}
			}
		})
	}

	// DELETE of the "session" is refused the way the 2025-11-25 transport allows (405: the
	// server does not let clients terminate sessions), as JSON-RPC, never a 5xx.
	del := do(t, srv, http.MethodDelete, admin(map[string]string{"Mcp-Session-Id": sid}), "")
	if del.status != http.StatusMethodNotAllowed {
		t.Errorf("DELETE with the UI session id: status %d, want 405: %s", del.status, del.body)
	}
}

// uiSessionTransport adds the token and records every Mcp-Session-Id the server issues and
// the client sends.
type uiSessionTransport struct {
	token        string
	mu           sync.Mutex
	issued, sent []string
}

func (b *uiSessionTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	resp, err := http.DefaultTransport.RoundTrip(r)
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := r.Header.Get("Mcp-Session-Id"); s != "" {
		b.sent = append(b.sent, r.Method+" "+r.Header.Get("Mcp-Method")+" "+s)
	}
	if err == nil {
		if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
			b.issued = append(b.issued, s)
		}
	}
	return resp, err
}

// The real go-sdk client declaring MCP Apps: in 2025-11-25 it keeps the UI session id from
// initialize and is shown _meta.ui on tools/list; in 2026-07-28 it declares the extension per
// request and gets no session id; without the extension, neither era is shown views. Closing
// the 2025 session (DELETE, answered 405) is no error.
func TestGoSDKClientLegacyUISession(t *testing.T) {
	srv := newServer(t, viewOptions())
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		for _, ui := range []bool{true, false} {
			t.Run(version+map[bool]string{true: "/ui", false: "/no-ui"}[ui], func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				var opts *sdk.ClientOptions
				if ui {
					caps := &sdk.ClientCapabilities{}
					caps.AddExtension(uiExt, map[string]any{"mimeTypes": []string{viewMIME}})
					opts = &sdk.ClientOptions{Capabilities: caps}
				}
				rt := &uiSessionTransport{token: tokAdmin}
				client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-ui", Version: "1"}, opts)
				cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: rt}},
					&sdk.ClientSessionOptions{ProtocolVersion: version})
				if err != nil {
					t.Fatalf("connect: %v", err)
				}
				tl, err := cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatalf("tools/list: %v", err)
				}
				var got string
				for _, x := range tl.Tools {
					if m, ok := x.Meta["ui"].(map[string]any); ok && x.Name == "neemias_attendance_summary" {
						got, _ = m["resourceUri"].(string)
					}
				}
				if want := map[bool]string{true: chartURI, false: ""}[ui]; got != want {
					t.Errorf("_meta.ui.resourceUri = %q, want %q", got, want)
				}
				if err := cs.Close(); err != nil {
					t.Errorf("close: %v", err)
				}
				rt.mu.Lock()
				defer rt.mu.Unlock()
				legacyUI := ui && version == "2025-11-25"
				if legacyUI != (len(rt.issued) == 1) || len(rt.issued) > 1 {
					t.Errorf("session ids issued: %v", rt.issued)
				}
				if legacyUI && (len(rt.sent) == 0 || !strings.HasSuffix(rt.sent[0], rt.issued[0])) {
					t.Errorf("the client did not echo the session id: %v", rt.sent)
				}
				if !legacyUI && len(rt.sent) > 0 {
					t.Errorf("session ids sent: %v", rt.sent)
				}
			})
		}
	}
}
