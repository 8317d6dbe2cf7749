package capability

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCatalogReturnsCopiesAndFailsClosed(t *testing.T) {
	noop := func(context.Context, ScopeSet, json.RawMessage) (any, error) { return nil, nil }
	src := []Entry{
		{Capability: Capability{ID: "a", Scope: "things:read", RowFilters: []string{"church"}, Audit: Audit{IDInputs: []string{"id"}}}, Operation: "A", Invoke: noop},
		{Capability: Capability{ID: "b", Scope: "things:read"}, Invoke: noop},
	}
	c, err := NewCatalog([]RoleScopes{{Role: "MEMBER", Scopes: []string{"things:read"}}}, src...)
	if err != nil {
		t.Fatal(err)
	}
	src[0].RowFilters[0] = "changed by the caller"
	all := c.All()
	all[0].RowFilters[0], all[0].Audit.IDInputs[0] = "changed", "changed"
	got, ok := c.Lookup("a")
	if !ok || got.RowFilters[0] != "church" || got.Audit.IDInputs[0] != "id" {
		t.Fatalf("Lookup(a) = %+v, %v: the catalog was mutated through a copy", got, ok)
	}
	if ids := []string{all[0].ID, all[1].ID}; !cmp.Equal(ids, []string{"a", "b"}) {
		t.Errorf("All() order = %v", ids)
	}
	if _, ok := c.Lookup("unknown"); ok {
		t.Error("Lookup of an unknown id succeeded")
	}
	if _, ok := c.Scope("unknown"); ok {
		t.Error("Scope of an unknown id succeeded")
	}
	if e, ok := c.Operation("A"); !ok || e.ID != "a" {
		t.Errorf("Operation(A) = %q, %v", e.ID, ok)
	}
	if c.RoleCanHold("GUEST", "things:read") || !c.RoleCanHold("MEMBER", "things:read") {
		t.Error("RoleCanHold does not follow the roles")
	}
	if _, err := c.With(Entry{Capability: Capability{ID: "a", Scope: "x"}, Invoke: noop}); err == nil {
		t.Error("With accepted a duplicate id")
	}
	if _, err := c.With(Entry{Capability: Capability{ID: "c"}, Invoke: noop}); err == nil {
		t.Error("With accepted an entry without a scope")
	}
	w, err := c.With(Entry{Capability: Capability{ID: "c", Scope: "x"}, AuditAs: "upstream:c", Invoke: noop})
	if err != nil || len(w.All()) != 3 || len(c.All()) != 2 || w.AuditName("c") != "upstream:c" {
		t.Errorf("With = %v, %v: want a new catalog of three, the old one unchanged", w, err)
	}
}

func testMatrix() ScopeMatrix {
	return NewScopeMatrix(
		[]ScopeInfo{{Name: "things:read", Description: "Read things"}, {Name: "secrets:read", Sensitive: true}},
		[]RoleScopes{{Role: "ADMIN", Scopes: []string{"things:read", "secrets:read"}}, {Role: "MEMBER", Scopes: []string{"things:read"}}},
	)
}

// TestScopeMatrixFailsClosed: unknown roles and scopes get nothing.
func TestScopeMatrixFailsClosed(t *testing.T) {
	m := testMatrix()
	all := NewScopeSet("things:read", "secrets:read")
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"role scopes unknown", ok(m.RoleScopes("GUEST")), false},
		{"grant intersects", m.Grant("MEMBER", all).String(), "things:read"},
		{"grant unknown role", m.Grant("GUEST", all).String(), ""},
		{"roles in order", m.Roles(), []string{"ADMIN", "MEMBER"}},
		{"is role", m.IsRole("MEMBER"), true},
		{"is role unknown", m.IsRole("member"), false},
		{"describe", must(m.Describe("secrets:read")).Sensitive, true},
		{"describe unknown", ok(m.Describe("nope")), false},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	scopes := m.All()
	scopes[0].Name = "changed"
	if m.All()[0].Name != "things:read" {
		t.Error("All() exposes the matrix")
	}
}

func must[T any](v T, _ bool) T   { return v }
func ok[T any](_ T, ok bool) bool { return ok }

type out struct {
	Name      *string
	finalized ScopeSet
}

func (o *out) Finalize(granted ScopeSet) { o.finalized = granted }

func TestCallFinalizesAndRefusesNilOutput(t *testing.T) {
	granted := NewScopeSet("things:read")
	got, err := Call(context.Background(), "things", new(struct{}), func(context.Context, *struct{}) (*out, error) { return &out{}, nil }, granted)
	if err != nil || got.(*out).finalized.String() != "things:read" {
		t.Errorf("Call = %+v, %v; want the output finalized for the granted scopes", got, err)
	}
	if _, err := Call(context.Background(), "things", new(struct{}), func(context.Context, *struct{}) (*out, error) { return nil, nil }, granted); err == nil {
		t.Error("a handler returning neither output nor error must be an error")
	}
	boom := errors.New("boom")
	if _, err := Call(context.Background(), "things", new(struct{}), func(context.Context, *struct{}) (*out, error) { return nil, boom }, granted); !errors.Is(err, boom) {
		t.Errorf("Call error = %v, want the handler's", err)
	}
}

type decoded struct{ raw string }

func (d *decoded) UnmarshalJSON(b []byte) error { d.raw = string(b); return nil }
