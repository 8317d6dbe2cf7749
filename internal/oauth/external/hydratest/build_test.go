package hydratest_test

import (
	"os/exec"
	"testing"

	"github.com/neemias/neemias-mcp/internal/oauth/external/hydratest"
)

// TestBinary builds (or reuses) Hydra and checks the binary reports the pinned version.
func TestBinary(t *testing.T) {
	bin := hydratest.Binary(t)
	if d := hydratest.BuildDuration(); d > 0 {
		t.Logf("built Hydra %s in %v", hydratest.Version, d)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("hydra version: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
