package hydratest

import (
	"testing"
	"time"

	"github.com/neemias/neemias-mcp/internal/testsupport/modbin"
)

// Version is the Hydra release the tests run: github.com/ory/hydra/v2 from the Go module proxy.
const Version = "v2.3.0"

// clientVersion is the hydra-client-go release that replaces Hydra's nested module (absent
// from the module zip) in the copied go.mod.
const clientVersion = "v2.2.1"

// hydra drops the replace directive that points at the nested hydra-client-go module and
// requires the published client instead.
var hydra = &modbin.Program{
	Name: "hydra", Version: Version, Module: "github.com/ory/hydra/v2", ModuleVersion: Version,
	Edits: [][]string{
		{"mod", "edit", "-dropreplace=github.com/ory/hydra-client-go/v2"},
		{"get", "github.com/ory/hydra-client-go/v2@" + clientVersion},
	},
	Package: ".",
}

// Binary returns the path of a Hydra binary, built the first time (internal/testsupport/modbin):
// skipped without a go command, fatal when the build fails.
func Binary(tb testing.TB) string { return hydra.Binary(tb) }

// BuildDuration is how long this process spent building Hydra (zero when the cached binary
// was used).
func BuildDuration() time.Duration { return hydra.BuildDuration() }
