// Package mcp is the protocol runtime of Neemias MCP: it serves the capability registry over
// MCP Streamable HTTP, both protocol eras on one stateless endpoint.
//
// The protocol engine is the official go-sdk (github.com/modelcontextprotocol/go-sdk), mounted
// stateless with SSE responses. This package builds the SDK servers from the generated registry
// (every capability registered with its generated JSON Schemas set explicitly, so the SDK never
// reflects on our types), and puts in front of them what the SDK does not do: Host/Origin
// allowlist, body and JSON limits, bearer authentication, scope checks with RFC 6750 step-up
// challenges, era classification with the spec's error codes, strict URI template parsing,
// input validation with agent-actionable messages, per-era error mapping, cache hints, a
// signed requestState helper for 2026-07-28 input_required results, and JSON-RPC ids echoed
// byte for byte (the SDK reads them as float64; rpcid.go hides them from it).
//
// Era rules, in short (see docs in mcp-spec-notes §3):
//   - "initialize" selects the legacy era (negotiates 2025-11-25 or 2025-06-18); later legacy
//     requests carry MCP-Protocol-Version with a legacy version;
//   - a request with _meta "io.modelcontextprotocol/protocolVersion" or a >= 2026-07-28 header
//     is modern: headers and _meta are checked (-32020/-32022/-32602, HTTP 400), results carry
//     resultType, list and read results carry ttlMs and cacheScope;
//   - notifications get 202, GET and DELETE 405, batches 400; no Mcp-Session-Id is issued, but
//     for the UI session id: a legacy initialize declaring MCP Apps (io.modelcontextprotocol/ui)
//     gets one that only remembers the declaration, so later legacy requests echoing it are
//     shown views (uisession.go); it holds no secret, grants nothing and nothing is stored;
//   - without the MCP Apps declaration nothing about views appears: no _meta.ui, no ui://
//     resource listed, and a ui:// read answers as for an unknown resource (views.go).
//
// Nothing in this package is generated; gen/capapi, gen/schemas and gen/scopes are passed in
// through Options by the composition root.
package mcp
