package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/mcp"
)

const (
	handoffCode  = "483921"
	handoffNote  = "Give this pick-up code to the guardian now; it is shown only this once, and whoever picks the child up must present it."
	handoffAgain = "5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a" // a child already checked in: no new code
	handoffCkin  = "0b9f3e1a-6c2d-4e8f-a1b2-c3d4e5f6a7b8"
)

// handoffCheckin is the check-in output with its pick-up code between the other fields, so the
// tests see that removing it keeps the rest of the JSON as encoded.
type handoffCheckin struct {
	CheckinID  string  `json:"checkin_id"`
	PickupCode *string `json:"pickup_code,omitempty"`
	ChildID    string  `json:"child_id"`
}

// handoffOptions: appToolOptions (the check-in sheet's app-only tool runs
// neemias_checkin_register) with the spec's handoff rule on the check-in's pickup_code, and a
// check-in that issues a code for childA and none for handoffAgain. linked links the check-in
// to the sheet, as the spec does, so an MCP Apps host shows the sheet with its results.
func handoffOptions(linked bool) mcp.Options { return handoffOptionsRule(linked, true) }

// handoffOptionsRule is handoffOptions, with the handoff rule only when rule is set.
func handoffOptionsRule(linked, rule bool) mcp.Options {
	opts := appToolOptions(&refusals{})
	if linked {
		for i, v := range opts.Views {
			if v.URI == sheetURI {
				opts.Views[i].Capabilities = append(slices.Clone(v.Capabilities), "neemias_checkin_register")
			}
		}
	}
	spec := viewSpec()
	for i, c := range spec.caps {
		if c.ID == "neemias_checkin_register" && rule {
			c.OutputPII = append(c.OutputPII, capability.FieldRule{Path: "pickup_code", Category: capability.PIISecret, Handoff: handoffNote})
			spec.caps[i] = c
		}
	}
	spec.output = func(id string) json.RawMessage {
		if id == "neemias_checkin_register" {
			return json.RawMessage(`{"type":"object","additionalProperties":false,"required":["checkin_id","child_id"],"properties":{
				"checkin_id":{"type":"string","format":"uuid"},"pickup_code":{"type":"string"},"child_id":{"type":"string","format":"uuid"}}}`)
		}
		return json.RawMessage(fakeOutput[id])
	}
	spec.call = func(ctx context.Context, id string, args json.RawMessage) (any, error) {
		if id != "neemias_checkin_register" {
			return fakeInvoke(ctx, id, args)
		}
		var in struct {
			ChildID string `json:"child_id"`
		}
		_ = json.Unmarshal(args, &in)
		out := &handoffCheckin{CheckinID: handoffCkin, ChildID: in.ChildID}
		if in.ChildID == childA {
			out.PickupCode = ptr(handoffCode)
		}
		return out, nil
	}
	spec.views = opts.Views
	opts.Gate = spec.gate()
	return opts
}

