package spec

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Upstream is an allowlisted upstream MCP server (issue 11): which of its tools become
// Neemias capabilities, the scope each needs, the prefix of their names and the PII policy.
// Where it is (its URL), its credentials and whether upstreams are on at all are runtime
// configuration (--upstreams, --upstream id=URL, --upstream-token-file), never in the spec.
type Upstream struct {
	Description string        `yaml:"description" jsonschema:"required" jsonschema_description:"What the upstream is and why agents may call it."`
	Prefix      string        `yaml:"prefix" jsonschema:"required" jsonschema_description:"Prefix of the Neemias tool names of its tools (starting with server.tool_prefix, ending in _): the tool echo of prefix neemias_docs_ is listed as neemias_docs_echo."`
	PII         *UpstreamPII  `yaml:"pii" jsonschema_description:"What to do with personal data found in requests and responses; default enforce both ways."`
	Tools       UpstreamTools `yaml:"tools" jsonschema:"required" jsonschema_description:"The upstream's tools that become Neemias capabilities, by their upstream name: an explicit list, never all."`
}

// UpstreamTool is one tool of an upstream exposed as a Neemias capability. Its input schema
// and annotations are the upstream's own (tools/list), read at runtime.
type UpstreamTool struct {
	Title       string `yaml:"title" jsonschema:"required" jsonschema_description:"Short human-readable title."`
	Description string `yaml:"description" jsonschema:"required" jsonschema_description:"What it does and when an agent should use it (Neemias's wording; the upstream's is not trusted)."`
	Scope       string `yaml:"scope" jsonschema:"required" jsonschema_description:"The Neemias scope a caller needs."`
}

// UpstreamPII is an upstream's personal-data policy, per direction.
type UpstreamPII struct {
	Request  string `yaml:"request" jsonschema:"enum=enforce,enum=redact" jsonschema_description:"Arguments sent: enforce (default) refuses the call before it is sent; redact replaces the values found."`
	Response string `yaml:"response" jsonschema:"enum=enforce,enum=redact" jsonschema_description:"Results received: enforce (default) drops the response; redact replaces the values found."`
}

// PII modes of an upstream.
const (
	PIIEnforce = "enforce"
	PIIRedact  = "redact"
)

var piiModes = []string{PIIEnforce, PIIRedact}

// Modes returns the request and response modes, enforce where unset.
func (u Upstream) Modes() (request, response string) {
	request, response = PIIEnforce, PIIEnforce
	if u.PII != nil {
		if u.PII.Request != "" {
			request = u.PII.Request
		}
		if u.PII.Response != "" {
			response = u.PII.Response
		}
	}
	return request, response
}

// UpstreamTools is an upstream's tools, by upstream tool name, in file order.
type UpstreamTools Map[UpstreamTool]

// JSONSchemaAlias describes it as the mapping it is in YAML.
func (UpstreamTools) JSONSchemaAlias() any { return map[string]UpstreamTool(nil) }

// Get returns the tool named name.
func (m UpstreamTools) Get(name string) (UpstreamTool, bool) { return Map[UpstreamTool](m).Get(name) }

// Names returns the tool names in file order.
func (m UpstreamTools) Names() []string { return Map[UpstreamTool](m).Names() }

func (m *UpstreamTools) decodeEntries(d *decoder, n *yaml.Node, path string) {
	(*Map[UpstreamTool])(m).decodeEntries(d, n, path)
}

// refuseShape is the precise diagnostic for tools written as something other than a mapping:
// "all" (or "*") and lists are refused by name.
func (*UpstreamTools) refuseShape(n *yaml.Node) (msg, hint string) {
	const list = "list each tool by its upstream name as a mapping, for example tools: {echo: {title: …, description: …, scope: …}}"
	switch {
	case n.Kind == yaml.ScalarNode && (strings.EqualFold(n.Value, "all") || n.Value == "*"):
		return fmt.Sprintf("is %q: an upstream's tools are allowlisted one by one, never all", n.Value), list
	case n.Kind == yaml.SequenceNode && len(n.Content) == 0:
		return "is an empty list: the upstream would expose no tool", list + ", or remove the upstream"
	case n.Kind == yaml.SequenceNode:
		return "must be a mapping of tool name to its title, description and scope, got a list", list
	}
	return "", ""
}

// shapeRefuser is a value type with its own diagnostic for YAML of the wrong kind.
type shapeRefuser interface {
	refuseShape(n *yaml.Node) (msg, hint string)
}

// refuseKey is the precise diagnostic for keys an upstream must not have: what belongs to
// runtime configuration, and stdio servers.
func (*Upstream) refuseKey(key string) (msg, hint string) {
	switch key {
	case "command", "args", "env", "cwd":
		return "stdio upstream servers are not supported (Neemias calls upstreams over Streamable HTTP only)",
			"remove it; run the server behind Streamable HTTP and give its URL at runtime (--upstream id=URL)"
	case "url", "endpoint", "transport":
		return "an upstream's address is runtime configuration, never in the spec",
			"remove it; give the URL at runtime (--upstream id=URL or NEEMIAS_UPSTREAM)"
	case "token", "token_file", "headers", "credentials", "auth":
		return "an upstream's credentials are runtime configuration, never in the spec",
			"remove it; give a token file at runtime (--upstream-token-file id=path)"
	}
	return "", ""
}

