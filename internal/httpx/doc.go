// Package httpx holds the HTTP middleware that stands in front of the server's authenticated
// surfaces, the MCP protocol engine and the REST API, and does what the go-sdk and ogen do not
// do for us: an explicit Host/Origin allowlist (DNS rebinding), a body-size limit, strict JSON
// pre-checks (nesting depth, duplicate and case-variant keys), a query string read as written,
// RFC 6750 bearer challenges, per-caller and per-address rate limits, and error bodies in each
// surface's format (JSON-RPC for MCP) for failures that happen before the surface runs. It
// knows nothing about MCP methods or capabilities.
//
// Edge puts these pieces in one order, written once: internal/server builds one Edge, and
// internal/mcp and internal/rest each wrap their handler with it, adding only their own
// SurfaceRules.
package httpx
