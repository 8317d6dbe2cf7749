package capgen_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/invopop/jsonschema"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/schemas"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/capgen"
	goldencapapi "github.com/neemias/neemias-mcp/internal/capgen/testdata/golden/minimal/gen/capapi"
)

// reflector is how invopop/jsonschema describes a Go type the way capgen's schemas describe a
// capability: inlined (MCP clients dislike $ref roots), object roots, additionalProperties
// false, required only where tagged, and the project's own scalar types mapped to string
// formats.
func reflector() *jsonschema.Reflector {
	return &jsonschema.Reflector{
		DoNotReference:             true,
		ExpandedStruct:             true,
		RequiredFromJSONSchemaTags: true,
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			switch t {
			case reflect.TypeFor[uuid.UUID]():
				return &jsonschema.Schema{Type: "string", Format: "uuid"}
			case reflect.TypeFor[capability.Date]():
				return &jsonschema.Schema{Type: "string", Format: "date"}
			}
			return nil
		},
	}
}

// reflectSchema is the schema file capgen would write for v, had it reflected v's type.
func reflectSchema(t *testing.T, v any) string {
	t.Helper()
	s := reflector().Reflect(v)
	s.Version = capgen.SchemaDraft
	s.ID = "" // derived from the Go package path
	s.Comments = capgen.SchemaComment
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatalf("marshalling schema of %T: %v", v, err)
	}
	return string(b) + "\n"
}

// generatedTree is one generated tree's types and catalog schemas (its gen/schemas files,
// which the catalog reads): the repository's, and the golden fixture's (which exercises
// keywords the real spec does not, such as minimum).
type generatedTree struct {
	name          string
	types         []capapi.TypePair
	caps          int
	input, output func(id string) json.RawMessage
}

// schemasOf are the input and output schemas of a catalog's entries, by id.
func schemasOf(entries []capability.Entry) (input, output func(id string) json.RawMessage) {
	in, out := map[string]json.RawMessage{}, map[string]json.RawMessage{}
	for _, e := range entries {
		in[e.ID], out[e.ID] = e.InputSchema, e.OutputSchema
	}
	return func(id string) json.RawMessage { return in[id] }, func(id string) json.RawMessage { return out[id] }
}

func trees() []generatedTree {
	var golden []capapi.TypePair
	for _, tp := range goldencapapi.Types() {
		golden = append(golden, capapi.TypePair{ID: tp.ID, Input: tp.Input, Output: tp.Output})
	}
	in, out := schemasOf(capapi.Catalog(capapi.UnimplementedHandler{}).All())
	gin, gout := schemasOf(goldencapapi.Catalog(goldencapapi.UnimplementedHandler{}).All())
	return []generatedTree{
		{"gen", capapi.Types(), len(capapi.Capabilities()), in, out},
		{"golden/minimal", golden, len(goldencapapi.Capabilities()), gin, gout},
	}
}

// TestEmbeddedSchemasMatchGoTypes proves the Go types the server decodes into and the schemas
// it advertises cannot disagree: capgen builds the schemas from the spec and the Go types from
// the same model, and reflecting the compiled types with invopop gives exactly the catalog's
// schemas, which are the embedded gen/schemas files (schemas.Input and Output).
func TestEmbeddedSchemasMatchGoTypes(t *testing.T) {
	for _, tr := range trees() {
		if len(tr.types) != tr.caps {
			t.Fatalf("%s: Types() has %d entries, registry %d", tr.name, len(tr.types), tr.caps)
		}
		for _, tp := range tr.types {
			in, out := reflectSchema(t, tp.Input), reflectSchema(t, tp.Output)
			if diff := cmp.Diff(string(tr.input(tp.ID)), in); diff != "" {
				t.Errorf("%s: %s input schema differs from its Go type (-embedded +reflected):\n%s", tr.name, tp.ID, diff)
			}
			if diff := cmp.Diff(string(tr.output(tp.ID)), out); diff != "" {
				t.Errorf("%s: %s output schema differs from its Go type (-embedded +reflected):\n%s", tr.name, tp.ID, diff)
			}
		}
	}
}

// TestMissingSchemaPanics: the catalog reads its schemas when the program starts, and a file
// missing there stops it, rather than a tool served without a schema.
func TestMissingSchemaPanics(t *testing.T) {
	for name, read := range map[string]func(string) json.RawMessage{"Input": schemas.Input, "Output": schemas.Output} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("schemas.%s of a capability without a file did not panic", name)
				}
			}()
			read("no_such_capability")
		}()
	}
}

// TestSchemasAreMCPShaped: object roots, no $ref, additionalProperties false — what MCP
// clients and the go-sdk require of inputSchema/outputSchema.
func TestSchemasAreMCPShaped(t *testing.T) {
	for _, c := range capapi.Catalog(capapi.UnimplementedHandler{}).All() {
		for kind, raw := range map[string][]byte{"input": c.InputSchema, "output": c.OutputSchema} {
			s := string(raw)
			if s == "" {
				t.Errorf("%s: no %s schema", c.ID, kind)
				continue
			}
			for _, want := range []string{`"type": "object"`, `"additionalProperties": false`, `"$schema": "https://json-schema.org/draft/2020-12/schema"`} {
				if !contains(s, want) {
					t.Errorf("%s %s schema lacks %s", c.ID, kind, want)
				}
			}
			if contains(s, `"$ref"`) {
				t.Errorf("%s %s schema uses $ref", c.ID, kind)
			}
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
