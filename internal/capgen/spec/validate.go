package spec

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

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
	s, d := decodeFile(file, src)
	if s == nil || d.bad[""] || d.budget < 0 {
		// Not a spec at all, or cut short: validating what little was decoded would only
		// bury the one message that matters.
		return nil, d.result()
	}
	s.File, s.pos = file, d.pos
	v := &validator{decoder: *d, s: s, lines: strings.Split(string(src), "\n")}
	v.validate()
	if len(v.diags) > 0 {
		return nil, v.result()
	}
	return s, nil
}

var (
	// MCP tool names: 1–128 characters of A-Z a-z 0-9 _ - . (spec 2025-11-25, "Tool names").
	mcpToolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
	// Our own ids must also map cleanly onto Go names.
	snakeName = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	scopeName = regexp.MustCompile(`^[a-z][a-z0-9_]*(:[a-z][a-z0-9_]*)?$`)
	roleName  = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	sqlIdent  = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
	// sqlc query names (-- name: X) become Go method names.
	sqlcQueryName = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	registryName  = regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`)
)

const (
	maxTTLMillis  = 86_400_000 // one day; keep in step with Cache's jsonschema tag
	maxQueryLimit = 100_000    // keep in step with Query's jsonschema tag
)

var (
	fieldTypes    = []string{"string", "integer", "number", "boolean", "array", "object"}
	fieldFormats  = []string{"uuid", "date", "date-time", "email", "uri"}
	piiCategories = []string{"child_name", "birth_date", "guardian_name", "guardian_phone", "health", "private_note", "secret"}
	whereOps      = []string{"=", "<", "<=", ">", ">="}
)

type validator struct {
	decoder
	s     *Spec
	lines []string // the source, for columns inside values

	// The declared names, and the scopes some role grants, as sets: a hostile spec with tens
	// of thousands of names must not make validation quadratic.
	scopeSet, roleSet, filterSet, resourceSet, granted map[string]bool
	scopeNames, roleNames, filterNames                 []string // for suggestions
}

func (v *validator) at(path string) Pos    { return v.pos.at(path) }
func (v *validator) keyAt(path string) Pos { return v.pos.keyAt(path) }

// isBad reports whether path, or a value holding it, failed to decode (and was reported).
func (v *validator) isBad(path string) bool {
	for {
		if v.bad[path] {
			return true
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			return v.bad[""] // the spec itself is not a mapping
		}
		path = path[:i]
	}
}

func (v *validator) validate() {
	s := v.s
	v.scopeSet, v.roleSet = s.Scopes.set(), s.Roles.set()
	v.filterSet, v.resourceSet = s.RowFilters.set(), s.Resources.set()
	v.scopeNames, v.roleNames, v.filterNames = s.Scopes.Names(), s.Roles.Names(), s.RowFilters.Names()
	v.granted = map[string]bool{}
	for _, r := range s.Roles {
		for _, sc := range r.Value.Scopes {
			v.granted[sc] = true
		}
	}
	switch {
	case v.isBad("kind"):
	case !v.pos.present("kind"):
		v.errorf(Pos{1, 1}, "add kind: "+Kind+" at the top", "kind is missing")
	case s.Kind != Kind:
		v.errorf(v.at("kind"), "set kind: "+Kind, "kind %q is not %q", s.Kind, Kind)
	}
	switch {
	case v.isBad("schemaVersion"):
	case !v.pos.present("schemaVersion"):
		v.errorf(Pos{1, 1}, fmt.Sprintf("add schemaVersion: %d at the top", SchemaVersion), "schemaVersion is missing")
	case s.SchemaVersion != SchemaVersion:
		v.errorf(v.at("schemaVersion"), fmt.Sprintf("write the spec in version %d, or use a generator that reads version %d", SchemaVersion, s.SchemaVersion),
			"schemaVersion %d is not supported (this generator reads %d)", s.SchemaVersion, SchemaVersion)
	}
	v.server()
	v.scopes()
	v.rowFilters()
	v.roles()
	v.capabilities()
	v.upstreams()
	v.views()
}

// require reports path as missing when value is blank; what says what to add. An absent key is
// reported at the mapping that lacks it, an empty value at the value.
func (v *validator) require(path, value, what string) bool {
	if strings.TrimSpace(value) != "" {
		return true
	}
	switch {
	case v.isBad(path):
	case v.pos.present(path):
		v.errorf(v.at(path), "write "+what, "%s is empty", path)
	default:
		v.errorf(v.pos.missingAt(path), "add "+what, "%s is missing", path)
	}
	return false
}

func (v *validator) server() {
	sv := v.s.Server
	v.require("server.name", sv.Name, "a reverse-DNS registry name such as io.github.owner/name")
	if sv.Name != "" && !registryName.MatchString(sv.Name) {
		v.errorf(v.at("server.name"), "use the form io.github.owner/name", "server.name %q is not a registry name", sv.Name)
	}
	v.require("server.title", sv.Title, "a human-readable title")
	if v.require("server.description", sv.Description, "a one-line description") && len([]rune(sv.Description)) > 100 {
		v.errorf(v.at("server.description"), "shorten it to at most 100 (the MCP Registry limit)", "server.description is %d characters long", len([]rune(sv.Description)))
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
		v.errorf(v.pos.missingAt("scopes"), "declare at least one scope", "the spec declares no scopes")
	}
	for _, e := range v.s.Scopes {
		p := join("scopes", e.Name)
		if !scopeName.MatchString(e.Name) {
			v.errorf(v.keyAt(p), "use resource:action in lower case, for example roster:read", "scope name %q is malformed", e.Name)
		}
		v.require(p+".description", e.Value.Description, "a description of what the scope grants")
		v.require(p+".en", e.Value.En, "the English consent-page wording")
		v.require(p+".pt", e.Value.Pt, "the Portuguese consent-page wording")
		switch w := e.Value.Warning; {
		case e.Value.Sensitive && w == nil && !v.isBad(p+".warning"):
			v.errorf(v.keyAt(p), "add warning: {pt: …, en: …}, the consent page's LGPD warning for it", "sensitive scope %q has no warning", e.Name)
		case !e.Value.Sensitive && w != nil:
			v.errorf(v.keyAt(p+".warning"), "remove the warning, or set sensitive: true", "scope %q has a warning but is not sensitive", e.Name)
		case w != nil:
			v.require(p+".warning.pt", w.Pt, "the warning in Portuguese")
			v.require(p+".warning.en", w.En, "the warning in English")
		}
	}
}

func (v *validator) rowFilters() {
	for _, e := range v.s.RowFilters {
		p := join("row_filters", e.Name)
		if !snakeName.MatchString(e.Name) {
			v.errorf(v.keyAt(p), "use snake_case", "row filter name %q is not snake_case", e.Name)
		}
		v.require(p+".description", e.Value.Description, "a description of who sees what")
		v.require(p+".sql", e.Value.SQL, "a boolean SQL condition")
		switch {
		case v.isBad(p + ".column"):
		case !v.pos.present(p + ".column"):
			v.errorf(v.pos.missingAt(p+".column"), "add column: the uuid column it tests, such as child_id", "row filter %q has no column", e.Name)
		case !sqlIdent.MatchString(e.Value.Column) || strings.HasPrefix(e.Value.Column, "caller_"):
			v.errorf(v.at(p+".column"), "use a lower-case SQL column name such as child_id", "row filter %q: column %q is not a column name", e.Name, e.Value.Column)
		}
		if strings.Contains(e.Value.SQL, "sqlc.") {
			v.errorf(v.at(p+".sql"), "use caller_church, caller_user or caller_role (the arguments of the generated rf_ function)",
				"row filter %q: sql must not use sqlc parameters", e.Name)
		}
		if strings.Contains(e.Value.SQL, ";") {
			v.errorf(v.at(p+".sql"), "write a single boolean condition", "row filter %q: sql must not contain ';'", e.Name)
		}
		for i, r := range e.Value.Roles {
			if !v.roleSet[r] {
				v.errorf(v.at(fmt.Sprintf("%s.roles[%d]", p, i)), "declare it under roles or fix the name",
					"row filter %q names unknown role %q%s", e.Name, r, v.didYouMean(r, v.roleNames))
			}
		}
	}
	if !v.filterSet["church"] {
		v.errorf(v.pos.missingAt("row_filters"), "declare row_filters.church, the tenant isolation every capability applies", "the spec has no \"church\" row filter")
	}
}

func (v *validator) roles() {
	if len(v.s.Roles) == 0 {
		v.errorf(v.pos.missingAt("roles"), "declare at least one role", "the spec declares no roles")
	}
	for _, e := range v.s.Roles {
		p := join("roles", e.Name)
		if !roleName.MatchString(e.Name) {
			v.errorf(v.keyAt(p), "use UPPER_CASE, for example ADMIN", "role name %q is not upper case", e.Name)
		}
		v.require(p+".description", e.Value.Description, "a description of who has this role")
		if !v.pos.present(p+".scopes") && !v.isBad(p+".scopes") {
			v.errorf(v.pos.missingAt(p+".scopes"), "list the scopes the role may be granted ([] for none)", "%s.scopes is missing", p)
		}
		seen := map[string]bool{}
		for i, sc := range e.Value.Scopes {
			sp := fmt.Sprintf("%s.scopes[%d]", p, i)
			if !v.scopeSet[sc] {
				v.errorf(v.at(sp), "declare it under scopes or fix the name", "role %q grants unknown scope %q%s", e.Name, sc, v.didYouMean(sc, v.scopeNames))
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
		v.errorf(v.pos.missingAt("resources"), "declare resources or tools", "the spec declares no capabilities")
	}
	goNames := map[string]string{}
	uris := map[string]string{}
	for _, e := range v.s.Resources {
		p := join("resources", e.Name)
		v.capability(p, e.Name, e.Value, false)
		v.uniqueGoName(goNames, p, fmt.Sprintf("resource %q", e.Name), GoName(e.Name, ""))
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
		if v.resourceSet[e.Name] {
			v.errorf(v.keyAt(p), "rename the tool or the resource", "tool %q has the same id as a resource", e.Name)
		}
		v.capability(p, e.Name, e.Value, true)
		v.uniqueGoName(goNames, p, fmt.Sprintf("tool %q", e.Name), GoName(e.Name, v.s.Server.ToolPrefix))
	}
}

// uniqueGoName reports a capability (what: `tool "x"`) whose Go name another one already has.
func (v *validator) uniqueGoName(seen map[string]string, path, what, goName string) {
	if first, dup := seen[goName]; dup {
		v.errorf(v.keyAt(path), "rename one of them", "%s has the Go name %s, as %s does", what, goName, first)
		return
	}
	seen[goName] = what
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
			v.toolName(p, name)
		} else if !snakeName.MatchString(name) {
			v.errorf(v.keyAt(p), "use lower-case snake_case such as neemias_checkin_register", "tool name %q is not snake_case", name)
		}
		if pre := v.s.Server.ToolPrefix; pre != "" && !strings.HasPrefix(name, pre) {
			v.errorf(v.keyAt(p), fmt.Sprintf("rename it to %s%s", pre, name), "tool name %q lacks the prefix %q", name, pre)
		}
		if v.pos.present(p + ".uri") {
			v.errorf(v.keyAt(p+".uri"), "remove uri; tools are called by name", "tool %q has a uri", name)
		}
		if c.Query != nil {
			v.errorf(v.keyAt(p+".query"), "remove it and write the tool's SQL in queries/custom/", "tool %q has a query (generated queries are for resources)", name)
		}
		if c.Cache != nil {
			v.errorf(v.keyAt(p+".cache"), "remove it; tool results are never cached", "tool %q has cache hints", name)
		}
		switch {
		case v.isBad(p + ".audit_action"):
		case c.AuditAction == "":
			v.errorf(v.keyAt(p), "add audit_action: the audit log's verb for it, such as checkin", "tool %q has no audit_action", name)
		case !snakeName.MatchString(c.AuditAction):
			v.errorf(v.at(p+".audit_action"), "use a lower-case word such as checkin", "tool %q: audit_action %q is not snake_case", name, c.AuditAction)
		}
		if len(c.Queries) == 0 && !v.isBad(p+".queries") {
			v.errorf(v.keyAt(p), "add queries: [TheQuery, …], the queries/custom/ queries (by -- name:) that select the rows it acts on",
				"tool %q names no queries", name)
		}
		for i, q := range c.Queries {
			if !sqlcQueryName.MatchString(q) {
				v.errorf(v.at(fmt.Sprintf("%s.queries[%d]", p, i)), "use the query's -- name: such as GetChildForCheckin", "tool %q: query name %q is not a sqlc query name", name, q)
			}
		}
		if c.Annotations == nil && !v.isBad(p+".annotations") {
			v.errorf(v.keyAt(p), "add annotations: {read_only: …, destructive: …, idempotent: …, open_world: …}", "tool %q has no annotations", name)
		}
	} else {
		if !snakeName.MatchString(name) {
			v.errorf(v.keyAt(p), "use lower-case snake_case such as roster_children", "resource id %q is not snake_case", name)
		}
		if c.Annotations != nil {
			v.errorf(v.keyAt(p+".annotations"), "remove it; resources are read-only by nature", "resource %q has tool annotations", name)
		}
		if c.AuditAction != "" {
			v.errorf(v.keyAt(p+".audit_action"), "remove it; every resource is audited as read", "resource %q has an audit_action", name)
		}
		for i, q := range c.Queries {
			if !sqlcQueryName.MatchString(q) {
				v.errorf(v.at(fmt.Sprintf("%s.queries[%d]", p, i)), "use the query's -- name: such as ClassListChildren", "resource %q: query name %q is not a sqlc query name", name, q)
			}
		}
		if c.Cache != nil {
			switch cp := p + ".cache.ttl_ms"; {
			case v.isBad(cp):
			case !v.pos.present(cp):
				v.errorf(v.pos.missingAt(cp), "add ttl_ms: N (milliseconds a reader may reuse the result)", "%s is missing", cp)
			case c.Cache.TTLMillis < 0 || c.Cache.TTLMillis > maxTTLMillis:
				v.errorf(v.at(cp), fmt.Sprintf("use 0 to %d (one day)", maxTTLMillis), "resource %q: ttl_ms %d is out of range", name, c.Cache.TTLMillis)
			}
		}
	}
	v.require(p+".title", c.Title, "a short title")
	v.require(p+".description", c.Description, "a description an agent can act on")
	v.scopeRef(p+".scope", c.Scope, what, name, true)
	v.reachable(p, name, c.Scope, what)
	v.capRowFilters(p, what, name, c)
	v.fields(p+".input", c.Input, true, c.Scope)
	if len(c.Output) == 0 && !v.isBad(p+".output") {
		v.errorf(v.pos.missingAt(p+".output"), "declare output fields", "%s %q has no output", what, name)
	}
	v.fields(p+".output", c.Output, false, c.Scope)
	v.examples(p, what, name, c)
	v.summary(p, name, c)
	if !isTool {
		v.uri(p, name, c)
		if c.Query != nil {
			v.query(p+".query", name, c)
		}
	}
}

func (v *validator) scopeRef(path, scope, what, name string, required bool) {
	if scope == "" {
		if required && !v.isBad(path) {
			v.errorf(v.pos.missingAt(path), "add scope: with one of the declared scopes", "%s %q has no scope", what, name)
		}
		return
	}
	if !v.scopeSet[scope] {
		v.errorf(v.at(path), "declare it under scopes or fix the name", "%s %q: unknown scope %q%s", what, name, scope, v.didYouMean(scope, v.scopeNames))
	}
}

func (v *validator) reachable(p, name, scope, what string) {
	if scope == "" {
		return
	}
	if !v.scopeSet[scope] || v.granted[scope] {
		return
	}
	v.errorf(v.at(p+".scope"), fmt.Sprintf("grant %q to a role", scope), "%s %q is unreachable: no role has scope %q", what, name, scope)
}

func (v *validator) capRowFilters(p, what, name string, c Capability) {
	if v.isBad(p + ".row_filters") {
		return
	}
	if !slices.Contains(c.RowFilters, "church") {
		v.errorf(v.keyAt(p+".row_filters"), "add church to its row_filters (every capability is tenant-scoped)",
			"%s %q does not apply the \"church\" row filter", what, name)
	}
	seen := map[string]bool{}
	for i, f := range c.RowFilters {
		fp := fmt.Sprintf("%s.row_filters[%d]", p, i)
		if !v.filterSet[f] && f != "church" { // a missing church filter is reported once
			v.errorf(v.at(fp), "declare it under row_filters or fix the name", "%s %q uses unknown row filter %q%s", what, name, f, v.didYouMean(f, v.filterNames))
		}
		if seen[f] {
			v.errorf(v.at(fp), "remove the repetition", "%s %q applies row filter %q twice", what, name, f)
		}
		seen[f] = true
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
	typed := false // the type is valid, so type-specific checks make sense
	switch {
	case v.isBad(p + ".type"):
	case f.Type == "":
		v.errorf(v.pos.missingAt(p+".type"), "add type: one of "+strings.Join(fieldTypes, ", "), "field %q has no type", name)
	case !slices.Contains(fieldTypes, f.Type):
		v.errorf(v.at(p+".type"), "use one of "+strings.Join(fieldTypes, ", "), "field %q has invalid type %q%s", name, f.Type, v.didYouMean(f.Type, fieldTypes))
	default:
		typed = true
	}
	if f.Format != "" {
		if !slices.Contains(fieldFormats, f.Format) {
			v.errorf(v.at(p+".format"), "use one of "+strings.Join(fieldFormats, ", "), "field %q has invalid format %q%s", name, f.Format, v.didYouMean(f.Format, fieldFormats))
		} else if typed && f.Type != "string" {
			v.errorf(v.at(p+".format"), "use type: string, or remove format", "field %q: format %q applies to strings, not %s", name, f.Format, f.Type)
		}
	}
	stringOnly := func(key string, set bool) {
		if set && typed && f.Type != "string" {
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
	for _, key := range []string{"minimum", "maximum"} {
		if typed && f.Type != "integer" && v.pos.present(p+"."+key) {
			v.errorf(v.keyAt(p+"."+key), "remove it or use type: integer", "field %q: %s applies to integers, not %s", name, key, f.Type)
		}
	}
	if f.Minimum != nil && f.Maximum != nil && *f.Minimum > *f.Maximum {
		v.errorf(v.at(p+".minimum"), "make minimum at most maximum", "field %q: minimum %d > maximum %d", name, *f.Minimum, *f.Maximum)
	}
	if f.InText != nil && input {
		v.errorf(v.keyAt(p+".in_text"), "remove it; only outputs are shown in a tool result's text", "input field %q has in_text", name)
	}
	if f.Complete && !input {
		v.errorf(v.at(p+".complete"), "remove it; only inputs can be completed", "output field %q is marked complete", name)
	}
	switch f.Type {
	case "array":
		if f.Items == nil {
			if v.isBad(p + ".items") {
				break
			}
			v.errorf(v.pos.missingAt(p+".items"), "add items: {type: …}", "array field %q has no items", name)
		} else {
			if f.Items.Description == "" {
				f.Items.Description = f.Description // items inherit the array's description
			}
			if f.Items.PII != nil && f.Items.Type != "object" && f.Items.Type != "array" {
				// The generated types redact fields of structs; a list of bare values would
				// go out whole.
				v.errorf(v.keyAt(p+".items.pii"), "make the items objects (items: {type: object, fields: {value: {type: …, pii: …}}}) and put the rule on their field",
					"pii rule on the items of the list of %ss %q (pii rules apply to fields)", f.Items.Type, name)
			}
			v.field(p+".items", name+"[]", *f.Items, input, capScope)
		}
	case "object":
		if len(f.Fields) == 0 && !v.isBad(p+".fields") {
			v.errorf(v.pos.missingAt(p+".fields"), "add fields: {name: {type: …}}", "object field %q has no fields", name)
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
	switch f.Type {
	case "array":
		v.errorf(v.keyAt(p), "make the items objects and put the rule on their field", "pii rule on array field %q (pii rules apply to scalar fields)", name)
	case "object":
		v.errorf(v.keyAt(p), "move it to the fields inside it", "pii rule on object field %q (pii rules apply to scalar fields)", name)
	}
	switch {
	case v.isBad(p + ".category"):
	case f.PII.Category == "":
		v.errorf(v.pos.missingAt(p+".category"), "add category: one of "+strings.Join(piiCategories, ", "), "pii rule of field %q has no category", name)
	case !slices.Contains(piiCategories, f.PII.Category):
		v.errorf(v.at(p+".category"), "use one of "+strings.Join(piiCategories, ", "), "pii rule of field %q has unknown category %q%s", name, f.PII.Category, v.didYouMean(f.PII.Category, piiCategories))
	}
	if vw := f.PII.VisibleWith; vw != "" {
		if input {
			v.errorf(v.at(p+".visible_with"), "remove it (visible_with decides who receives an output field)", "pii rule of input field %q has visible_with", name)
		} else if !v.scopeSet[vw] {
			v.errorf(v.at(p+".visible_with"), "declare it under scopes or fix the name", "pii rule of field %q names unknown scope %q%s", name, vw, v.didYouMean(vw, v.scopeNames))
		} else if f.Required && vw != capScope && f.PII.Otherwise == "" {
			v.errorf(v.at(p+".visible_with"), "make the field optional (it is left out when redacted)", "field %q can be redacted (visible_with %q) but is required", name, vw)
		}
	}
	if o := f.PII.Otherwise; o != "" && !v.isBad(p+".otherwise") {
		switch {
		case input:
			v.errorf(v.at(p+".otherwise"), "remove it (otherwise decides what an output field becomes)", "pii rule of input field %q has otherwise", name)
		case !slices.Contains(piiOtherwise, o):
			v.errorf(v.at(p+".otherwise"), "use one of "+strings.Join(piiOtherwise, ", "), "pii rule of field %q has unknown otherwise %q%s", name, o, v.didYouMean(o, piiOtherwise))
		case f.PII.VisibleWith == "":
			v.errorf(v.at(p+".otherwise"), "add visible_with: the scope whose holders receive the full value", "pii rule of field %q has otherwise but no visible_with", name)
		case f.Type != "string":
			v.errorf(v.at(p+".otherwise"), "remove it; a short name is a string", "pii rule of %s field %q has otherwise", f.Type, name)
		}
	}
	if f.PII.Handoff != "" && !v.isBad(p+".handoff") {
		switch {
		case input:
			v.errorf(v.at(p+".handoff"), "remove it (a handoff is a value the server gives out)", "pii rule of input field %q has handoff", name)
		case f.PII.Category != "secret":
			v.errorf(v.at(p+".handoff"), "use category: secret, or remove handoff", "pii rule of field %q hands off %s data; only secrets are handed off", name, f.PII.Category)
		case f.Type != "string" || f.Required || !topLevelOutput.MatchString(p):
			v.errorf(v.at(p+".handoff"), "hand off an optional string at the top of the output", "field %q cannot be handed off (only optional top-level string outputs can)", name)
		}
	}
}

// piiOtherwise are the reduced forms an output field with visible_with may take for callers
// without that scope (capability.ShortNames implements short_name).
var piiOtherwise = []string{"short_name"}

// topLevelOutput matches the pii path of a top-level output field (tools.NAME.output.FIELD.pii).
var topLevelOutput = regexp.MustCompile(`^[^.]+\.[^.]+\.output\.[^.]+\.pii$`)

func (v *validator) uri(p, name string, c Capability) {
	if c.URI == "" {
		if !v.isBad(p + ".uri") {
			v.errorf(v.pos.missingAt(p+".uri"), "add uri: such as neemias://thing/{id}", "resource %q has no uri", name)
		}
		return
	}
	tmpl, err := parseTemplate(c.URI)
	if err != nil {
		reason, offset := templateError(c.URI, err)
		v.errorf(v.within(v.at(p+".uri"), c.URI, offset), "fix the RFC 6570 template (variables are {name}, {?a,b} or {/name})",
			"resource %q: invalid URI template %q: %s", name, c.URI, reason)
		return
	}
	if !regexp.MustCompile(`^[a-z][a-z0-9+.-]*://`).MatchString(c.URI) {
		v.errorf(v.at(p+".uri"), "start it with a scheme such as neemias://", "resource %q: URI %q has no scheme", name, c.URI)
	}
	if v.isBad(p + ".input") {
		return // the inputs did not decode; do not guess
	}
	inputs := c.Input.index()
	vars := map[string]bool{}
	for _, vn := range tmpl.Varnames() {
		if vars[vn] {
			continue
		}
		vars[vn] = true
		f, ok := inputs[vn]
		if !ok {
			v.errorf(v.within(v.at(p+".uri"), c.URI, templateVarOffset(c.URI, vn)), fmt.Sprintf("declare input.%s or remove %s from the template", vn, vn),
				"resource %q: template variable %q is not an input", name, vn)
			continue
		}
		if f.Type == "array" || f.Type == "object" {
			v.errorf(v.at(join(p+".input", vn)+".type"), "use a scalar type for template variables", "resource %q: template variable %q cannot be %s", name, vn, f.Type)
		}
	}
	for _, e := range c.Input {
		if !vars[e.Name] {
			v.errorf(v.keyAt(join(p+".input", e.Name)), fmt.Sprintf("add {%s} (or {?%s}) to the uri or remove the input", e.Name, e.Name),
				"resource %q: input %q is not a variable of the URI template", name, e.Name)
		}
	}
}

