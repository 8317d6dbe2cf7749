// Package conformance holds the fixtures of the conformance server: the capabilities, tools,
// resources and prompts whose names and behaviour the official MCP conformance suite
// (@modelcontextprotocol/conformance 0.1.16 and 0.2.0-alpha.12) expects. They are written from
// the suite's scenario descriptions; nothing is copied from the SDK's or the suite's own
// fixture servers.
//
// The fixtures are served by the same runtime as Neemias itself (internal/mcp.NewHandler):
// capabilities registered from a registry with explicit schemas, bearer auth, Host/Origin
// allowlist, scope checks, era handling. Where the suite needs what the capability spec cannot
// express (image/audio/embedded content, prompts, progress and log notifications,
// input_required results), fixtures use the runtime's documented escape hatches (raw SDK
// results, Options.Extend, mcp.Log/Progress/SealState).
//
// testdata/harness holds the pinned npm packages and scripts that run the suites and the
// TypeScript clients; cmd/neemias-conformance serves these fixtures.
package conformance
