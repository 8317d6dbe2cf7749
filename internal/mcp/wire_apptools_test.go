package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/mcp"
)

const (
	sheetURI     = "ui://neemias/checkin-sheet"
	sheetCheckin = "neemias_checkin_sheet_checkin"
)

// refusals records the gate's refusal hook.
type refusals struct {
	mu  sync.Mutex
	got []string // "capability args error-type"
}

func (r *refusals) hook(_ context.Context, id string, args json.RawMessage, err error) {
	var f *errs.Forbidden
	kind := "other"
	if errors.As(err, &f) {
		kind = "forbidden:" + f.Scope
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, id+" "+string(args)+" "+kind)
}

func (r *refusals) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.got
	r.got = nil
	return out
}

// appToolOptions: viewOptions plus a check-in sheet view with one app-only tool that runs
// neemias_checkin_register, like spec/capabilities.yaml's checkin_sheet; refusals are recorded.
func appToolOptions(rec *refusals) mcp.Options {
	opts := viewOptions()
	opts.Views = append(opts.Views, capability.View{
		ID: "checkin_sheet", URI: sheetURI, Title: "Check-in sheet", Description: "The day's check-ins.",
		HTML: "<!doctype html><html lang=\"pt-BR\"><title>y</title></html>", Capabilities: []string{"neemias_child_enroll"},
		AppTools: []capability.AppTool{{Name: sheetCheckin, Tool: "neemias_checkin_register", Title: "Check in from the sheet", Description: "The sheet's check-in button."}},
	})
	spec := viewSpec()
	spec.onRefused = rec.hook
	spec.views = opts.Views
	opts.Gate = spec.gate()
	return opts
}

