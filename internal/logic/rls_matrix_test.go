package logic_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/capgen/spec"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/principal"
)

// fixtureValues are the fixture's named values (spec.ExampleNames) that the spec's example
// arguments refer to as "$name": the matrix tests call every capability of the registry with
// its example, resolved here (argsFor). The values come from the fixture church a.
func fixtureValues(e *env) map[string]func() any {
	return map[string]func() any{
		"birth_date":         func() any { return todaySP().Time().AddDate(-4, 0, -3).Format("2006-01-02") },
		"checkin":            func() any { return e.a.ck1 },
		"child":              func() any { return e.a.k1 },
		"child_handle":       func() any { return e.a.k1Handle },
		"class":              func() any { return e.a.c1 },
		"day":                func() any { return e.a.day.String() },
		"duplicate_child":    func() any { return e.a.k4 },
		"duplicate_guardian": func() any { return e.a.g1 },
		"fresh_name":         func() any { return nextEnrollName() },
		"guardian":           func() any { return e.a.g2 },
		"leaving_child":      func() any { return e.a.k4 },
		"pickup_adult":       func() any { return e.a.g1Name },
		"pickup_adult_id":    func() any { return e.a.pa1 },
		"pickup_code":        func() any { return fixtureCode },
	}
}

// TestFixtureValuesAreTheSpecs: the fixture defines exactly the named values the spec checker
// accepts in examples (spec.ExampleNames).
func TestFixtureValuesAreTheSpecs(t *testing.T) {
	got := slices.Sorted(maps.Keys(fixtureValues(&env{})))
	if !slices.Equal(got, spec.ExampleNames) {
		t.Errorf("fixture values %v, spec.ExampleNames %v", got, spec.ExampleNames)
	}
}

// enrollNames numbers the fixture's enrollments: a second enrollment of the same child is
// refused as a duplicate, and the matrix tests enroll once per role.
var enrollNames atomic.Int32

// nextEnrollName is the canary child name with a fresh suffix of letters (names are words).
func nextEnrollName() string {
	var suffix []byte
	for n := enrollNames.Add(1); n > 0; n = (n - 1) / 26 {
		suffix = append([]byte{byte('a' + (n-1)%26)}, suffix...)
	}
	return enrollChildName + " " + strings.ToUpper(string(suffix[:1])) + string(suffix[1:])
}

// argsFor returns the example arguments of capability id (the spec's example:) resolved
// against the fixture, failing the test when it has none that resolve.
func argsFor(t *testing.T, e *env, id string) any {
	t.Helper()
	c, ok := capapi.Lookup(id)
	if !ok {
		t.Fatalf("capability %s is not in the registry", id)
	}
	args, err := c.ExampleArgs(fixtureValues(e))
	if err != nil {
		t.Fatal(err)
	}
	return args
}

// TestRLSMatchesScopeMatrix proves, for every role × every capability of the registry, that the
// database (row-level security, the row filter functions of the spec and its scope check,
// rf_has_scope, 00090/00110) allows what the spec's scope matrix allows, with the pipeline's
// scope check out of the way (every scope granted to the pipeline; the logic, and so the
// transaction, acts with the role's own scopes):
//
//   - a tool's write succeeds exactly for the roles the matrix grants the tool's scope; for the
//     others the database refuses it (the case of a write policy narrower or wider than the spec);
//   - a read (a resource, or a read-only tool) returns the fixture's rows to every role granted
//     its scope, and no row (or a refusal) to the others: the generated query, or the tool's
//     query, requires the scope from the transaction's caller context.
func TestRLSMatchesScopeMatrix(t *testing.T) {
	t.Parallel()
	var names []string
	for _, s := range scopes.All() {
		names = append(names, s.Name)
	}
	every := capability.NewScopeSet(names...)
	reads := newEnv(t)
	for _, c := range capapi.Capabilities() {
		for _, role := range scopes.Roles() {
			rs, _ := scopes.RoleScopes(role)
			granted := rs.Has(c.Scope)
			if c.IsRead() || readOnlyTool(c) {
				t.Run(c.ID+"/"+role, func(t *testing.T) {
					e := reads
					if !c.IsRead() {
						e = newEnv(t)
					}
					out, err := invokeAs(e, e.a.as(role), c.ID, argsFor(t, e, c.ID), every)
					var f *errs.Forbidden
					switch {
					case errors.As(err, &f):
						t.Fatalf("the pipeline refused with every scope granted: %v", err)
					case granted && err != nil:
						t.Errorf("the spec grants %s to %s, but the database refused %s: %v", c.Scope, role, c.ID, err)
					case granted && rowsOf(t, out) == 0:
						t.Errorf("the spec grants %s to %s, but the database returned no row of %s", c.Scope, role, c.ID)
					case !granted && err == nil && rowsOf(t, out) != 0:
						t.Errorf("the spec does not grant %s to %s, but the database returned rows of %s: %+v", c.Scope, role, c.ID, out)
					}
				})
				continue
			}
			t.Run(c.ID+"/"+role, func(t *testing.T) {
				e := newEnv(t)
				_, err := invokeWith(e, e.a.as(role), c.ID, argsFor(t, e, c.ID), every)
				var f *errs.Forbidden
				switch {
				case errors.As(err, &f):
					t.Fatalf("the pipeline refused with every scope granted: %v", err)
				case granted && err != nil:
					t.Errorf("the spec grants %s to %s, but the database refused %s: %v", c.Scope, role, c.ID, err)
				case !granted && err == nil:
					t.Errorf("the spec does not grant %s to %s, but the database allowed %s", c.Scope, role, c.ID)
				}
			})
		}
	}
}

// invokeAs calls capability id past the pipeline's scope check (pipeline holds every scope in
// granted) with the logic acting for the principal on ctx and its own scopes: what the
// database alone allows that caller.
func invokeAs(e *env, ctx context.Context, id string, args any, granted capability.ScopeSet) (any, error) {
	e.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		e.t.Fatal(err)
	}
	p, _ := principal.From(ctx)
	auth := p
	auth.Scopes = granted
	return e.run(principal.With(context.Background(), auth), ctx, id, raw, nil)
}

// rowsOf counts the rows of a read's output: the members of its top-level arrays, or 1 for a
// single record (an output without arrays).
func rowsOf(t *testing.T, out any) int {
	t.Helper()
	raw, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatalf("output %s: %v", raw, err)
	}
	n, arrays := 0, false
	for _, v := range fields {
		var list []json.RawMessage
		if json.Unmarshal(v, &list) == nil && len(v) > 0 && v[0] == '[' {
			arrays = true
			n += len(list)
		}
	}
	if !arrays {
		return 1
	}
	return n
}

// readOnlyTool reports whether c is a tool that only reads (annotations read_only: true).
func readOnlyTool(c capability.Capability) bool {
	return c.Annotations.ReadOnly != nil && *c.Annotations.ReadOnly
}
