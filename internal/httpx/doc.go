// Package httpx holds the HTTP middleware that stands in front of the MCP protocol engine and
// does what the go-sdk does not do for us: an explicit Host/Origin allowlist (DNS rebinding),
// a body-size limit, strict JSON pre-checks (nesting depth, duplicate and case-variant keys),
// RFC 6750 bearer challenges, and JSON-RPC shaped error bodies for failures that happen before
// the engine runs. It knows nothing about MCP methods or capabilities; internal/mcp composes it.
package httpx
