package capgen

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/capgen/spec"
)

// ViewsPackage is where the view documents live and the generated registry goes: go:embed
// reaches only files under the package's directory.
const ViewsPackage = "internal/views"

// ViewModel is one spec view, resolved for the emitters.
type ViewModel struct {
	ID, GoName, URI, Title, Description string
	File, Base                          string // internal/views/x.html, x.html
	Capabilities, Visibility            []string
	CSP                                 capability.ViewCSP
	AppTools                            []capability.AppTool
	FileLine                            int // of the view's file: key, for diagnostics only
}

// Views returns the spec's views: section, resolved, in file order.
func (m *Model) Views() []ViewModel { return m.views }

func newViews(s *spec.Spec) []ViewModel {
	var out []ViewModel
	for _, e := range s.Views {
		v := e.Value
		vm := ViewModel{
			ID: e.Name, GoName: spec.GoName(e.Name, ""), URI: v.URI, Title: v.Title,
			Description: strings.TrimSpace(v.Description), File: v.File, Base: path.Base(v.File),
			Capabilities: v.Capabilities, Visibility: v.Visibility,
			FileLine: s.Line("views." + e.Name + ".file"),
		}
		if len(vm.Visibility) == 0 {
			vm.Visibility = []string{"model", "app"}
		}
		if v.CSP != nil {
			vm.CSP = capability.ViewCSP(*v.CSP)
		}
		for _, a := range v.AppTools {
			vm.AppTools = append(vm.AppTools, capability.AppTool{Name: a.Name, Tool: a.Value.Tool,
				Title: strings.TrimSpace(a.Value.Title), Description: strings.TrimSpace(a.Value.Description)})
		}
		out = append(out, vm)
	}
	return out
}

// externalRef finds attributes and CSS that would load something from outside the document:
// views must work under the host's deny-all default CSP.
var externalRef = regexp.MustCompile(`(?i)(\b(src|href|action)\s*=\s*["']?\s*(https?:)?//)|(url\(\s*["']?\s*(https?:)?//)|(@import)`)

// CheckViewFilesIn checks every view's document under root: it exists, is an HTML5 document,
// and references nothing outside itself. Problems are reported like spec diagnostics.
func (m *Model) CheckViewFilesIn(root string) error {
	var errs []error
	for _, v := range m.Views() {
		where := fmt.Sprintf("%s:%d", m.SpecPath, v.FileLine)
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(v.File)))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: view %q: cannot read %s: %v; write the document there", where, v.ID, v.File, err))
			continue
		}
		if !bytes.HasPrefix(bytes.ToLower(bytes.TrimSpace(b)), []byte("<!doctype html>")) {
			errs = append(errs, fmt.Errorf("%s: view %q: %s does not start with <!doctype html>; a view is a complete HTML5 document", where, v.ID, v.File))
		}
		if loc := externalRef.FindIndex(b); loc != nil {
			line := bytes.Count(b[:loc[0]], []byte("\n")) + 1
			errs = append(errs, fmt.Errorf("%s:%d: view %q loads %q from outside the document; inline it (hosts deny every origin by default)", v.File, line, v.ID, b[loc[0]:loc[1]]))
		}
	}
	return errors.Join(errs...)
}

// viewFiles are the views' generated files: the registry with the embedded documents and the
// docs page; none when the spec declares no views.
func viewFiles(m *Model) ([]File, error) {
	if len(m.Views()) == 0 {
		return nil, nil
	}
	reg, err := goFile(m, ViewsPackage+"/views_gen.go", viewsTmpl)
	if err != nil {
		return nil, err
	}
	doc, err := textFile(m, "docs/views.md", viewsDocTmpl)
	if err != nil {
		return nil, err
	}
	return []File{reg, doc}, nil
}

const viewsTmpl = genHeader + `
// Package views holds the MCP Apps views (io.modelcontextprotocol/ui) of the spec's views:
// section: the hand-written HTML documents of this directory, embedded, and their registry.
package views

import (
	_ "embed"

	"github.com/neemias/neemias-mcp/internal/capability"
)
{{range .Views}}
// {{lowerFirst .GoName}}HTML is {{.File}}.
//
//go:embed {{.Base}}
var {{lowerFirst .GoName}}HTML string
{{end}}
// All returns every view in spec order; each call returns fresh slices.
func All() []capability.View {
	return []capability.View{
{{- range .Views}}
		{
			ID:           {{quote .ID}},
			URI:          {{quote .URI}},
			Title:        {{quote .Title}},
			Description:  {{quote .Description}},
			HTML:         withBridge({{lowerFirst .GoName}}HTML), // the bridge inlined at <!-- neemias:app-bridge -->
			Capabilities: []string{ {{- range .Capabilities}}{{quote .}}, {{end -}} },
			Visibility:   []string{ {{- range .Visibility}}{{quote .}}, {{end -}} },
			CSP: capability.ViewCSP{
				ConnectDomains:  []string{ {{- range .CSP.ConnectDomains}}{{quote .}}, {{end -}} },
				ResourceDomains: []string{ {{- range .CSP.ResourceDomains}}{{quote .}}, {{end -}} },
				FrameDomains:    []string{ {{- range .CSP.FrameDomains}}{{quote .}}, {{end -}} },
				BaseURIDomains:  []string{ {{- range .CSP.BaseURIDomains}}{{quote .}}, {{end -}} },
			},
{{- if .AppTools}}
			AppTools: []capability.AppTool{
{{- range .AppTools}}
				{Name: {{quote .Name}}, Tool: {{quote .Tool}}, Title: {{quote .Title}}, Description: {{quote .Description}}},
{{- end}}
			},
{{- end}}
			Source: {{quote (printf "%s views.%s" $.SpecPath .ID)}},
		},
{{- end}}
	}
}
`

