package capgen

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	gjs "github.com/google/jsonschema-go/jsonschema"
)

// The MCP Registry's server.json schema, as the registry itself validates published servers
// with it: file internal/validators/schemas/2025-12-11.json of the Go module
// github.com/modelcontextprotocol/registry, read from the module cache (downloaded through the
// module proxy on first use), never copied into this repository.
const (
	registryModule = "github.com/modelcontextprotocol/registry@v1.8.9"
	registryFile   = "internal/validators/schemas/2025-12-11.json"
)

func registryResolved(t *testing.T) *gjs.Resolved {
	t.Helper()
	out, err := exec.Command("go", "mod", "download", "-json", registryModule).Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v", registryModule, err)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download %s: %s %s", registryModule, mod.Error, out)
	}
	raw, err := os.ReadFile(filepath.Join(mod.Dir, registryFile))
	if err != nil {
		t.Fatal(err)
	}
	var s gjs.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s: %v", registryFile, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: resolve: %v", registryFile, err)
	}
	return rs
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
	rs := registryResolved(t)
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
	if s, _ := doc["$schema"].(string); !strings.Contains(s, "2025-12-11") {
		t.Errorf("$schema = %q, not the registry schema's version", s)
	}
	// The schema is not a rubber stamp: a name without a namespace is refused.
	doc["name"] = "neemias"
	if err := rs.Validate(doc); err == nil {
		t.Error("the registry schema accepted a name without a namespace")
	}
}