func (v *validator) query(p, name string, c Capability) {
	q := c.Query
	// ident checks the identifier at query.rel.
	ident := func(rel, what, value string) {
		path := p + "." + rel
		if value == "" {
			v.require(path, value, what)
		} else if !sqlIdent.MatchString(value) {
			v.errorf(v.at(path), "write "+what+" in lower-case snake_case", "resource %q: query.%s %q is not an SQL identifier", name, rel, value)
		}
	}
	ident("from", "a view or table", q.From)
	if len(q.Select) == 0 && !v.isBad(p+".select") {
		v.errorf(v.pos.missingAt(p+".select"), "list the columns to return", "resource %q: query has no select", name)
	}
	for i, col := range q.Select {
		ident(fmt.Sprintf("select[%d]", i), "a column name", col)
	}
	for i, col := range q.OrderBy {
		ident(fmt.Sprintf("order_by[%d]", i), "a column name", col)
	}
	switch lp := p + ".limit"; {
	case v.isBad(lp):
	case !v.pos.present(lp):
		v.errorf(v.pos.missingAt(lp), "add limit: N (an upper bound on rows)", "%s is missing", lp)
	case q.Limit < 1 || q.Limit > maxQueryLimit:
		v.errorf(v.at(lp), fmt.Sprintf("use 1 to %d", maxQueryLimit), "resource %q: query limit %d is out of range", name, q.Limit)
	}
	inputs, inputNames := c.Input.index(), c.Input.Names()
	for i, w := range q.Where {
		wp := fmt.Sprintf("%s.where[%d]", p, i)
		ident(fmt.Sprintf("where[%d].column", i), "a column name", w.Column)
		if w.Op != "" && !slices.Contains(whereOps, w.Op) {
			v.errorf(v.at(wp+".op"), "use one of "+strings.Join(whereOps, " "), "resource %q: where op %q is not supported", name, w.Op)
		}
		if w.Input == "" {
			v.require(wp+".input", w.Input, "the input compared with the column")
			continue
		}
		if v.isBad(strings.TrimSuffix(p, ".query") + ".input") {
			continue // the inputs did not decode; do not guess
		}
		f, ok := inputs[w.Input]
		if !ok {
			hint := "declare it under input"
			if len(inputs) > 0 {
				hint = "name one of the inputs: " + strings.Join(inputNames, ", ")
			}
			v.errorf(v.at(wp+".input"), hint, "resource %q: where input %q is not an input%s", name, w.Input, v.didYouMean(w.Input, inputNames))
			continue
		}
		if f.Required && w.Optional {
			v.errorf(v.at(wp+".optional"), "remove optional or make the input optional", "resource %q: where input %q is required, so it cannot be optional", name, w.Input)
		}
	}
}

