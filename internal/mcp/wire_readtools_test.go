package mcp_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// Every resource is also a read-only tool (Options.ReadToolPrefix): listed with the resource's
// scope, readOnlyHint, the template's variables as input; a call returns the resource's data
// as structuredContent and text; a missing scope is the same 403 step-up as the read; bad input
// is an isError result naming the field.
func TestReadTools(t *testing.T) {
	opts := testOptions(nil)
	opts.ReadToolPrefix = "neemias_"
	srv := newServer(t, opts)
	admin := map[string]string{"Authorization": "Bearer " + tokAdmin}

	list := modern(t, srv, admin, "tools/list", map[string]any{})
	var tools struct {
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"inputSchema"`
			Annotations map[string]any `json:"annotations"`
		} `json:"tools"`
	}
	b, _ := json.Marshal(list.result())
	_ = json.Unmarshal(b, &tools)
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if strings.HasPrefix(tl.Name, "neemias_roster") || strings.HasPrefix(tl.Name, "neemias_attendance") {
			if tl.Annotations["readOnlyHint"] != true || tl.Annotations["destructiveHint"] != false {
				t.Errorf("%s: annotations %v, want read-only and not destructive", tl.Name, tl.Annotations)
			}
		}
		if tl.Name == "neemias_roster_child" {
			if req, _ := tl.InputSchema["required"].([]any); len(req) != 1 || req[0] != "id" {
				t.Errorf("neemias_roster_child input %v, want the template's id required", tl.InputSchema)
			}
		}
	}
	for _, want := range []string{"neemias_roster_children", "neemias_roster_child", "neemias_attendance_summary", "neemias_checkin_register"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}

	call := modern(t, srv, admin, "tools/call", map[string]any{"name": "neemias_roster_child", "arguments": map[string]any{"id": childA}})
	res := call.result()
	sc, _ := res["structuredContent"].(map[string]any)
	if res["isError"] == true || sc["child_id"] != childA {
		t.Fatalf("read tool call: %s", call.body)
	}
	read := modern(t, srv, admin, "resources/read", map[string]any{"uri": "neemias://roster/children/" + childA})
	if !strings.Contains(read.body, `\"child_id\":\"`+childA) {
		t.Fatalf("resources/read: %s", read.body)
	}

	bad := modern(t, srv, admin, "tools/call", map[string]any{"name": "neemias_roster_child", "arguments": map[string]any{"id": "../1"}})
	if r := bad.result(); r["isError"] != true || !strings.Contains(bad.body, "id: must be a UUID") {
		t.Errorf("bad id: %s", bad.body)
	}

	vol := modern(t, srv, map[string]string{"Authorization": "Bearer " + tokVol}, "tools/call", map[string]any{"name": "neemias_roster_child", "arguments": map[string]any{"id": childA}})
	if vol.status != http.StatusForbidden || !strings.Contains(vol.header.Get("WWW-Authenticate"), "children:read") {
		t.Errorf("without children:read: %d %q, want the read's 403 step-up", vol.status, vol.header.Get("WWW-Authenticate"))
	}
}
