package spec

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"text/template/parse"

	"github.com/neemias/neemias-mcp/internal/capability"
)

// View is an MCP Apps view (io.modelcontextprotocol/ui): a ui:// resource holding one
// self-contained HTML document, linked to the tools whose results it renders.
type View struct {
	URI          string       `yaml:"uri" jsonschema:"required" jsonschema_description:"The view's URI: ui:// then a lower-case path, such as ui://neemias/attendance-chart."`
	Title        string       `yaml:"title" jsonschema:"required" jsonschema_description:"Short human-readable title."`
	Description  string       `yaml:"description" jsonschema:"required" jsonschema_description:"What the view shows."`
	File         string       `yaml:"file" jsonschema:"required" jsonschema_description:"The hand-written HTML document, internal/views/<name>.html, embedded in the binary: self-contained (inline CSS and JS, nothing fetched)."`
	Capabilities []string     `yaml:"capabilities" jsonschema:"required" jsonschema_description:"The capabilities whose tools link to the view (_meta.ui.resourceUri): a resource id (its read tool) or a tool name."`
	Visibility   []string     `yaml:"visibility" jsonschema_description:"Who may call the linked tools (_meta.ui.visibility): model, app; default both. It must include model (the view opens on a linked tool's result); the view's own app-only actions are app_tools."`
	CSP          *ViewCSP     `yaml:"csp" jsonschema_description:"Origins the view may reach; absent means the host's deny-all default (none)."`
	AppTools     Map[AppTool] `yaml:"app_tools" jsonschema_description:"App-only tools of the view (_meta.ui.visibility [app]), by wire name (snake_case, starting with server.tool_prefix): each runs a declared tool (same scope, row filters, validation, redaction, audit and business rules) under a name the model is never shown; listed and callable only for clients that declared the MCP Apps extension."`
}

// AppTool is an app-only tool of a view: a declared tool under another name, for the view's
// own buttons (a host lets the view call it; the model never sees it).
type AppTool struct {
	Tool        string `yaml:"tool" jsonschema:"required" jsonschema_description:"The declared tool (under tools:) it runs: the same handler, scope, row filters, schemas, redaction and audit."`
	Title       string `yaml:"title" jsonschema:"required" jsonschema_description:"Short human-readable title."`
	Description string `yaml:"description" jsonschema:"required" jsonschema_description:"What the view does with it."`
}

// ViewCSP is _meta.ui.csp: origins (https://host[:port], or https://*.host) by kind.
type ViewCSP struct {
	ConnectDomains  []string `yaml:"connect_domains" jsonschema_description:"Origins fetch and WebSocket may reach (connect-src)."`
	ResourceDomains []string `yaml:"resource_domains" jsonschema_description:"Origins scripts, styles, images and fonts may load from."`
	FrameDomains    []string `yaml:"frame_domains" jsonschema_description:"Origins nested iframes may load (frame-src)."`
	BaseURIDomains  []string `yaml:"base_uri_domains" jsonschema_description:"Origins allowed as the document's base URI (base-uri)."`
}

var (
	viewURI       = regexp.MustCompile(`^ui://[a-z0-9]+(-[a-z0-9]+)*(/[a-z0-9]+(-[a-z0-9]+)*)+$`)
	viewFile      = regexp.MustCompile(`^internal/views/[a-z0-9]+(-[a-z0-9]+)*\.html$`)
	cspOrigin     = regexp.MustCompile(`^https://(\*\.)?[a-z0-9]+([.-][a-z0-9]+)*(:[0-9]{1,5})?$`)
	visibilities  = []string{"model", "app"}
	summaryFields = "len, distinct and plural"
)