// parseTemplate parses an RFC 6570 template; the parser has a panic for states it believes
// unreachable, and Load must not panic whatever the spec says.
func parseTemplate(s string) (t *uritemplate.Template, err error) {
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("%v", r)
		}
	}()
	return uritemplate.New(s)
}

// templateError splits a uritemplate error, "reason: <template up to the error><marker>", into
// the reason and the byte offset in tmpl where the parser stopped.
func templateError(tmpl string, err error) (reason string, offset int) {
	msg := err.Error()
	if len(msg) > 0 {
		body := msg[:len(msg)-1] // drop the marker character
		for k := len(tmpl); k >= 0; k-- {
			if strings.HasSuffix(body, ": "+tmpl[:k]) {
				return body[:len(body)-k-2], k
			}
		}
	}
	return msg, 0
}

// within returns the position of the byte at offset in the string value that starts at p, when
// the value is written on one line as it reads (plain or quoted without escapes); otherwise p.
func (v *validator) within(p Pos, value string, offset int) Pos {
	if p.Line < 1 || p.Line > len(v.lines) || offset < 0 || offset > len(value) {
		return p
	}
	line := []rune(v.lines[p.Line-1])
	if p.Col < 1 || p.Col > len(line) {
		return p
	}
	rest := string(line[p.Col-1:])
	quote := 0
	if strings.HasPrefix(rest, "'") || strings.HasPrefix(rest, "\"") {
		quote = 1
	}
	if !strings.HasPrefix(rest[quote:], value) {
		return p
	}
	return Pos{p.Line, p.Col + quote + utf8.RuneCountInString(value[:offset])}
}

