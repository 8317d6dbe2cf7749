package capgen

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neemias/neemias-mcp/internal/capgen/spec"
)

func TestGoNames(t *testing.T) {
	tests := []struct {
		id, prefix, goName, lower string
	}{
		{"roster_children", "", "RosterChildren", "rosterChildren"},
		{"class_id", "", "ClassID", "classID"},
		{"neemias_checkin_register", "neemias_", "CheckinRegister", "checkinRegister"},
		{"id", "", "ID", "id"},
		{"uri_template_url", "", "URITemplateURL", "uriTemplateURL"},
		{"ttl_ms", "", "TTLMS", "ttlMS"},
	}
	for _, tt := range tests {
		if got := spec.GoName(tt.id, tt.prefix); got != tt.goName {
			t.Errorf("GoName(%q, %q) = %q, want %q", tt.id, tt.prefix, got, tt.goName)
		}
		if got := spec.LowerGoName(tt.id, tt.prefix); got != tt.lower {
			t.Errorf("LowerGoName(%q, %q) = %q, want %q", tt.id, tt.prefix, got, tt.lower)
		}
	}
}

func TestScopeConst(t *testing.T) {
	for in, want := range map[string]string{"roster:read": "RosterRead", "children:write": "ChildrenWrite", "a-b.c": "ABC"} {
		if got := scopeConst(in); got != want {
			t.Errorf("scopeConst(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSQLParam(t *testing.T) {
	for in, want := range map[string]string{"from": "from_value", "to": "to_value", "class_id": "class_id", "id": "id"} {
		if got := SQLParam(in); got != want {
			t.Errorf("SQLParam(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRESTOps: the model's REST operation of every capability of the real spec: GET of the
// URI's path with its template variables split into path and query parameters, POST of
// /tools/<name>, operation ids that ogen turns into the adapter's method names.
func TestRESTOps(t *testing.T) {
	m := repoModel(t)
	want := map[string]RESTOp{
		"roster_children":          {Method: "GET", Path: "/roster/children", OperationID: "rosterChildren"},
		"roster_child":             {Method: "GET", Path: "/roster/children/{id}", OperationID: "rosterChild", PathParams: []string{"id"}},
		"attendance_summary":       {Method: "GET", Path: "/attendance/summary", OperationID: "attendanceSummary", QueryParams: []string{"from", "to", "class_id"}},
		"neemias_checkin_register": {Method: "POST", Path: "/tools/neemias_checkin_register", OperationID: "checkinRegister"},
	}
	for _, c := range m.Caps {
		w, ok := want[c.ID]
		if !ok {
			continue
		}
		if diff := cmp.Diff(w, c.REST); diff != "" {
			t.Errorf("%s REST (-want +got):\n%s", c.ID, diff)
		}
		delete(want, c.ID)
	}
	for id := range want {
		t.Errorf("capability %s is not in the spec", id)
	}
}

func TestMatrixCell(t *testing.T) {
	m := repoModel(t)
	cp := m.Caps[0] // roster_children: church for all, volunteer_assigned_classes for VOLUNTARIO
	for role, want := range map[string]string{"ADMIN": "✓ church", "VOLUNTARIO": "✓ church, volunteer_assigned_classes", "NOBODY": ""} {
		if got := m.MatrixCell(cp, role); got != want {
			t.Errorf("MatrixCell(%s, %s) = %q, want %q", cp.ID, role, got, want)
		}
	}
}
