package conformance

import (
	"testing"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/capability"
)

// TestEveryResourceIsServed: the fixture answers every resource of the registry with an output
// its schema accepts, so a new resource that resources/list names first (the caching scenario
// reads that one) needs nothing added here.
func TestEveryResourceIsServed(t *testing.T) {
	n := 0
	for _, c := range capapi.Catalog(capapi.UnimplementedHandler{}).All() {
		if !c.IsRead() {
			continue
		}
		n++
		out, err := outputInstance(c.OutputSchema)
		if err != nil {
			t.Errorf("%s: %v", c.ID, err)
			continue
		}
		v, err := capability.NewValidator(c.OutputSchema)
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		if err := v.Validate(out); err != nil {
			t.Errorf("%s: the fixture's output %s does not match the output schema: %v; teach outputInstance (internal/mcp/conformance/neemias.go) the schema keyword it misses", c.ID, out, err)
		}
	}
	if n == 0 {
		t.Fatal("the registry has no resource")
	}
}
