package capgen

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	gjs "github.com/google/jsonschema-go/jsonschema"
)

// registrySchema is the MCP Registry's server.json schema, vendored unmodified (source URL,
// version and checksum in testdata/registry/README.md): the file the registry itself validates
// published servers with.
const registrySchema = "testdata/registry/server.schema.json"

func registryResolved(t *testing.T) (*gjs.Resolved, string) {
	t.Helper()
	raw, err := os.ReadFile(registrySchema)
	if err != nil {
		t.Fatal(err)
	}
	var s gjs.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s: %v", registrySchema, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: resolve: %v", registrySchema, err)
	}
	return rs, s.ID
}

func decodeJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestServerJSONAgainstRegistrySchema: the repository root's server.json (generated from the
// spec's server: section) is valid MCP Registry metadata under the name the project reserved.
func TestServerJSONAgainstRegistrySchema(t *testing.T) {
	rs, id := registryResolved(t)
	raw, err := os.ReadFile(filepath.Join(repoRoot, "server.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc := decodeJSON(t, raw)
	if err := rs.Validate(doc); err != nil {
		t.Errorf("server.json: %v", err)
	}
	if doc["name"] != "io.github.barateza/neemias" {
		t.Errorf("name = %v, want the reserved io.github.barateza/neemias", doc["name"])
	}
	if s, _ := doc["$schema"].(string); s != id {
		t.Errorf("$schema = %q, not the vendored registry schema's $id %q", s, id)
	}
	// The schema is not a rubber stamp: a name without a namespace is refused.
	doc["name"] = "neemias"
	if err := rs.Validate(doc); err == nil {
		t.Error("the registry schema accepted a name without a namespace")
	}
}
