package server_test

import (
	"testing"

	"github.com/neemias/neemias-mcp/internal/testsupport"
)

// harness is the pinned npm install shared with internal/mcp/conformance: Node 22 (npm package
// node@22), the TypeScript SDK 1.32.2, @modelcontextprotocol/client 2.x and both conformance
// suites, plus its scripts (client-smoke.mjs, conformance.sh, mcp-proxy.mjs).
const harness = "../mcp/conformance/testdata/harness"

// nodeBin returns the harness's pinned Node 22, installing the pinned packages first when one
// is missing (testsupport.HarnessNode: skips only without npm, installs under a lock).
func nodeBin(t *testing.T) string {
	t.Helper()
	return testsupport.HarnessNode(t, harness)
}