const viewsDocTmpl = `<!-- Code generated by capgen. DO NOT EDIT. -->
<!-- Source: {{.SpecPath}} -->

# Views (MCP Apps)

The server declares the MCP Apps extension ` + "`io.modelcontextprotocol/ui`" + ` in ` + "`initialize`" + ` and
` + "`server/discover`" + `. Each view is a ` + "`ui://`" + ` resource (MIME type ` + "`text/html;profile=mcp-app`" + `), one
self-contained HTML document embedded in the binary. Linked tools carry ` + "`_meta.ui`" + `
(` + "`resourceUri`" + `, ` + "`visibility`" + `), and views are listed and readable (a read otherwise answers as
for an unknown resource, with the era's code), only when the client declared the
extension with that MIME type: per request in 2026-07-28 (` + "`_meta[\"io.modelcontextprotocol/clientCapabilities\"]`" + `),
in ` + "`initialize`" + ` in the 2025 era. The server being stateless, a 2025-era ` + "`initialize`" + ` declaring
the extension gets an ` + "`Mcp-Session-Id`" + ` header (` + "`neemias-ui1-`" + ` and 32 hex digits, random, stored
nowhere) that the client echoes on later requests; a legacy request carrying such an id counts
as having declared the extension. The id only remembers that declaration: it holds no secret,
grants nothing, and is ignored in 2026-07-28; no other response carries a session id, and
DELETE answers 405 (the server does not let clients terminate sessions). A view is listed to a
caller who can reach at least one of its linked capabilities.

Both variants of ` + "`tools/list`" + ` and ` + "`resources/list`" + ` are ` + "`cacheScope: \"private\"`" + `: the spec's only scopes are
` + "`public`" + ` and ` + "`private`" + ` (who may share an entry, not what it varies with), and the lists follow the
token's scopes. What keeps one variant from being served to the other is the spec's cache key
(method and result-affecting params): the declaration travels in the request's params. Each
result also names its variant in ` + "`_meta[\"neemias/cacheVariant\"]`" + ` (` + "`mcp-apps`" + ` or ` + "`core`" + `), in both
eras, for caches keyed on method and cursor only and for the 2025 era, where the UI session id
is a header. HTTP responses are ` + "`Cache-Control: no-store`" + `.

The views speak the MCP Apps bridge (protocol ` + "`2026-01-26`" + `) through ` + "`internal/views/app-bridge.js`" + `, the
App side of the official ` + "`App`" + ` class of ` + "`@modelcontextprotocol/ext-apps`" + ` that the views use, with its names and
its messages (the official class bundles to 340 KB with the MCP SDK and zod, over the 150 KB a view
document may weigh); it is inlined where a document says ` + "`<!-- neemias:app-bridge -->`" + `, and tested against the
official host side (` + "`AppBridge`" + `) in Chromium, so each served
document stays self-contained. Views follow the host's ` + "`hostContext`" + ` (` + "`theme`" + `, ` + "`styles.variables`" + `,
` + "`locale`" + `, ` + "`timeZone`" + `, from ` + "`ui/initialize`" + ` and ` + "`ui/notifications/host-context-changed`" + `); the check-in sheet
says which time zone its times are in (the data's if it carries one, else the host's, else the
device's).

A view may have app-only tools (` + "`app_tools`" + `): each runs a declared tool, the same capability
(scope, row filters, validation, redaction, audit, business rules), under a name of its own
whose ` + "`_meta.ui`" + ` says ` + "`visibility: [\"app\"]`" + `, so a host lets the view call it and never shows it to
the model. It is listed only to a client that declared the extension (as above); for any other,
it is not listed and a ` + "`tools/call`" + ` of it is refused (-32602, audited as a refused call of the
tool it runs).

| View | URI | Document | Linked to | Visibility | CSP |
|------|-----|----------|-----------|------------|-----|
{{- range .Views}}
| {{.Title}} (` + "`{{.ID}}`" + `) | ` + "`{{.URI}}`" + ` | ` + "`{{.File}}`" + ` | {{range $i, $c := .Capabilities}}{{if $i}}, {{end}}` + "`{{$c}}`" + `{{end}} | {{join .Visibility ", "}} | {{if or .CSP.ConnectDomains .CSP.ResourceDomains .CSP.FrameDomains .CSP.BaseURIDomains}}{{join .CSP.ConnectDomains " "}} {{join .CSP.ResourceDomains " "}} {{join .CSP.FrameDomains " "}} {{join .CSP.BaseURIDomains " "}}{{else}}none (host default){{end}} |
{{- end}}

{{range .Views}}
## {{.Title}}

{{.Description}} Declared in {{$.SpecPath}} under ` + "`views.{{.ID}}`" + `.
{{if .AppTools}}
| App-only tool | Runs | Title | What the view does with it |
|---------------|------|-------|----------------------------|
{{- range .AppTools}}
| ` + "`{{.Name}}`" + ` | ` + "`{{.Tool}}`" + ` | {{.Title}} | {{.Description}} |
{{- end}}
{{end}}{{end}}`