// TestHandoffField: a handoff field (the pick-up code) never reaches structuredContent or the
// JSON of the text over MCP. A client that declared MCP Apps (2026-07-28 per-request _meta;
// 2025 era by _meta or by the UI session id of initialize) gets it only in
// _meta["neemias/handoff"], the text saying after the summary that a pickup_code was issued
// and shown in the app view; the check-in sheet's app-only tool answers the same way. Any
// other client gets it exactly once, in the text between the summary and the JSON, with the
// spec's note, and so does an Apps client calling a tool no view shows (the host would render
// nothing of _meta). A result without a code (the child was already checked in) is the plain
// one.
func TestHandoffField(t *testing.T) {
	servers := map[bool]*httptest.Server{true: newServer(t, handoffOptions(true)), false: newServer(t, handoffOptions(false))}
	sids := map[bool]string{true: uiSession(t, servers[true]), false: uiSession(t, servers[false])}
	summary := func(child string) string {
		return "Child " + child + " is checked in (check-in " + handoffCkin + ")."
	}
	jsonOf := func(child string) string { return `{"checkin_id":"` + handoffCkin + `","child_id":"` + child + `"}` }
	// textOf is the result's text rendered for the model (capability.RenderText).
	textOf := func(child string) string {
		s, err := capability.RenderText([]byte(jsonOf(child)), nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	issued := "A pickup_code was issued: it is shown to the person in the app view, not in this conversation."
	inText := "pickup_code: " + handoffCode + ". " + handoffNote

	tests := []struct {
		name     string
		tool     string
		era      string // "modern", "legacy" (UI in the request's _meta) or "legacy-session"
		ui       bool
		unlinked bool // the check-in is linked to no view
		child    string
		wantText string
		wantMeta bool
	}{
		{"modern/apps", "neemias_checkin_register", "modern", true, false, childA, summary(childA) + "\n\n" + issued + "\n\n" + textOf(childA), true},
		{"modern/plain", "neemias_checkin_register", "modern", false, false, childA, summary(childA) + "\n\n" + inText + "\n\n" + textOf(childA), false},
		{"legacy/apps-meta", "neemias_checkin_register", "legacy", true, false, childA, summary(childA) + "\n\n" + issued + "\n\n" + textOf(childA), true},
		{"legacy/apps-session", "neemias_checkin_register", "legacy-session", true, false, childA, summary(childA) + "\n\n" + issued + "\n\n" + textOf(childA), true},
		{"legacy/plain", "neemias_checkin_register", "legacy", false, false, childA, summary(childA) + "\n\n" + inText + "\n\n" + textOf(childA), false},
		{"app-only/modern", sheetCheckin, "modern", true, false, childA, summary(childA) + "\n\n" + issued + "\n\n" + textOf(childA), true},
		{"app-only/legacy-session", sheetCheckin, "legacy-session", true, false, childA, summary(childA) + "\n\n" + issued + "\n\n" + textOf(childA), true},
		{"no view/apps", "neemias_checkin_register", "modern", true, true, childA, summary(childA) + "\n\n" + inText + "\n\n" + textOf(childA), false},
		{"no view/app-only", sheetCheckin, "legacy-session", true, true, childA, summary(childA) + "\n\n" + issued + "\n\n" + textOf(childA), true},
		{"no code/apps", "neemias_checkin_register", "modern", true, false, handoffAgain, summary(handoffAgain) + "\n\n" + textOf(handoffAgain), false},
		{"no code/plain", "neemias_checkin_register", "legacy", false, false, handoffAgain, summary(handoffAgain) + "\n\n" + textOf(handoffAgain), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := callHandoff(t, servers[!tt.unlinked], sids[!tt.unlinked], tt.era, tt.ui, tt.tool, tt.child)
			r := decode[struct {
				Meta    map[string]json.RawMessage `json:"_meta"`
				Content []struct {
					Type, Text string
				}
				StructuredContent json.RawMessage
				IsError           bool
			}](t, ex.result())
			if r.IsError || len(r.Content) != 1 || r.Content[0].Type != "text" {
				t.Fatalf("tools/call %s: %s", tt.tool, ex.body)
			}
			if got := string(r.StructuredContent); got != jsonOf(tt.child) {
				t.Errorf("structuredContent %s, want %s (no pickup_code, the rest as encoded)", got, jsonOf(tt.child))
			}
			if r.Content[0].Text != tt.wantText {
				t.Errorf("text:\n%q\nwant\n%q", r.Content[0].Text, tt.wantText)
			}
			raw, has := r.Meta["neemias/handoff"]
			if has != tt.wantMeta {
				t.Fatalf("_meta[neemias/handoff] present = %v, want %v: %s", has, tt.wantMeta, ex.body)
			}
			if tt.wantMeta {
				var meta map[string]string
				if err := json.Unmarshal(raw, &meta); err != nil || len(meta) != 1 || meta["pickup_code"] != handoffCode {
					t.Errorf(`_meta["neemias/handoff"] = %s, want {"pickup_code":%q}`, raw, handoffCode)
				}
			}
			// The code is in the answer exactly once when one was issued: in _meta for an Apps
			// client, in the text for any other; never twice, never in structuredContent.
			want := 0
			if tt.child == childA {
				want = 1
			}
			if n := strings.Count(ex.body, handoffCode); n != want {
				t.Errorf("the code appears %d times in the answer, want %d: %s", n, want, ex.body)
			}
		})
	}
}

// callHandoff calls tool for child in era, declaring MCP Apps (ui) in the request's _meta, or,
// for "legacy-session", by the UI session id sid.
func callHandoff(t *testing.T, srv *httptest.Server, sid, era string, ui bool, tool, child string) exchange {
	t.Helper()
	params := map[string]any{"name": tool, "arguments": map[string]any{"child_id": child}}
	if era == "legacy-session" {
		return post(t, srv, map[string]string{"Authorization": "Bearer " + tokAdmin, "Mcp-Session-Id": sid}, rpc(6, "tools/call", params))
	}
	return listVariant(t, srv, era, "tools/call", ui, tokAdmin, params)
}

// TestHandoffNeedsTheRule: the registry's rule alone drives the handoff (nothing in the runtime
// knows the field's name), so the same tool without the rule answers its JSON untouched.
func TestHandoffNeedsTheRule(t *testing.T) {
	opts := handoffOptionsRule(true, false)
	srv := newServer(t, opts)
	ex := listVariant(t, srv, "modern", "tools/call", true, tokAdmin, map[string]any{"name": "neemias_checkin_register", "arguments": map[string]any{"child_id": childA}})
	sc, _ := ex.result()["structuredContent"].(map[string]any)
	if sc["pickup_code"] != handoffCode || strings.Contains(ex.body, "neemias/handoff") {
		t.Errorf("without a handoff rule the field is an ordinary one: %s", ex.body)
	}
	if ex.status != http.StatusOK {
		t.Errorf("status %d", ex.status)
	}
}
