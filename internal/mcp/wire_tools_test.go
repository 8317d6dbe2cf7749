package mcp_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neemias/neemias-mcp/internal/capability"
)

// tools/call: structuredContent conforming to the output schema plus the same rendered as text;
// input-validation failures as isError results an agent can act on (security checklist M11,
// I03, I04, I07); internal errors as a correlation id only (P01).
func TestToolCall(t *testing.T) {
	var logs bytes.Buffer
	srv := newServer(t, testOptions(&logs))
	tests := []struct {
		name      string
		tool      string
		args      any
		isError   bool
		wantText  []string // substrings of the text content
		notInText []string
	}{
		{"ok", "neemias_checkin_register", map[string]any{"child_id": childA}, false, []string{"child_id: " + childA}, nil},
		{"missing required", "neemias_checkin_register", map[string]any{}, true, []string{"child_id: is required", "call the tool again"}, nil},
		{"I03 not a uuid", "neemias_checkin_register", map[string]any{"child_id": "1 OR 1=1"}, true, []string{"child_id: must be a UUID"}, []string{"1 OR 1=1"}},
		{"I03 path traversal id", "neemias_checkin_register", map[string]any{"child_id": "../1"}, true, []string{"child_id: must be a UUID"}, nil},
		{"wrong type", "neemias_checkin_register", map[string]any{"child_id": 5}, true, []string{"child_id: must be a string"}, nil},
		{"null argument", "neemias_checkin_register", map[string]any{"child_id": nil}, true, []string{"child_id: must be a string"}, nil},
		{"bad date", "neemias_checkin_register", map[string]any{"child_id": childA, "service_date": "2026-02-30"}, true, []string{"service_date: must be a date in the form YYYY-MM-DD"}, nil},
		{"I07 mass assignment", "neemias_checkin_register", map[string]any{"child_id": childA, "church_id": childA}, true, []string{"church_id: is not a known field"}, nil},
		{"array for scalar", "neemias_checkin_register", map[string]any{"child_id": []any{childA}}, true, []string{"child_id: must be a string"}, nil},
		{"not found is a tool error", "neemias_checkin_register", map[string]any{"child_id": "00000000-0000-4000-8000-000000000000"}, true, []string{"not found"}, nil},
		{"I05 name too long, value not echoed", "neemias_child_enroll", map[string]any{"name": strings.Repeat("Ana ", 100) + canary, "guardian": map[string]any{"phone": "+55 11 99999-0000", "relationship": "mother"}}, true, []string{"name: must be at most 120 characters long"}, []string{canary}},
		{"pattern failure names the field, not the value", "neemias_child_enroll", map[string]any{"name": "Ana", "guardian": map[string]any{"phone": "call " + canary, "relationship": "mother"}}, true, []string{"guardian.phone: has the wrong form"}, []string{canary}},
		{"enum", "neemias_child_enroll", map[string]any{"name": "Ana", "guardian": map[string]any{"phone": "+55 11 99999-0000", "relationship": "aunt"}}, true, []string{"guardian.relationship: must be one of: mother, father, other"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, era := range []string{"legacy", "modern"} {
				var ex exchange
				params := map[string]any{"name": tc.tool, "arguments": tc.args}
				if era == "legacy" {
					ex = post(t, srv, nil, rpc(1, "tools/call", params))
				} else {
					ex = modern(t, srv, nil, "tools/call", params)
				}
				r := ex.result()
				if r == nil {
					t.Fatalf("%s: no result: %s", era, ex.body)
				}
				if isErr, _ := r["isError"].(bool); isErr != tc.isError {
					t.Fatalf("%s: isError = %v, want %v: %s", era, isErr, tc.isError, ex.body)
				}
				content, _ := r["content"].([]any)
				text, _ := content[0].(map[string]any)["text"].(string)
				for _, w := range tc.wantText {
					if !strings.Contains(text, w) {
						t.Errorf("%s: text %q lacks %q", era, text, w)
					}
				}
				for _, w := range tc.notInText {
					if strings.Contains(ex.body, w) {
						t.Errorf("%s: response echoes %q: %s", era, w, ex.body)
					}
				}
				if !tc.isError { // the text is structuredContent rendered for the model
					sc, _ := json.Marshal(r["structuredContent"])
					if want, err := capability.RenderText(sc, nil); err != nil || text != want {
						t.Errorf("%s: text %q, want structuredContent rendered %q (%v)", era, text, want, err)
					}
				}
			}
		})
	}
}

func TestToolInternalErrorIsOpaque(t *testing.T) {
	var logs bytes.Buffer
	srv := newServer(t, testOptions(&logs))
	args := map[string]any{"name": "Ana Clara", "guardian": map[string]any{"phone": "+55 11 99999-0000", "relationship": "mother"}}
	ex := modern(t, srv, nil, "tools/call", map[string]any{"name": "neemias_child_enroll", "arguments": args})
	if ex.errorCode() != -32603 || !strings.Contains(ex.errorMessage(), "correlation id") {
		t.Fatalf("got %v %q; body %s", ex.errorCode(), ex.errorMessage(), ex.body)
	}
	for _, leak := range []string{canary, "SQLSTATE", "duplicate key", "children_name_key"} {
		if strings.Contains(ex.body, leak) {
			t.Errorf("response leaks %q: %s", leak, ex.body)
		}
	}
	data := ex.msg["error"].(map[string]any)["data"].(map[string]any)
	if id, _ := data["correlationId"].(string); id == "" || !strings.Contains(logs.String(), id) {
		t.Errorf("correlation id %q not in the server log", id)
	}
}

func TestToolsListFollowsScopes(t *testing.T) {
	srv := newTestServer(t)
	list := func(tok string) []string {
		ex := modern(t, srv, map[string]string{"Authorization": "Bearer " + tok}, "tools/list", nil)
		var names []string
		for _, it := range ex.result()["tools"].([]any) {
			names = append(names, it.(map[string]any)["name"].(string))
		}
		return names
	}
	if diff := cmp.Diff([]string{"neemias_checkin_register", "neemias_child_enroll"}, list(tokAdmin)); diff != "" {
		t.Errorf("admin (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"neemias_checkin_register"}, list(tokVol)); diff != "" {
		t.Errorf("volunteer (-want +got):\n%s", diff)
	}
	ex := modern(t, srv, nil, "tools/list", nil)
	tool := ex.result()["tools"].([]any)[0].(map[string]any)
	if _, ok := tool["outputSchema"]; !ok {
		t.Errorf("tool lacks outputSchema: %v", tool)
	}
	if s := tool["inputSchema"].(map[string]any); s["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("generated schema not passed through verbatim: %v", s)
	}
}