// views validates the views: section.
func (v *validator) views() {
	uris := map[string]string{}
	files := map[string]string{}
	linked := map[string]string{} // capability id → view id
	var caps []string
	wire := v.toolNames()
	caps = append(caps, v.s.Resources.Names()...)
	caps = append(caps, v.s.Tools.Names()...)
	for _, e := range v.s.Views {
		p, name, vw := join("views", e.Name), e.Name, e.Value
		if !snakeName.MatchString(name) {
			v.errorf(v.keyAt(p), "use lower-case snake_case such as attendance_chart", "view id %q is not snake_case", name)
		}
		if v.require(p+".uri", vw.URI, "uri: ui://…, such as ui://neemias/attendance-chart") {
			switch {
			case !viewURI.MatchString(vw.URI):
				v.errorf(v.at(p+".uri"), "write ui:// then a lower-case path, such as ui://neemias/attendance-chart", "view %q: uri %q is not a ui:// URI", name, vw.URI)
			case uris[vw.URI] != "":
				v.errorf(v.at(p+".uri"), "give each view its own URI", "view %q has the same URI as %q", name, uris[vw.URI])
			default:
				uris[vw.URI] = name
			}
		}
		v.require(p+".title", vw.Title, "a short title")
		v.require(p+".description", vw.Description, "what the view shows")
		if v.require(p+".file", vw.File, "file: internal/views/<name>.html") {
			switch {
			case !viewFile.MatchString(vw.File):
				v.errorf(v.at(p+".file"), "put the document in internal/views/, named in lower-case kebab-case such as internal/views/attendance-chart.html", "view %q: file %q is not internal/views/<name>.html", name, vw.File)
			case files[vw.File] != "":
				v.errorf(v.at(p+".file"), "give each view its own document", "view %q has the same file as %q", name, files[vw.File])
			default:
				files[vw.File] = name
			}
		}
		if len(vw.Capabilities) == 0 && !v.isBad(p+".capabilities") {
			v.errorf(v.pos.missingAt(p+".capabilities"), "add capabilities: [a resource id or tool name], the tools whose results it renders", "view %q links no capabilities", name)
		}
		for i, c := range vw.Capabilities {
			cp := fmt.Sprintf("%s.capabilities[%d]", p, i)
			switch {
			case !slices.Contains(caps, c):
				v.errorf(v.at(cp), "name a resource id or a tool name", "view %q: capability %q is not declared%s", name, c, v.didYouMean(c, caps))
			case linked[c] != "":
				v.errorf(v.at(cp), "link a tool to one view only (a tool has one _meta.ui.resourceUri)", "view %q: capability %q is already linked to view %q", name, c, linked[c])
			default:
				linked[c] = name
			}
		}
		if v.pos.present(p+".visibility") && len(vw.Visibility) == 0 && !v.isBad(p+".visibility") {
			v.errorf(v.at(p+".visibility"), "list model, app or both, or remove it (default: both)", "view %q: visibility is empty", name)
		}
		for i, vis := range vw.Visibility {
			switch {
			case !slices.Contains(visibilities, vis):
				v.errorf(v.at(fmt.Sprintf("%s.visibility[%d]", p, i)), "use model or app", "view %q: visibility %q is not model or app%s", name, vis, v.didYouMean(vis, visibilities))
			case slices.Index(vw.Visibility, vis) < i:
				v.errorf(v.at(fmt.Sprintf("%s.visibility[%d]", p, i)), "list it once", "view %q: visibility lists %q twice", name, vis)
			}
		}
		// The linked capabilities are the model's tools: the view opens on the result of one, and
		// clients without MCP Apps list and call them as any tool. [app] alone (hidden from the
		// model) cannot be honoured for them; the view's own actions are app_tools.
		unknown := func(vis string) bool { return !slices.Contains(visibilities, vis) }
		if len(vw.Visibility) > 0 && !slices.Contains(vw.Visibility, "model") && !slices.ContainsFunc(vw.Visibility, unknown) && !v.isBad(p+".visibility") {
			v.errorf(v.at(p+".visibility"), "keep model (visibility: [model, app], the default, or [model] to keep the view from calling them); declare the view's own actions under app_tools, which are app-only",
				"view %q: visibility %v would hide its linked capabilities from the model, which the server cannot honour: the view is shown for their results, and clients without MCP Apps list them as tools", name, vw.Visibility)
		}
		v.appTools(p, name, vw, wire)
		if vw.CSP != nil {
			for _, d := range []struct {
				key  string
				list []string
			}{{"connect_domains", vw.CSP.ConnectDomains}, {"resource_domains", vw.CSP.ResourceDomains}, {"frame_domains", vw.CSP.FrameDomains}, {"base_uri_domains", vw.CSP.BaseURIDomains}} {
				for i, o := range d.list {
					if !cspOrigin.MatchString(o) {
						v.errorf(v.at(fmt.Sprintf("%s.csp.%s[%d]", p, d.key, i)), "write an https origin such as https://api.example.com or https://*.example.com, without a path", "view %q: %q is not an https origin", name, o)
					}
				}
			}
		}
	}
}

