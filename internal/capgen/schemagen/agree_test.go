package schemagen_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/schemas"
	"github.com/neemias/neemias-mcp/internal/capgen/schemagen"
)

// TestEmbeddedSchemasMatchGoTypes proves the Go types the server decodes into and the schemas
// it advertises cannot disagree: reflecting the compiled types now gives exactly the embedded
// schemas.
func TestEmbeddedSchemasMatchGoTypes(t *testing.T) {
	types := capapi.Types()
	if len(types) != len(capapi.Capabilities()) {
		t.Fatalf("Types() has %d entries, registry %d", len(types), len(capapi.Capabilities()))
	}
	for _, tp := range types {
		in, err := schemagen.Schema(tp.Input)
		if err != nil {
			t.Fatal(err)
		}
		out, err := schemagen.Schema(tp.Output)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(schemas.Input(tp.ID)), string(in)); diff != "" {
			t.Errorf("%s input schema differs from its Go type (-embedded +reflected):\n%s", tp.ID, diff)
		}
		if diff := cmp.Diff(string(schemas.Output(tp.ID)), string(out)); diff != "" {
			t.Errorf("%s output schema differs from its Go type (-embedded +reflected):\n%s", tp.ID, diff)
		}
	}
}

// TestSchemasAreMCPShaped: object roots, no $ref, additionalProperties false — what MCP
// clients and the go-sdk require of inputSchema/outputSchema.
func TestSchemasAreMCPShaped(t *testing.T) {
	for _, c := range capapi.Capabilities() {
		for kind, raw := range map[string][]byte{"input": schemas.Input(c.ID), "output": schemas.Output(c.ID)} {
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
