package capability

// ViewMIMEType is the MIME type of an MCP Apps view (io.modelcontextprotocol/ui).
const ViewMIMEType = "text/html;profile=mcp-app"

// UIExtension is the MCP Apps extension key, in client and server capabilities.
const UIExtension = "io.modelcontextprotocol/ui"

// View is an MCP Apps view: a ui:// resource holding one self-contained HTML document, linked
// to the tools whose results it renders (the spec's views: section).
type View struct {
	ID          string
	URI         string // ui://neemias/…
	Title       string
	Description string
	// HTML is the document, embedded in the binary.
	HTML string
	// Capabilities are the ids of the capabilities whose tools link to the view (a resource's
	// read tool, or a tool); Visibility is their _meta.ui.visibility ("model", "app").
	Capabilities []string
	Visibility   []string
	// CSP lists the origins the view may reach; empty means the host's deny-all default.
	CSP ViewCSP
	// AppTools are the view's app-only tools (_meta.ui.visibility ["app"]): declared tools
	// under names the model is never shown, for the view's own actions.
	AppTools []AppTool
	// Source is where the spec declares it.
	Source string
}

// AppTool is an app-only tool of a view: tool Tool (a tool's wire name, which is its
// capability id) listed and called as Name, with the same capability behind it (scope, row
// filters, schemas, redaction, audit, business rules), only for clients that declared the MCP
// Apps extension, and never shown to the model.
type AppTool struct {
	Name, Tool, Title, Description string
}

// ViewCSP is _meta.ui.csp of a view resource.
type ViewCSP struct {
	ConnectDomains, ResourceDomains, FrameDomains, BaseURIDomains []string
}

// Empty reports whether no domain is declared.
func (c ViewCSP) Empty() bool {
	return len(c.ConnectDomains)+len(c.ResourceDomains)+len(c.FrameDomains)+len(c.BaseURIDomains) == 0
}

// Links reports whether the view is linked to capability id.
func (v View) Links(id string) bool {
	for _, c := range v.Capabilities {
		if c == id {
			return true
		}
	}
	return false
}

// AppToolEntries are the catalog entries of the views' app-only tools: each an alias
// (Entry.Runs) of the tool it runs, under its own wire name, marked with its view's URI. The
// server adds them to the spec's catalog with [Catalog.With], as it adds upstream tools.
func AppToolEntries(views []View) []Entry {
	var out []Entry
	for _, v := range views {
		for _, a := range v.AppTools {
			out = append(out, Entry{Capability: Capability{ID: a.Name, Name: a.Name, Kind: KindTool,
				Title: a.Title, Description: a.Description}, Runs: a.Tool, View: v.URI})
		}
	}
	return out
}