// toolNames maps every tool name the server lists (tools, resources' read tools, upstream
// tools) to what has it.
func (v *validator) toolNames() map[string]string {
	wire := map[string]string{}
	for _, e := range v.s.Tools {
		wire[e.Name] = fmt.Sprintf("tool %q", e.Name)
	}
	for _, e := range v.s.Resources {
		wire[v.s.Server.ToolPrefix+e.Name] = fmt.Sprintf("the read tool of resource %q", e.Name)
	}
	for _, u := range v.s.Upstreams {
		if u.Value.Prefix != "" {
			for _, t := range u.Value.Tools {
				wire[u.Value.WireName(t.Name)] = fmt.Sprintf("upstream tool %q", u.Name+"."+t.Name)
			}
		}
	}
	return wire
}

// appTools validates the app_tools of view name (at path p); wire holds the tool names taken
// so far and gets the app tools'.
func (v *validator) appTools(p, name string, vw View, wire map[string]string) {
	ap := p + ".app_tools"
	if v.pos.present(ap) && len(vw.AppTools) == 0 && !v.isBad(ap) {
		v.errorf(v.at(ap), "list the view's app-only tools by name, or remove app_tools", "view %q: app_tools is empty", name)
	}
	pre := v.s.Server.ToolPrefix
	for _, e := range vw.AppTools {
		tp, tn, at := join(ap, e.Name), e.Name, e.Value
		switch {
		case !snakeName.MatchString(tn) || pre != "" && !strings.HasPrefix(tn, pre):
			v.errorf(v.keyAt(tp), fmt.Sprintf("name it like the other tools, %s<view>_<action> in snake_case", pre), "view %q: app tool %q is not a snake_case name starting with server.tool_prefix %q", name, tn, pre)
		case len(tn) > 128:
			v.errorf(v.keyAt(tp), "shorten it", "view %q: app tool %q is %d characters long (MCP allows at most 128)", name, tn, len(tn))
		case wire[tn] != "":
			v.errorf(v.keyAt(tp), "give the app tool a name of its own", "view %q: app tool %q has the name of %s", name, tn, wire[tn])
		default:
			wire[tn] = fmt.Sprintf("app tool %q of view %q", tn, name)
		}
		if v.require(tp+".tool", at.Tool, "tool: the declared tool it runs, such as "+firstOr(v.s.Tools.Names(), pre+"thing_update")) {
			if _, ok := v.s.Tools.Get(at.Tool); !ok {
				what := "not a declared tool"
				if _, isRes := v.s.Resources.Get(at.Tool); isRes {
					what = "a resource, not a tool"
				}
				v.errorf(v.at(tp+".tool"), "name a tool declared under tools: (the app tool runs it, under the same scope and rules)", "view %q: app tool %q runs %q, which is %s%s", name, tn, at.Tool, what, v.didYouMean(at.Tool, v.s.Tools.Names()))
			}
		}
		v.require(tp+".title", at.Title, "a short title")
		v.require(tp+".description", at.Description, "what the view does with it")
	}
}

func firstOr(names []string, def string) string {
	if len(names) > 0 {
		return names[0]
	}
	return def
}

