package capability

// UpstreamTool is a tool of an allowlisted upstream MCP server (issue 11) exposed as a
// Neemias tool, as spec/capabilities.yaml's upstreams section declares it. Its input schema and
// annotations are the upstream's, read from its tools/list at runtime; where the upstream is
// (its URL) and whether upstreams are on at all are runtime configuration
// (cmd/neemias-mcp --upstreams, --upstream id=URL).
type UpstreamTool struct {
	Name        string // the Neemias tool name: the upstream's prefix + Tool
	Upstream    string // the upstream's id
	Tool        string // the tool's name on the upstream
	Title       string
	Description string
	Scope       string // the Neemias scope a caller needs
	PIIRequest  string // enforce or redact: personal data in the arguments
	PIIResponse string // enforce or redact: personal data in the result
	Source      string // where the spec declares it
}
