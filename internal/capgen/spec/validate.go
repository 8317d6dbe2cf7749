package spec

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/yosida95/uritemplate/v3"
)

// Load reads, decodes and validates the spec at file. On any problem it returns Diagnostics
// (as the error) listing all of them in file order; it never panics on bad input.
func Load(file string) (*Spec, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading capability spec: %w", err)
	}
	return Parse(file, src)
}

// Parse is Load on bytes already read; file is used in diagnostics.
func Parse(file string, src []byte) (*Spec, error) {
	s, pos, diags := decodeFile(file, src)
	if s == nil {
		return nil, diags.sorted()
	}
	s.File, s.pos = file, pos
	v := &validator{decoder: decoder{file: file, pos: pos, diags: diags}, s: s}
	v.validate()
	if len(v.diags) > 0 {
		return nil, v.diags.sorted()
	}
	return s, nil
}

var (
	// MCP tool names: 1–128 characters of A-Z a-z 0-9 _ - . (spec 2025-11-25, "Tool names").
	mcpToolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
	// Our own ids must also map cleanly onto Go names.
	snakeName    = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	scopeName    = regexp.MustCompile(`^[a-z][a-z0-9_]*(:[a-z][a-z0-9_]*)?$`)
	roleName     = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	sqlIdent     = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
	registryName = regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`)
)

var (
	fieldTypes    = []string{"string", "integer", "number", "boolean", "array", "object"}
	fieldFormats  = []string{"uuid", "date", "date-time", "email", "uri"}
	piiCategories = []string{"child_name", "birth_date", "guardian_name", "guardian_phone", "secret"}
	whereOps      = []string{"=", "<", "<=", ">", ">="}
)

type validator struct {
	decoder
	s *Spec
}

func (v *validator) at(path string) Pos    { return v.pos.at(path) }
func (v *validator) keyAt(path string) Pos { return v.pos.keyAt(path) }

func (v *validator) validate() {
	s := v.s
	if s.Kind != Kind {
		v.errorf(v.at("kind"), "set kind: "+Kind, "kind is %q, want %q", s.Kind, Kind)
	}
	if s.SchemaVersion != SchemaVersion {
		v.errorf(v.at("schemaVersion"), fmt.Sprintf("set schemaVersion: %d, or use the generator that reads version %d", SchemaVersion, s.SchemaVersion),
			"schemaVersion %d is not supported", s.SchemaVersion)
	}
	v.server()
	v.scopes()
	v.rowFilters()
	v.roles()
	v.capabilities()
}

func (v *validator) require(path, value, what string) bool {
	if strings.TrimSpace(value) == "" {
		v.errorf(v.keyAt(path), "add "+what, "%s is missing", describeMissing(path))
		return false
	}
	return true
}

// describeMissing names the missing key for a message ("tools.x.description").
func describeMissing(path string) string { return path }

func (v *validator) server() {
	sv := v.s.Server
	v.require("server.name", sv.Name, "a reverse-DNS registry name such as io.github.owner/name")
	if sv.Name != "" && !registryName.MatchString(sv.Name) {
		v.errorf(v.at("server.name"), "use the form io.github.owner/name", "server.name %q is not a registry name", sv.Name)
	}
	v.require("server.title", sv.Title, "a human-readable title")
	if v.require("server.description", sv.Description, "a one-line description") && len([]rune(sv.Description)) > 100 {
		v.errorf(v.at("server.description"), "shorten it (the MCP Registry allows 100)", "server.description has %d characters", len([]rune(sv.Description)))
	}
	if v.require("server.version", sv.Version, "a semantic version such as 0.1.0") && !regexp.MustCompile(`^\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$`).MatchString(sv.Version) {
		v.errorf(v.at("server.version"), "use a semantic version such as 0.1.0", "server.version %q is not a semantic version", sv.Version)
	}
	if sv.ToolPrefix != "" && !snakeName.MatchString(strings.TrimSuffix(sv.ToolPrefix, "_")) {
		v.errorf(v.at("server.tool_prefix"), "use lower-case letters, digits and _ (for example neemias_)", "server.tool_prefix %q is not snake_case", sv.ToolPrefix)
	}
}

func (v *validator) scopes() {
	if len(v.s.Scopes) == 0 {
		v.errorf(v.keyAt("scopes"), "declare at least one scope", "the spec declares no scopes")
	}
	for _, e := range v.s.Scopes {
		p := join("scopes", e.Name)
		if !scopeName.MatchString(e.Name) {
			v.errorf(v.keyAt(p), "use resource:action in lower case, for example roster:read", "scope name %q is malformed", e.Name)
		}
		v.require(p+".description", e.Value.Description, "a description of what the scope grants")
		v.require(p+".en", e.Value.En, "the English consent-page wording")
		v.require(p+".pt", e.Value.Pt, "the Portuguese consent-page wording")
	}
}

func (v *validator) rowFilters() {
	roles := v.s.Roles.Names()
	for _, e := range v.s.RowFilters {
		p := join("row_filters", e.Name)
		if !snakeName.MatchString(e.Name) {
			v.errorf(v.keyAt(p), "use snake_case", "row filter name %q is not snake_case", e.Name)
		}
		v.require(p+".description", e.Value.Description, "a description of who sees what")
		v.require(p+".sql", e.Value.SQL, "a boolean SQL condition")
		if strings.Contains(e.Value.SQL, ";") {
			v.errorf(v.at(p+".sql"), "write a single boolean condition", "row filter %q: sql must not contain ';'", e.Name)
		}
		for i, r := range e.Value.Roles {
			if !slices.Contains(roles, r) {
				v.errorf(v.at(fmt.Sprintf("%s.roles[%d]", p, i)), "declare it under roles or fix the name",
					"row filter %q names unknown role %q%s", e.Name, r, didYouMean(r, roles))
			}
		}
	}
	if _, ok := v.s.RowFilters.Get("church"); !ok {
		v.errorf(v.keyAt("row_filters"), "declare row_filters.church (tenant isolation), applied to every capability", "the spec has no \"church\" row filter")
	}
}

func (v *validator) roles() {
	scopes := v.s.Scopes.Names()
	if len(v.s.Roles) == 0 {
		v.errorf(v.keyAt("roles"), "declare at least one role", "the spec declares no roles")
	}
	for _, e := range v.s.Roles {
		p := join("roles", e.Name)
		if !roleName.MatchString(e.Name) {
			v.errorf(v.keyAt(p), "use UPPER_CASE, for example ADMIN", "role name %q is not upper case", e.Name)
		}
		v.require(p+".description", e.Value.Description, "a description of who has this role")
		seen := map[string]bool{}
		for i, sc := range e.Value.Scopes {
			sp := fmt.Sprintf("%s.scopes[%d]", p, i)
			if !slices.Contains(scopes, sc) {
				v.errorf(v.at(sp), "declare it under scopes or fix the name", "role %q grants unknown scope %q%s", e.Name, sc, didYouMean(sc, scopes))
			}
			if seen[sc] {
				v.errorf(v.at(sp), "remove the repetition", "role %q grants scope %q twice", e.Name, sc)
			}
			seen[sc] = true
		}
	}
}

func (v *validator) capabilities() {
	if len(v.s.Resources)+len(v.s.Tools) == 0 {
		v.errorf(Pos{1, 1}, "declare resources or tools", "the spec declares no capabilities")
	}
	goNames := map[string]string{}
	uris := map[string]string{}
	for _, e := range v.s.Resources {
		p := join("resources", e.Name)
		v.capability(p, e.Name, e.Value, false)
		v.uniqueGoName(goNames, p, e.Name, GoName(e.Name, ""))
		if e.Value.URI != "" {
			norm := normalizeTemplate(e.Value.URI)
			if first, dup := uris[norm]; dup {
				v.errorf(v.at(p+".uri"), "give each resource its own URI", "resource %q has the same URI as %q", e.Name, first)
			}
			uris[norm] = e.Name
		}
	}
	for _, e := range v.s.Tools {
		p := join("tools", e.Name)
		if _, clash := v.s.Resources.Get(e.Name); clash {
			v.errorf(v.keyAt(p), "rename the tool or the resource", "tool %q has the same id as a resource", e.Name)
		}
		v.capability(p, e.Name, e.Value, true)
		v.uniqueGoName(goNames, p, e.Name, GoName(e.Name, v.s.Server.ToolPrefix))
	}
}

func (v *validator) uniqueGoName(seen map[string]string, path, name, goName string) {
	if first, dup := seen[goName]; dup {
		v.errorf(v.keyAt(path), "rename one of them", "%q and %q both map to the Go name %s", first, name, goName)
		return
	}
	seen[goName] = name
}

// normalizeTemplate replaces variable names so templates that differ only in names compare equal.
func normalizeTemplate(t string) string {
	return regexp.MustCompile(`\{[^}]*\}`).ReplaceAllString(t, "{}")
}

func (v *validator) capability(p, name string, c Capability, isTool bool) {
	what := "resource"
	if isTool {
		what = "tool"
	}
	if isTool {
		if !mcpToolName.MatchString(name) {
			v.errorf(v.keyAt(p), "use 1–128 characters of A-Z a-z 0-9 _ - . (MCP tool name rules)", "tool name %q breaks MCP's tool name rules", name)
		} else if !snakeName.MatchString(name) {
			v.errorf(v.keyAt(p), "use lower-case snake_case such as neemias_checkin_register", "tool name %q is not snake_case", name)
		}
		if pre := v.s.Server.ToolPrefix; pre != "" && !strings.HasPrefix(name, pre) {
			v.errorf(v.keyAt(p), fmt.Sprintf("rename it to %s%s", pre, name), "tool name %q lacks the prefix %q", name, pre)
		}
		if c.URI != "" {
			v.errorf(v.keyAt(p+".uri"), "remove uri; tools are called by name", "tool %q has a uri", name)
		}
		if c.Query != nil {
			v.errorf(v.keyAt(p+".query"), "remove it and write the tool's SQL in queries/custom/", "tool %q has a query; generated queries are for resources", name)
		}
		if c.Cache != nil {
			v.errorf(v.keyAt(p+".cache"), "remove it; tool results are never cached", "tool %q has cache hints", name)
		}
		if c.Annotations == nil {
			v.errorf(v.keyAt(p), "add annotations: {read_only: …, destructive: …, idempotent: …, open_world: …}", "tool %q has no annotations", name)
		}
	} else {
		if !snakeName.MatchString(name) {
			v.errorf(v.keyAt(p), "use lower-case snake_case such as roster_children", "resource id %q is not snake_case", name)
		}
		if c.Annotations != nil {
			v.errorf(v.keyAt(p+".annotations"), "remove it; resources are read-only by nature", "resource %q has tool annotations", name)
		}
	}
	v.require(p+".title", c.Title, "a short title")
	v.require(p+".description", c.Description, "a description an agent can act on")
	v.scopeRef(p+".scope", c.Scope, what, name, true)
	v.reachable(p, name, c.Scope, what)
	v.capRowFilters(p, name, c)
	v.fields(p+".input", c.Input, true, c.Scope)
	if len(c.Output) == 0 {
		v.errorf(v.keyAt(p), "declare output fields", "%s %q has no output", what, name)
	}
	v.fields(p+".output", c.Output, false, c.Scope)
	if !isTool {
		v.uri(p, name, c)
		if c.Query != nil {
			v.query(p+".query", c)
		}
	}
}

func (v *validator) scopeRef(path, scope, what, name string, required bool) {
	if scope == "" {
		if required {
			v.errorf(v.keyAt(path), "add scope: with one of the declared scopes", "%s %q has no scope", what, name)
		}
		return
	}
	if _, ok := v.s.Scopes.Get(scope); !ok {
		v.errorf(v.at(path), "declare it under scopes or fix the name", "%s %q: undeclared scope %q%s", what, name, scope, didYouMean(scope, v.s.Scopes.Names()))
	}
}

func (v *validator) reachable(p, name, scope, what string) {
	if scope == "" {
		return
	}
	if _, ok := v.s.Scopes.Get(scope); !ok {
		return
	}
	for _, r := range v.s.Roles {
		if slices.Contains(r.Value.Scopes, scope) {
			return
		}
	}
	v.errorf(v.at(p+".scope"), fmt.Sprintf("grant %q to a role", scope), "%s %q is unreachable: no role has scope %q", what, name, scope)
}

func (v *validator) capRowFilters(p, name string, c Capability) {
	names := v.s.RowFilters.Names()
	if !slices.Contains(c.RowFilters, "church") {
		v.errorf(v.keyAt(p), "add row_filters: [church, …]; every capability is tenant-scoped", "%q does not apply the church row filter", name)
	}
	for i, f := range c.RowFilters {
		if !slices.Contains(names, f) {
			v.errorf(v.at(fmt.Sprintf("%s.row_filters[%d]", p, i)), "declare it under row_filters or fix the name", "%q uses unknown row filter %q%s", name, f, didYouMean(f, names))
		}
	}
}

func (v *validator) fields(p string, fs Map[Field], input bool, capScope string) {
	for _, e := range fs {
		if !snakeName.MatchString(e.Name) {
			v.errorf(v.keyAt(join(p, e.Name)), "use lower-case snake_case", "field name %q is not snake_case", e.Name)
		}
		v.field(join(p, e.Name), e.Name, e.Value, input, capScope)
	}
}

func (v *validator) field(p, name string, f Field, input bool, capScope string) {
	v.require(p+".description", f.Description, "a description an agent can act on")
	switch {
	case f.Type == "":
		v.errorf(v.keyAt(p), "add type: one of "+strings.Join(fieldTypes, ", "), "field %q has no type", name)
	case !slices.Contains(fieldTypes, f.Type):
		v.errorf(v.at(p+".type"), "use one of "+strings.Join(fieldTypes, ", "), "field %q has invalid type %q%s", name, f.Type, didYouMean(f.Type, fieldTypes))
	}
	if f.Format != "" {
		if !slices.Contains(fieldFormats, f.Format) {
			v.errorf(v.at(p+".format"), "use one of "+strings.Join(fieldFormats, ", "), "field %q has invalid format %q%s", name, f.Format, didYouMean(f.Format, fieldFormats))
		} else if f.Type != "string" {
			v.errorf(v.at(p+".format"), "use type: string, or remove format", "field %q: format %q applies to strings, not %s", name, f.Format, f.Type)
		}
	}
	stringOnly := func(key string, set bool) {
		if set && f.Type != "string" {
			v.errorf(v.keyAt(p+"."+key), "remove it or use type: string", "field %q: %s applies to strings, not %s", name, key, f.Type)
		}
	}
	stringOnly("enum", len(f.Enum) > 0)
	stringOnly("min_length", f.MinLength != nil)
	stringOnly("max_length", f.MaxLength != nil)
	stringOnly("pattern", f.Pattern != "")
	if f.Pattern != "" {
		if _, err := regexp.Compile(f.Pattern); err != nil {
			v.errorf(v.at(p+".pattern"), "fix the regular expression", "field %q: invalid pattern: %v", name, err)
		}
	}
	if f.MinLength != nil && f.MaxLength != nil && *f.MinLength > *f.MaxLength {
		v.errorf(v.at(p+".min_length"), "make min_length at most max_length", "field %q: min_length %d > max_length %d", name, *f.MinLength, *f.MaxLength)
	}
	if (f.Minimum != nil || f.Maximum != nil) && f.Type != "integer" {
		v.errorf(v.keyAt(p), "remove minimum/maximum or use type: integer", "field %q: minimum and maximum apply to integers", name)
	}
	if f.Complete && !input {
		v.errorf(v.at(p+".complete"), "remove it; only inputs can be completed", "output field %q is marked complete", name)
	}
	switch f.Type {
	case "array":
		if f.Items == nil {
			v.errorf(v.keyAt(p), "add items: {type: …}", "array field %q has no items", name)
		} else {
			if f.Items.Description == "" {
				f.Items.Description = f.Description // items inherit the array's description
			}
			v.field(p+".items", name+"[]", *f.Items, input, capScope)
		}
	case "object":
		if len(f.Fields) == 0 {
			v.errorf(v.keyAt(p), "add fields: {name: {type: …}}", "object field %q has no fields", name)
		}
		v.fields(p+".fields", f.Fields, input, capScope)
	default:
		if f.Items != nil {
			v.errorf(v.keyAt(p+".items"), "remove it or use type: array", "field %q: items applies to arrays", name)
		}
		if len(f.Fields) > 0 {
			v.errorf(v.keyAt(p+".fields"), "remove it or use type: object", "field %q: fields applies to objects", name)
		}
	}
	if f.PII != nil {
		v.pii(p+".pii", name, f, input, capScope)
	}
}

func (v *validator) pii(p, name string, f Field, input bool, capScope string) {
	if f.Type == "array" || f.Type == "object" {
		v.errorf(v.keyAt(p), "put the pii rule on the scalar fields inside it", "pii rule on %s field %q; pii applies to scalar fields", f.Type, name)
	}
	if f.PII.Category == "" {
		v.errorf(v.keyAt(p), "add category: one of "+strings.Join(piiCategories, ", "), "pii rule of field %q has no category", name)
	} else if !slices.Contains(piiCategories, f.PII.Category) {
		v.errorf(v.at(p+".category"), "use one of "+strings.Join(piiCategories, ", "), "pii rule of field %q has unknown category %q%s", name, f.PII.Category, didYouMean(f.PII.Category, piiCategories))
	}
	if vw := f.PII.VisibleWith; vw != "" {
		if input {
			v.errorf(v.at(p+".visible_with"), "remove it; visible_with decides who receives an output field", "pii rule of input field %q has visible_with", name)
		} else if _, ok := v.s.Scopes.Get(vw); !ok {
			v.errorf(v.at(p+".visible_with"), "declare it under scopes or fix the name", "pii rule of field %q names unknown scope %q%s", name, vw, didYouMean(vw, v.s.Scopes.Names()))
		} else if f.Required && vw != capScope {
			v.errorf(v.at(p+".visible_with"), "make the field optional (it is left out when redacted)", "field %q can be redacted (visible_with %q) but is required", name, vw)
		}
	}
}

func (v *validator) uri(p, name string, c Capability) {
	if c.URI == "" {
		v.errorf(v.keyAt(p), "add uri: such as neemias://thing/{id}", "resource %q has no uri", name)
		return
	}
	tmpl, err := uritemplate.New(c.URI)
	if err != nil {
		v.errorf(v.at(p+".uri"), "fix the RFC 6570 template", "resource %q: invalid URI template %q: %v", name, c.URI, err)
		return
	}
	if !regexp.MustCompile(`^[a-z][a-z0-9+.-]*://`).MatchString(c.URI) {
		v.errorf(v.at(p+".uri"), "start it with a scheme such as neemias://", "resource %q: URI %q has no scheme", name, c.URI)
	}
	vars := tmpl.Varnames()
	for _, vn := range vars {
		f, ok := c.Input.Get(vn)
		if !ok {
			v.errorf(v.at(p+".uri"), fmt.Sprintf("declare input.%s or remove {%s} from the template", vn, vn), "resource %q: template variable %q is not an input", name, vn)
			continue
		}
		if f.Type == "array" || f.Type == "object" {
			v.errorf(v.at(join(p+".input", vn)+".type"), "use a scalar type for template variables", "resource %q: template variable %q cannot be %s", name, vn, f.Type)
		}
	}
	for _, e := range c.Input {
		if !slices.Contains(vars, e.Name) {
			v.errorf(v.keyAt(join(p+".input", e.Name)), fmt.Sprintf("add {%s} (or {?%s}) to the uri or remove the input", e.Name, e.Name),
				"resource %q: input %q is not a variable of the URI template", name, e.Name)
		}
	}
}