// summary validates capability name's summary: template. It may print required output fields
// (optional ones only inside {{if .field}}), call len and distinct, and never names personal
// data: the sentence is for the model and must not need redaction of its own.
func (v *validator) summary(p, name string, c Capability) {
	if c.Summary == "" || v.isBad(p+".summary") {
		return
	}
	sp := p + ".summary"
	pos := v.at(sp)
	if strings.TrimSpace(c.Summary) == "" {
		v.errorf(pos, "write a sentence or remove summary", "%s is empty", sp)
		return
	}
	t, err := capability.ParseSummary(c.Summary)
	if err != nil {
		v.errorf(pos, "write a Go text/template such as {{len .checkins}} check-ins on {{.date}}", "capability %q: summary does not parse: %s", name, strings.TrimPrefix(err.Error(), "template: summary:"))
		return
	}
	sv := &summaryCheck{v: v, name: name, src: c.Summary, pos: pos, out: c.Output, guarded: map[string]bool{}}
	sv.list(t.Tree.Root)
}

type summaryCheck struct {
	v       *validator
	name    string
	src     string
	pos     Pos
	out     Map[Field]
	guarded map[string]bool // optional fields tested by an enclosing {{if}}
}

func (s *summaryCheck) errorf(n parse.Node, hint, format string, args ...any) {
	at := s.v.within(s.pos, s.src, int(n.Position()))
	s.v.errorf(at, hint, "capability %q: summary: "+format, append([]any{s.name}, args...)...)
}

func (s *summaryCheck) list(l *parse.ListNode) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		switch n := n.(type) {
		case *parse.TextNode, *parse.CommentNode:
		case *parse.ActionNode:
			s.pipe(n.Pipe, false)
		case *parse.IfNode:
			guard := s.pipe(n.Pipe, true)
			if guard != "" && !s.guarded[guard] {
				s.guarded[guard] = true
				s.list(n.List)
				delete(s.guarded, guard)
			} else {
				s.list(n.List)
			}
			s.list(n.ElseList)
		default:
			s.errorf(n, "use only {{.field}}, {{len .list}}, {{distinct .list \"field\"}} and {{if .field}}…{{end}}", "%s is not allowed", n)
		}
	}
}

// pipe checks one pipeline; in an if condition a lone optional field is allowed, and its name
// is returned so the body may print it.
func (s *summaryCheck) pipe(p *parse.PipeNode, cond bool) string {
	if len(p.Decl) > 0 || len(p.Cmds) != 1 {
		s.errorf(p, "use one field or one function call per action", "%q is not allowed", p.String())
		return ""
	}
	cmd := p.Cmds[0]
	switch first := cmd.Args[0].(type) {
	case *parse.FieldNode:
		if len(cmd.Args) != 1 {
			s.errorf(first, "a field takes no arguments", "%q is not allowed", cmd.String())
			return ""
		}
		f, ok := s.field(first, cond)
		if ok && cond && !f.Required {
			return strings.Join(first.Ident, ".")
		}
		if ok && f.Type == "array" || ok && f.Type == "object" {
			if !cond {
				s.errorf(first, "print len ."+strings.Join(first.Ident, ".")+" or one of its members", "%s is a %s, not a value", first, f.Type)
			}
		}
	case *parse.IdentifierNode:
		switch first.Ident {
		case "len":
			if len(cmd.Args) != 2 {
				s.errorf(first, "write {{len .list}}", "len takes one list")
				return ""
			}
			s.listArg(cmd.Args[1])
		case "distinct":
			if len(cmd.Args) != 3 {
				s.errorf(first, `write {{distinct .list "field"}}`, "distinct takes a list and a field name")
				return ""
			}
			item := s.listArg(cmd.Args[1])
			str, ok := cmd.Args[2].(*parse.StringNode)
			if !ok {
				s.errorf(cmd.Args[2], `name the member as a string, such as "class_id"`, "distinct's second argument is not a string")
				return ""
			}
			if item == nil {
				return ""
			}
			f, found := item.Fields.Get(str.Text)
			switch {
			case !found:
				s.errorf(str, "name a member of the list's items", "the list's items have no field %q%s", str.Text, s.v.didYouMean(str.Text, item.Fields.Names()))
			case f.PII != nil:
				s.errorf(str, "summaries never name personal data; count another field", "field %q is personal data (%s)", str.Text, f.PII.Category)
			}
		case "plural":
			s.plural(cmd)
		default:
			s.errorf(first, "use "+summaryFields, "function %q is not allowed", first.Ident)
		}
	default:
		s.errorf(first, "use only {{.field}}, {{len .list}}, {{distinct .list \"field\"}} and {{if .field}}…{{end}}", "%q is not allowed", cmd.String())
	}
	return ""
}