// templateVarOffset returns the byte offset of variable name in an RFC 6570 template, or 0.
func templateVarOffset(tmpl, name string) int {
	for i := 0; ; {
		j := strings.Index(tmpl[i:], name)
		if j < 0 {
			return 0
		}
		j += i
		end := j + len(name)
		if j > 0 && strings.ContainsRune("{,?&/.;+#", rune(tmpl[j-1])) && end < len(tmpl) && strings.ContainsRune("},:*", rune(tmpl[end])) {
			return j
		}
		i = j + 1
	}
}

// toolName explains how name breaks MCP's tool name rules: 1 to 128 of A-Z a-z 0-9 _ - .
func (v *validator) toolName(p, name string) {
	const hint = "use only the characters A-Z a-z 0-9 _ - ."
	if n := utf8.RuneCountInString(name); n > 128 {
		v.errorf(v.keyAt(p), "shorten it", "tool name %q is %d characters long (MCP allows at most 128)", name, n)
		return
	}
	if name == "" {
		v.errorf(v.keyAt(p), "name the tool", "tool name is empty")
		return
	}
	for i, r := range name {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-' || r == '.') {
			v.errorf(v.within(v.keyAt(p), name, i), hint, "tool name %q has the character %q, which MCP does not allow", name, r)
			return
		}
	}
}
