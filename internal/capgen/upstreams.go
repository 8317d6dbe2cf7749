package capgen

import (
	"strings"

	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/capgen/spec"
)

// UpstreamTool is one tool of an allowlisted upstream, as the emitters need it.
type UpstreamTool struct {
	capability.UpstreamTool
}

// UpstreamTools returns the upstream tools the spec declares, upstream by upstream in file
// order, each upstream's tools in file order.
func (m *Model) UpstreamTools() []UpstreamTool { return m.upstreams }

func newUpstreamTools(s *spec.Spec, specPath string) []UpstreamTool {
	var out []UpstreamTool
	for _, u := range s.Upstreams {
		req, resp := u.Value.Modes()
		for _, t := range u.Value.Tools {
			path := "upstreams." + u.Name + ".tools." + t.Name
			out = append(out, UpstreamTool{
				UpstreamTool: capability.UpstreamTool{
					Name:        u.Value.WireName(t.Name),
					Upstream:    u.Name,
					Tool:        t.Name,
					Title:       t.Value.Title,
					Description: strings.Join(strings.Fields(t.Value.Description), " "),
					Scope:       t.Value.Scope,
					PIIRequest:  req,
					PIIResponse: resp,
					Source:      specPath + " " + path,
				},
			})
		}
	}
	return out
}

// upstreamsTmpl is gen/capapi/upstreams_gen.go: the registrations of the upstream tools.
const upstreamsTmpl = genHeader + `
package capapi

import "github.com/neemias/neemias-mcp/internal/capability"

// upstreamTools are the tools of allowlisted upstream MCP servers the spec exposes as Neemias
// tools (spec upstreams). They are listed only when upstreams are on (--upstreams) and the
// upstream has a URL; callers get copies.
var upstreamTools = [...]capability.UpstreamTool{
{{- range .UpstreamTools}}
	{
		Name:        {{quote .Name}},
		Upstream:    {{quote .Upstream}},
		Tool:        {{quote .Tool}},
		Title:       {{quote .Title}},
		Description: {{quote .Description}},
		Scope:       {{quote .Scope}},
		PIIRequest:  {{quote .PIIRequest}},
		PIIResponse: {{quote .PIIResponse}},
		Source:      {{quote .Source}},
	},
{{- end}}
}

// UpstreamTools returns the spec's upstream tools, in spec order.
func UpstreamTools() []capability.UpstreamTool {
	return append([]capability.UpstreamTool(nil), upstreamTools[:]...)
}
`

// piiModeWords describes an upstream's personal-data mode for the inspect report.
func piiModeWords(mode, enforced string) string {
	if mode == "redact" {
		return "`redact`: the values found are replaced"
	}
	return "`enforce`: a finding is " + enforced
}