// plural checks {{plural COUNT "one" "many"}}: COUNT a number or integer field, or (len …) or
// (distinct …); the nouns strings.
func (s *summaryCheck) plural(cmd *parse.CommandNode) {
	const hint = `write {{plural .count "class" "classes"}} or {{plural (len .list) "check-in" "check-ins"}}`
	if len(cmd.Args) != 4 {
		s.errorf(cmd.Args[0], hint, "plural takes a count and two nouns")
		return
	}
	switch n := cmd.Args[1].(type) {
	case *parse.FieldNode:
		if f, ok := s.field(n, false); ok && f.Type != "integer" && f.Type != "number" {
			s.errorf(n, hint, "%s is a %s, not a count", n, f.Type)
		}
	case *parse.PipeNode:
		if c := n.Cmds; len(n.Decl) > 0 || len(c) != 1 || !isIdent(c[0].Args[0], "len", "distinct") {
			s.errorf(n, hint, "%s is not a count", n)
			return
		}
		s.pipe(n, false)
	default:
		s.errorf(n, hint, "%s is not a count", n)
	}
	for _, a := range cmd.Args[2:] {
		if _, ok := a.(*parse.StringNode); !ok {
			s.errorf(a, hint, "plural's nouns are strings; %s is not", a)
		}
	}
}

// isIdent reports whether n is the identifier of one of names.
func isIdent(n parse.Node, names ...string) bool {
	id, ok := n.(*parse.IdentifierNode)
	return ok && slices.Contains(names, id.Ident)
}

// listArg checks that n is a field holding a list of objects and returns the item type.
func (s *summaryCheck) listArg(n parse.Node) *Field {
	fn, ok := n.(*parse.FieldNode)
	if !ok {
		s.errorf(n, "pass a list field such as .checkins", "%s is not a field", n)
		return nil
	}
	f, ok := s.field(fn, false)
	if !ok {
		return nil
	}
	if f.Type != "array" {
		s.errorf(fn, "pass a list field", "%s is a %s, not a list", fn, f.Type)
		return nil
	}
	if f.Items == nil || f.Items.Type != "object" {
		return &Field{Type: "array"}
	}
	return f.Items
}

// field resolves a field chain (.a.b) in the output; it must exist, hold no personal data, and
// be required (or tested by an enclosing if, or be the if's condition itself).
func (s *summaryCheck) field(fn *parse.FieldNode, cond bool) (Field, bool) {
	fields := s.out
	var f Field
	for i, id := range fn.Ident {
		got, ok := fields.Get(id)
		if !ok {
			s.errorf(fn, "name an output field by its JSON name", "the output has no field %q%s", strings.Join(fn.Ident[:i+1], "."), s.v.didYouMean(id, fields.Names()))
			return Field{}, false
		}
		f = got
		if f.PII != nil && f.PII.Otherwise == "" {
			s.errorf(fn, "summaries never name personal data; leave it out", "field %q is personal data (%s)", strings.Join(fn.Ident[:i+1], "."), f.PII.Category)
			return Field{}, false
		}
		if !f.Required && !cond && !s.guarded[strings.Join(fn.Ident[:i+1], ".")] {
			s.errorf(fn, "print it inside {{if ."+strings.Join(fn.Ident[:i+1], ".")+"}}…{{end}}", "field %q is optional", strings.Join(fn.Ident[:i+1], "."))
			return Field{}, false
		}
		if i < len(fn.Ident)-1 {
			if f.Type != "object" {
				s.errorf(fn, "only objects have members", "field %q is a %s", strings.Join(fn.Ident[:i+1], "."), f.Type)
				return Field{}, false
			}
			fields = f.Fields
		}
	}
	return f, true
}
