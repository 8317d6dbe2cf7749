package logic_test

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/pipeline"
	"github.com/neemias/neemias-mcp/internal/principal"
)

// TestOutputsConformToTheirSchemas proves, instead of checking on every response, that what
// the pipeline returns conforms to the generated output schema: every capability of the
// registry, called by every role that may call it, with the role's scopes and with each
// sensitive scope taken away (the redacted variants), validated by a full JSON Schema
// validator, with the spec's example arguments (argsFor).
func TestOutputsConformToTheirSchemas(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	for _, c := range capapi.Catalog(capapi.UnimplementedHandler{}).All() {
		raw := c.OutputSchema
		if raw == nil {
			t.Errorf("%s: no output schema", c.ID)
			continue
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatalf("%s: output schema: %v", c.ID, err)
		}
		resolved, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: output schema: %v", c.ID, err)
		}
		if len(s.Required) > 0 && resolved.Validate(map[string]any{}) == nil {
			t.Fatalf("%s: the validator accepts {} although fields are required", c.ID)
		}
		in := argsFor(t, e, c.ID) // the spec's example arguments, resolved against the fixture
		checked := 0
		for _, role := range scopes.Roles() {
			full, _ := scopes.RoleScopes(role)
			if !full.Has(c.Scope) {
				continue
			}
			variants := []capability.ScopeSet{full}
			for _, info := range scopes.All() {
				if info.Sensitive && full.Has(info.Name) && info.Name != c.Scope {
					variants = append(variants, without(full, info.Name))
				}
			}
			for _, granted := range variants {
				ctx := a.as(role)
				p, _ := principal.From(ctx)
				p.Scopes = granted
				out, err := e.invoke(principal.With(ctx, p), c.ID, in)
				if err != nil {
					continue // row filters and state may refuse (a second enrollment, say)
				}
				data, err := pipeline.Encode(out) // the bytes the transports send
				if err != nil {
					t.Fatalf("%s/%s: encoding: %v", c.ID, role, err)
				}
				var v any
				if err := json.Unmarshal(data, &v); err != nil {
					t.Fatal(err)
				}
				if err := resolved.Validate(v); err != nil {
					t.Errorf("%s as %s with %q: output violates its schema: %v", c.ID, role, granted, err)
				}
				checked++
			}
		}
		if checked == 0 {
			t.Errorf("%s: no call succeeded, so nothing was checked", c.ID)
		}
	}
}

func without(s capability.ScopeSet, scope string) capability.ScopeSet {
	var out []string
	for _, x := range s.List() {
		if x != scope {
			out = append(out, x)
		}
	}
	return capability.NewScopeSet(out...)
}
