package capgen

import (
	"testing"

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
