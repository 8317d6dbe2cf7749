package capability

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRegistryReturnsCopies(t *testing.T) {
	src := []Capability{{ID: "a", RowFilters: []string{"church"}, Audit: Audit{IDInputs: []string{"id"}}}, {ID: "b"}}
	r := NewRegistry(src)
	src[0].RowFilters[0] = "changed by the caller"
	all := r.All()
	all[0].RowFilters[0], all[0].Audit.IDInputs[0] = "changed", "changed"
	got, ok := r.Lookup("a")
	if !ok || got.RowFilters[0] != "church" || got.Audit.IDInputs[0] != "id" {
		t.Fatalf("Lookup(a) = %+v, %v: the registry was mutated through a copy", got, ok)
	}
	if ids := []string{all[0].ID, all[1].ID}; !cmp.Equal(ids, []string{"a", "b"}) {
		t.Errorf("All() order = %v", ids)
	}
	if _, ok := r.Lookup("unknown"); ok {
		t.Error("Lookup of an unknown id succeeded")
	}
}

func testMatrix() ScopeMatrix {
	return NewScopeMatrix(
		[]ScopeInfo{{Name: "things:read", Description: "Read things"}, {Name: "secrets:read", Sensitive: true}},
		map[string]string{"things": "things:read", "secrets": "secrets:read"},
		[]RoleScopes{{Role: "ADMIN", Scopes: []string{"things:read", "secrets:read"}}, {Role: "MEMBER", Scopes: []string{"things:read"}}},
	)
}

// TestScopeMatrixFailsClosed: unknown capabilities, roles and scopes get nothing.
func TestScopeMatrixFailsClosed(t *testing.T) {
	m := testMatrix()
	all := NewScopeSet("things:read", "secrets:read")
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"required known", must(m.Required("things")), "things:read"},
		{"required unknown", ok(m.Required("nope")), false},
		{"allowed", m.Allowed("secrets", all), true},
		{"allowed without the scope", m.Allowed("secrets", NewScopeSet("things:read")), false},
		{"allowed unknown capability", m.Allowed("nope", all), false},
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
