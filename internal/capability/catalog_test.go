package capability_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/capability"
)

// TestCatalogAliases: an alias takes everything but its wire name and text from the tool it
// runs, and the catalog refuses an alias it could not make so.
func TestCatalogAliases(t *testing.T) {
	invoke := func(context.Context, capability.ScopeSet, json.RawMessage) (any, error) { return nil, nil }
	base, err := capability.NewCatalog(nil,
		capability.Entry{Capability: capability.Capability{ID: "do_thing", Name: "do_thing", Kind: capability.KindTool, Scope: "things:write", Title: "Do", Description: "Does."},
			InputSchema: json.RawMessage(`{"type":"object"}`), Operation: "doThing", Invoke: invoke},
		capability.Entry{Capability: capability.Capability{ID: "read_thing", Name: "neemias://thing", Kind: capability.KindResource, Scope: "things:read"}, Invoke: invoke})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := base.With(capability.Entry{Capability: capability.Capability{ID: "sheet_do", Description: "From the sheet."}, Runs: "do_thing", View: "ui://x/sheet"})
	if err != nil {
		t.Fatal(err)
	}
	a, ok := cat.Lookup("sheet_do")
	switch {
	case !ok:
		t.Fatal("alias not in the catalog")
	case a.Name != "sheet_do" || a.Kind != capability.KindTool || a.Scope != "things:write" || a.Title != "Do" || a.Description != "From the sheet.":
		t.Errorf("alias = %+v; want its own name and description, the tool's kind, scope and title", a.Capability)
	case a.Operation != "" || a.Invoke == nil || string(a.InputSchema) != `{"type":"object"}` || a.AuditName() != "do_thing" || a.View != "ui://x/sheet":
		t.Errorf("alias = operation %q, schema %s, audit %q, view %q; want no REST, the tool's schema, invoker and audit name", a.Operation, a.InputSchema, a.AuditName(), a.View)
	}
	if got := cat.Canonical("sheet_do"); got != "do_thing" {
		t.Errorf("Canonical(alias) = %q", got)
	}
	if got := cat.Canonical("do_thing"); got != "do_thing" {
		t.Errorf("Canonical(tool) = %q", got)
	}
	for _, tc := range []struct {
		alias capability.Entry
		want  string
	}{
		{capability.Entry{Capability: capability.Capability{ID: "x"}, Runs: "missing"}, "not in the catalog"},
		{capability.Entry{Capability: capability.Capability{ID: "x"}, Runs: "read_thing"}, "not a tool"},
		{capability.Entry{Capability: capability.Capability{ID: "x"}, Runs: "sheet_do"}, "not a tool"},
		{capability.Entry{Capability: capability.Capability{ID: "x", Scope: "more:power"}, Runs: "do_thing"}, "sets what it takes"},
		{capability.Entry{Capability: capability.Capability{ID: "do_thing"}, Runs: "do_thing"}, "twice"},
		{capability.Entry{Runs: "do_thing"}, "no id"},
	} {
		if _, err := cat.With(tc.alias); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("With(%+v) = %v; want an error saying %q", tc.alias, err, tc.want)
		}
	}
}
