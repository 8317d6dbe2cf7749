package dextest

import (
	"testing"

	"github.com/neemias/neemias-mcp/internal/testsupport/modbin"
)

// Version is the Dex release the tests run. Dex's go.mod says "module github.com/dexidp/dex"
// (no /v2), so the Go module proxy does not serve its v2 tags by name; ModuleVersion is the
// pseudo-version of the commit tagged v2.45.1 (11d2eeb52b42, 2026-03-03), which it serves.
const (
	Version       = "v2.45.1"
	ModuleVersion = "v0.0.0-20260303133905-11d2eeb52b42"
)

// dex drops the replace directive that points at its nested api/v2 module (absent from the
// module zip; the published github.com/dexidp/dex/api/v2 its go.mod requires is used instead)
// and builds ./cmd/dex without cgo (the memory storage needs no SQLite); about a minute and a
// half on 2 cores the first time.
var dex = &modbin.Program{
	Name: "dex", Version: Version, Module: "github.com/dexidp/dex", ModuleVersion: ModuleVersion,
	Edits:   [][]string{{"mod", "edit", "-dropreplace=github.com/dexidp/dex/api/v2"}},
	Package: "./cmd/dex", LDFlags: "-X main.version=" + Version,
}

// Binary returns the path of a Dex binary, built the first time (internal/testsupport/modbin):
// skipped without a go command, fatal when the build fails.
func Binary(tb testing.TB) string { return dex.Binary(tb) }