func (v *validator) query(p string, c Capability) {
	q := c.Query
	if !sqlIdent.MatchString(q.From) {
		v.errorf(v.at(p+".from"), "name a view or table in lower-case snake_case", "query.from %q is not an SQL identifier", q.From)
	}
	if len(q.Select) == 0 {
		v.errorf(v.keyAt(p), "list the columns to return", "query has no select")
	}
	for i, col := range q.Select {
		if !sqlIdent.MatchString(col) {
			v.errorf(v.at(fmt.Sprintf("%s.select[%d]", p, i)), "use a column name", "query.select %q is not an SQL identifier", col)
		}
	}
	for i, col := range q.OrderBy {
		if !sqlIdent.MatchString(col) {
			v.errorf(v.at(fmt.Sprintf("%s.order_by[%d]", p, i)), "use a column name", "query.order_by %q is not an SQL identifier", col)
		}
	}
	if q.Limit <= 0 {
		v.errorf(v.keyAt(p), "add limit: N (an upper bound on rows)", "query has no positive limit")
	}
	for i, w := range q.Where {
		wp := fmt.Sprintf("%s.where[%d]", p, i)
		if !sqlIdent.MatchString(w.Column) {
			v.errorf(v.at(wp+".column"), "use a column name", "where column %q is not an SQL identifier", w.Column)
		}
		if w.Op != "" && !slices.Contains(whereOps, w.Op) {
			v.errorf(v.at(wp+".op"), "use one of "+strings.Join(whereOps, " "), "where op %q is not supported", w.Op)
		}
		f, ok := c.Input.Get(w.Input)
		if !ok {
			v.errorf(v.at(wp+".input"), "name one of the inputs: "+strings.Join(c.Input.Names(), ", "), "where input %q is not an input%s", w.Input, didYouMean(w.Input, c.Input.Names()))
			continue
		}
		if f.Required && w.Optional {
			v.errorf(v.at(wp+".optional"), "remove optional or make the input optional", "where input %q is required, so it cannot be optional", w.Input)
		}
	}
}