// TestAppOnlyTools: an app-only tool is listed, with _meta.ui {resourceUri, visibility [app]}
// and the input schema of the tool it runs, only to a client that declared MCP Apps (per
// request in 2026-07-28; by _meta or the UI session id in the 2025 era), and called it answers
// as that tool does, summary included. Any other client does not see it, and its tools/call is
// refused as -32602 naming the reason and the model's tool, audited as a refused call of the
// capability it runs (with its record ids), before anything runs. The scope check is the
// tool's: a caller without checkins:write gets the step-up 403.
func TestAppOnlyTools(t *testing.T) {
	rec := &refusals{}
	srv := newServer(t, appToolOptions(rec))
	init := do(t, srv, http.MethodPost, nil, rpc(1, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": uiCaps(), "clientInfo": map[string]any{"name": "host", "version": "1"},
	}))
	sid := init.header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("no UI session id from initialize: %s", init.body)
	}

	type tool struct {
		Name        string          `json:"name"`
		Meta        map[string]any  `json:"_meta"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	// send sends method in one variant: modern or legacy, declaring MCP Apps (per-request
	// _meta, or in legacy also by the UI session id) or not.
	type variant struct {
		name     string
		era      string
		ui       bool
		session  bool // legacy: the UI session id instead of _meta
		wantCode int  // HTTP status of a refusal
	}
	variants := []variant{
		{"modern/ui", "modern", true, false, 0},
		{"modern/no-ui", "modern", false, false, http.StatusBadRequest},
		{"legacy/ui-meta", "legacy", true, false, 0},
		{"legacy/ui-session", "legacy", false, true, 0},
		{"legacy/no-ui", "legacy", false, false, http.StatusOK},
	}
	send := func(t *testing.T, v variant, token, method string, params map[string]any) exchange {
		t.Helper()
		if v.session {
			return post(t, srv, map[string]string{"Authorization": "Bearer " + token, "Mcp-Session-Id": sid}, rpc(5, method, params))
		}
		return listVariant(t, srv, v.era, method, v.ui, token, params)
	}
	for _, v := range variants {
		declared := v.ui || v.session
		t.Run(v.name, func(t *testing.T) {
			tl := send(t, v, tokAdmin, "tools/list", nil)
			tools := decode[struct{ Tools []tool }](t, tl.result()).Tools
			i := slices.IndexFunc(tools, func(x tool) bool { return x.Name == sheetCheckin })
			j := slices.IndexFunc(tools, func(x tool) bool { return x.Name == "neemias_checkin_register" })
			if j < 0 {
				t.Fatalf("the model's tool is not listed: %s", tl.body)
			}
			if (i >= 0) != declared {
				t.Fatalf("tools/list lists the app-only tool = %v, want %v: %s", i >= 0, declared, tl.body)
			}
			if declared {
				ui, _ := tools[i].Meta["ui"].(map[string]any)
				if ui["resourceUri"] != sheetURI || !slices.Equal(decode[[]string](t, ui["visibility"]), []string{"app"}) {
					t.Errorf("app-only tool _meta = %v, want ui {resourceUri %s, visibility [app]}", tools[i].Meta, sheetURI)
				}
				if string(tools[i].InputSchema) != string(tools[j].InputSchema) {
					t.Errorf("app-only tool input schema %s, want the model tool's %s", tools[i].InputSchema, tools[j].InputSchema)
				}
				if _, has := tools[j].Meta["ui"]; has {
					t.Errorf("the model's tool carries _meta.ui: %v", tools[j].Meta)
				}
			}

			args := map[string]any{"child_id": childA}
			call := send(t, v, tokAdmin, "tools/call", map[string]any{"name": sheetCheckin, "arguments": args})
			if !declared {
				if call.status != v.wantCode || call.errorCode() != -32602 ||
					!strings.Contains(call.errorMessage(), "app-only") || !strings.Contains(call.errorMessage(), "neemias_checkin_register") {
					t.Errorf("tools/call of the app-only tool without MCP Apps: status %d: %s; want %d, -32602 naming the model's tool", call.status, call.body, v.wantCode)
				}
				if got, want := rec.take(), []string{`neemias_checkin_register {"child_id":"` + childA + `"} forbidden:checkins:write`}; !slices.Equal(got, want) {
					t.Errorf("refusals audited %v, want %v", got, want)
				}
				// A caller who could never list the tool learns nothing of it.
				none := send(t, v, tokNone, "tools/call", map[string]any{"name": sheetCheckin, "arguments": args})
				if none.errorCode() != -32602 || strings.Contains(none.body, "app-only") || !strings.Contains(none.errorMessage(), "unknown tool") {
					t.Errorf("app-only tool for a caller without its scope, without MCP Apps: %s", none.body)
				}
				if got := rec.take(); len(got) != 0 {
					t.Errorf("refusals audited %v, want none", got)
				}
				return
			}
			model := send(t, v, tokAdmin, "tools/call", map[string]any{"name": "neemias_checkin_register", "arguments": args})
			if call.errorCode() != 0 || call.result()["isError"] == true {
				t.Fatalf("tools/call of the app-only tool with MCP Apps: %s", call.body)
			}
			a, _ := json.Marshal(call.result())
			b, _ := json.Marshal(model.result())
			if string(a) != string(b) {
				t.Errorf("the app-only tool answers %s, the model's tool %s", a, b)
			}
			// Validation is the tool's.
			bad := send(t, v, tokAdmin, "tools/call", map[string]any{"name": sheetCheckin, "arguments": map[string]any{}})
			if bad.result()["isError"] != true || !strings.Contains(bad.body, "child_id") {
				t.Errorf("app-only tool without child_id: %s", bad.body)
			}
			// The scope check is the tool's: step-up for a caller without checkins:write.
			none := send(t, v, tokNone, "tools/call", map[string]any{"name": sheetCheckin, "arguments": args})
			if none.status != http.StatusForbidden || !strings.Contains(none.header.Get("WWW-Authenticate"), "checkins:write") {
				t.Errorf("app-only tool for a caller without checkins:write: %d %q %s", none.status, none.header.Get("WWW-Authenticate"), none.body)
			}
			if got, want := rec.take(), []string{`neemias_checkin_register  forbidden:checkins:write`}; !slices.Equal(got, want) {
				t.Errorf("refusals audited %v, want %v", got, want)
			}
		})
	}
}
