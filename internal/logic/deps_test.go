package logic_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLogicDependsOnNothingThatCallsIt: the capability logic sits below the code that calls it.
// The catalog, the pipeline, the transports and the server reach it through gen/capapi's
// Handler interface, so none of them (nor anything of theirs) may be among its dependencies;
// an import of internal/pipeline, say, would put the caller back under the callee.
func TestLogicDependsOnNothingThatCallsIt(t *testing.T) {
	const mod = "github.com/neemias/neemias-mcp/"
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		deps[p] = true
	}
	if !deps[mod+"gen/capapi"] {
		t.Fatalf("go list listed no gen/capapi among %d packages: the test reads the wrong package", len(deps))
	}
	for _, caller := range []string{
		"gen/openapi/oas", "internal/pipeline", "internal/mcp",
		"internal/rest", "internal/httpx", "internal/server", "internal/oauth", "internal/upstream", "internal/config",
	} {
		if deps[mod+caller] {
			t.Errorf("internal/logic depends on %s, which calls it", caller)
		}
	}
}