// keyRefuser is a struct with its own diagnostic for some unknown keys.
type keyRefuser interface {
	refuseKey(key string) (msg, hint string)
}

// upstreamToolName is what an upstream's tool may be called: MCP's tool-name characters.
var upstreamToolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// WireName is the Neemias tool name of tool of an upstream.
func (u Upstream) WireName(tool string) string { return u.Prefix + tool }

func (v *validator) upstreams() {
	wire := map[string]string{} // Neemias tool name → what has it
	for _, e := range v.s.Tools {
		wire[e.Name] = fmt.Sprintf("tool %q", e.Name)
	}
	for _, e := range v.s.Resources {
		wire[e.Name] = fmt.Sprintf("resource %q", e.Name)
	}
	prefixes := map[string]string{}
	for _, e := range v.s.Upstreams {
		id, u := e.Name, e.Value
		p := join("upstreams", id)
		if !snakeName.MatchString(id) {
			v.errorf(v.keyAt(p), "use snake_case such as docs", "upstream id %q is not snake_case", id)
		}
		v.require(p+".description", u.Description, "what the upstream is and why agents may call it")
		pre := v.s.Server.ToolPrefix
		if v.require(p+".prefix", u.Prefix, fmt.Sprintf("prefix: %s%s_, the prefix of its tools' names", pre, id)) {
			switch {
			case !strings.HasSuffix(u.Prefix, "_") || !snakeName.MatchString(strings.TrimSuffix(u.Prefix, "_")):
				v.errorf(v.at(p+".prefix"), fmt.Sprintf("use snake_case ending in _, such as %s%s_", pre, id), "upstream %q: prefix %q is not snake_case ending in _", id, u.Prefix)
			case pre != "" && (!strings.HasPrefix(u.Prefix, pre) || u.Prefix == pre):
				v.errorf(v.at(p+".prefix"), fmt.Sprintf("use %s%s_", pre, id), "upstream %q: prefix %q does not start with server.tool_prefix %q and a name of its own", id, u.Prefix, pre)
			default:
				if first, dup := prefixes[u.Prefix]; dup {
					v.errorf(v.at(p+".prefix"), "give each upstream its own prefix", "upstream %q has the same prefix as upstream %q", id, first)
				}
				prefixes[u.Prefix] = id
			}
		}
		if u.PII != nil {
			for _, dir := range []string{"request", "response"} {
				mode := map[string]string{"request": u.PII.Request, "response": u.PII.Response}[dir]
				if mode != "" && !slices.Contains(piiModes, mode) && !v.isBad(p+".pii."+dir) {
					v.errorf(v.at(p+".pii."+dir), "use enforce (refuse) or redact (replace the values)", "upstream %q: pii.%s %q is not a PII mode%s", id, dir, mode, v.didYouMean(mode, piiModes))
				}
			}
		}
		tp := p + ".tools"
		if len(u.Tools) == 0 && !v.isBad(tp) {
			if v.pos.present(tp) {
				v.errorf(v.at(tp), "list each tool by its upstream name, or remove the upstream", "upstream %q lists no tools: it would expose nothing", id)
			} else {
				v.errorf(v.pos.missingAt(tp), "add tools: {name: {title: …, description: …, scope: …}}, the upstream tools to expose, one by one", "upstream %q has no tools", id)
			}
		}
		for _, t := range u.Tools {
			tn := join(tp, t.Name)
			switch {
			case strings.EqualFold(t.Name, "all") || strings.Contains(t.Name, "*"):
				v.errorf(v.keyAt(tn), "list each tool by its upstream name", "upstream %q: tool %q is not allowed: tools are allowlisted one by one, never all", id, t.Name)
				continue
			case !upstreamToolName.MatchString(t.Name):
				v.errorf(v.keyAt(tn), "use the upstream's tool name (A-Z a-z 0-9 _ - .)", "upstream %q: %q is not an MCP tool name", id, t.Name)
				continue
			}
			what := fmt.Sprintf("upstream tool %q", id+"."+t.Name)
			v.require(tn+".title", t.Value.Title, "a short title")
			v.require(tn+".description", t.Value.Description, "a description an agent can act on")
			v.scopeRef(tn+".scope", t.Value.Scope, "upstream tool", id+"."+t.Name, true)
			v.reachable(tn, id+"."+t.Name, t.Value.Scope, "upstream tool")
			if u.Prefix == "" {
				continue
			}
			name := u.WireName(t.Name)
			if len(name) > 128 {
				v.errorf(v.keyAt(tn), "shorten the prefix", "%s is listed as %q, %d characters long (MCP allows at most 128)", what, name, len(name))
			}
			if first, dup := wire[name]; dup {
				v.errorf(v.keyAt(tn), "change the upstream's prefix", "%s is listed as %q, the name of %s", what, name, first)
			}
			wire[name] = what
		}
	}
}
