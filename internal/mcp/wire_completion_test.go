package mcp_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// completion/complete answers completable template variables for callers who may read the
// template (security checklist I12), and an empty list otherwise.
func TestCompletion(t *testing.T) {
	srv := newTestServer(t)
	tests := []struct {
		name  string
		token string
		ref   map[string]any
		arg   string
		value string
		want  []any
	}{
		{"completable, in scope", tokAdmin, map[string]any{"type": "ref/resource", "uri": "neemias://attendance/summary{?from,to,class_id}"}, "class_id", "7a6", []any{classA}},
		{"not completable", tokAdmin, map[string]any{"type": "ref/resource", "uri": "neemias://attendance/summary{?from,to,class_id}"}, "from", "2026", []any{}},
		{"out of scope", tokNone, map[string]any{"type": "ref/resource", "uri": "neemias://attendance/summary{?from,to,class_id}"}, "class_id", "", []any{}},
		{"unknown template", tokAdmin, map[string]any{"type": "ref/resource", "uri": "neemias://nope/{id}"}, "id", "", []any{}},
		{"prompt ref", tokAdmin, map[string]any{"type": "ref/prompt", "name": "x"}, "a", "", []any{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ex := modern(t, srv, map[string]string{"Authorization": "Bearer " + tc.token}, "completion/complete",
				map[string]any{"ref": tc.ref, "argument": map[string]any{"name": tc.arg, "value": tc.value}})
			c, _ := ex.result()["completion"].(map[string]any)
			if diff := cmp.Diff(tc.want, c["values"]); diff != "" {
				t.Errorf("values (-want +got):\n%s\nbody %s", diff, ex.body)
			}
		})
	}
}
