package capgen

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/neemias/neemias-mcp/internal/capgen/spec"
)

// Model is the spec resolved into everything the emitters need: the server's identity, scopes,
// roles, row filters, capabilities with their Go names and types, REST paths and operation
// ids, audit facts, flattened PII rules, upstream tools and views. Emitters only format it and
// never see the raw spec (TestTemplatesReadOnlyTheModel); every naming and branching decision
// lives here, where it is table-tested.
type Model struct {
	SpecPath string // as written in Source: lines, e.g. spec/capabilities.yaml
	Module   string // Go module path, e.g. github.com/neemias/neemias-mcp
	// GenImport is the import path of the generated tree (Module + "/gen"); golden tests point
	// it into testdata so their output compiles on its own.
	GenImport string
	Server    Server
	Scopes    []Scope
	Roles     []Role
	Caps      []*Cap

	rowFilters []RowFilterFn
	upstreams  []UpstreamTool
	views      []ViewModel
}

// Server is the server's identity (the spec's server: section).
type Server struct {
	Name, Title, Description, Version, Website string
	ToolPrefix                                 string // every tool name starts with it
}

// Scope is one OAuth scope.
type Scope struct {
	Name, Description string
	En, Pt            string // consent-page wording
	Sensitive         bool
	// WarningPt and WarningEn are a sensitive scope's LGPD warning on the consent page.
	WarningPt, WarningEn string
}

// ConstName is the Go constant of the scope: "roster:read" -> RosterRead.
func (s Scope) ConstName() string { return scopeConst(s.Name) }

// Role is one caller role and the scopes it may hold.
type Role struct {
	Name, Description string
	Scopes            []string
}

// Has reports whether the role may hold scope.
func (r Role) Has(scope string) bool { return slices.Contains(r.Scopes, scope) }

// Cap is one capability.
type Cap struct {
	ID          string // spec key
	GoName      string // RosterChild, CheckinRegister
	Kind        string // resource, resource_template, tool
	WireName    string // tool name or URI (template)
	Title       string
	Description string
	Scope       string
	Line        int
	RowFilters  []string
	Annotations *Annotations // tools; nil for resources
	TTLMillis   int64
	Input       *Struct
	Output      *Struct
	Query       *Query   // resources with a generated query
	Queries     []string // tools, and resources without Query: the hand-written sqlc queries that select their rows
	Summary     string   // the narrative text/template of tool results, or empty
	Example     string   // the spec's example arguments as a JSON object, or empty
	// REST is the capability's operation in the OpenAPI document.
	REST RESTOp

	auditAction string
}

// Annotations are a tool's behaviour hints (MCP ToolAnnotations); a nil hint is not stated.
type Annotations struct {
	ReadOnly, Destructive, Idempotent, OpenWorld *bool
}

// Query is a resource's generated read query (queries/generated/capabilities.sql).
type Query struct {
	From    string   // the view
	Select  []string // its columns, in order
	Where   []Where  // the spec's input bindings; the row filters are added by QueryConditions
	OrderBy []string
	Limit   int
}

// Where binds one input to one column.
type Where struct {
	Column, Input string
	Op            string // =, <, <=, >, >=; the spec's default (=) resolved
	Optional      bool   // skipped when the input is absent
}

func newAnnotations(a *spec.Annotations) *Annotations {
	if a == nil {
		return nil
	}
	return &Annotations{ReadOnly: a.ReadOnly, Destructive: a.Destructive, Idempotent: a.Idempotent, OpenWorld: a.OpenWorld}
}

func newQuery(q *spec.Query) *Query {
	if q == nil {
		return nil
	}
	out := &Query{From: q.From, Select: q.Select, OrderBy: q.OrderBy, Limit: q.Limit}
	for _, w := range q.Where {
		op := w.Op
		if op == "" {
			op = "="
		}
		out.Where = append(out.Where, Where{Column: w.Column, Input: w.Input, Op: op, Optional: w.Optional})
	}
	return out
}

// RESTOp is a capability's REST operation: GET of the resource's URI path, POST of
// /tools/<name>.
type RESTOp struct {
	Method      string   // GET or POST
	Path        string   // /attendance/summary, /tools/neemias_checkin_register
	OperationID string   // attendanceSummary, checkinRegister
	PathParams  []string // URI template variables in the path
	QueryParams []string // URI template query variables ({?from,to})
}

// Struct is a generated Go struct type.
type Struct struct {
	GoName   string
	IsOutput bool // part of an output (gets finalize)
	IsRoot   bool // the Input or Output type itself
	InList   bool // the element type of an array field: its short names are made distinct by the list's owner
	Doc      string
	Fields   []*Field
}

// Field is a member of a generated struct.
type Field struct {
	JSONName    string
	GoName      string
	GoType      string // including pointer or slice
	Required    bool
	Description string
	Type        string // JSON type: string, integer, number, boolean, array, object
	Format      string // string format of the field itself (uuid, date, …), or empty
	Complete    bool   // a completable resource template variable
	// Value holds the JSON Schema constraints of the value: the field's, or an array's element's.
	Value       Constraints
	PII         string // category, or empty
	VisibleWith string // scope needed to receive it, or empty
	// Otherwise is the reduced form callers without VisibleWith receive instead ("short_name"),
	// or empty: then the field is left out for them (Redactable).
	Otherwise string
	// Handoff is the note of a secret meant for a person, not the model (see spec.PII.Handoff).
	Handoff string
	// Redactable: an output field that some callers of the capability do not receive.
	Redactable bool
	// ShortNamed: an output field that callers without VisibleWith receive as a short name
	// (capability.ShortNames), made distinct within the list that holds it.
	ShortNamed bool
	// NotInText: an output field left out of tool results' text (spec in_text: false).
	NotInText bool
	// Elem is the struct of an object field or of an array-of-objects field.
	Elem    *Struct
	IsSlice bool
	IsPtr   bool
}

// Constraints are the JSON type and schema keywords of a value.
type Constraints struct {
	Type                 string
	Format               string
	Enum                 []string
	MinLength, MaxLength *int
	Pattern              string
	Minimum, Maximum     *int64
}

func constraintsOf(f spec.Field) Constraints {
	return Constraints{
		Type: f.Type, Format: f.Format, Enum: f.Enum, MinLength: f.MinLength, MaxLength: f.MaxLength,
		Pattern: f.Pattern, Minimum: f.Minimum, Maximum: f.Maximum,
	}
}

// IsConst reports whether the capability is a read with a fixed URI.
func (c *Cap) IsResource() bool { return c.Kind == "resource" }

// IsTool reports whether the capability is a tool.
func (c *Cap) IsTool() bool { return c.Kind == "tool" }

// ConstName is the Go constant holding the capability's wire name.
func (c *Cap) ConstName() string {
	switch c.Kind {
	case "tool":
		return "Tool" + c.GoName
	case "resource_template":
		return "ResourceTemplate" + c.GoName
	}
	return "Resource" + c.GoName
}

// IDConstName is the Go constant holding the capability's spec id.
func (c *Cap) IDConstName() string { return "Cap" + c.GoName }

// Structs returns every struct type of the capability, outer types first.
func (c *Cap) Structs() []*Struct {
	var out []*Struct
	var walk func(s *Struct)
	walk = func(s *Struct) {
		out = append(out, s)
		for _, f := range s.Fields {
			if f.Elem != nil {
				walk(f.Elem)
			}
		}
	}
	walk(c.Input)
	walk(c.Output)
	return out
}

// SpecRef is the line-free reference of the capability in the spec ("spec/capabilities.yaml
// tools.neemias_checkin_register"), for generated files: a spec edit elsewhere does not touch
// them. Diagnostics use [Cap.Source], which has the line.
func (c *Cap) SpecRef(m *Model) string {
	section := "resources"
	if c.IsTool() {
		section = "tools"
	}
	return fmt.Sprintf("%s %s.%s", m.SpecPath, section, c.ID)
}

// Source is the "spec/capabilities.yaml:LINE" reference of the capability.
func (c *Cap) Source(m *Model) string { return fmt.Sprintf("%s:%d", m.SpecPath, c.Line) }

// NewModel resolves a loaded spec.
func NewModel(s *spec.Spec, specPath, module string) *Model {
	sv := s.Server
	m := &Model{
		SpecPath: specPath, Module: module, GenImport: module + "/gen",
		Server: Server{
			Name: sv.Name, Title: sv.Title, Description: sv.Description, Version: sv.Version,
			Website: sv.Website, ToolPrefix: sv.ToolPrefix,
		},
	}
	for _, e := range s.Scopes {
		v := e.Value
		sc := Scope{Name: e.Name, Description: v.Description, En: v.En, Pt: v.Pt, Sensitive: v.Sensitive}
		if v.Warning != nil {
			sc.WarningPt, sc.WarningEn = v.Warning.Pt, v.Warning.En
		}
		m.Scopes = append(m.Scopes, sc)
	}
	for _, e := range s.Roles {
		m.Roles = append(m.Roles, Role{Name: e.Name, Description: strings.TrimSpace(e.Value.Description), Scopes: e.Value.Scopes})
	}
	m.rowFilters = newRowFilterFns(s)
	for _, e := range s.Resources {
		kind := "resource"
		if strings.Contains(e.Value.URI, "{") {
			kind = "resource_template"
		}
		m.Caps = append(m.Caps, m.newCap(s, e.Name, "resources", kind, e.Value.URI, e.Value))
	}
	for _, e := range s.Tools {
		m.Caps = append(m.Caps, m.newCap(s, e.Name, "tools", "tool", e.Name, e.Value))
	}
	m.upstreams = newUpstreamTools(s, specPath)
	m.views = newViews(s)
	return m
}

func (m *Model) newCap(s *spec.Spec, id, section, kind, wire string, c spec.Capability) *Cap {
	goName := spec.GoName(id, "")
	prefix := ""
	if kind == "tool" {
		prefix = s.Server.ToolPrefix
		goName = spec.GoName(id, prefix)
	}
	cp := &Cap{
		ID: id, GoName: goName, Kind: kind, WireName: wire, Title: c.Title,
		Description: strings.TrimSpace(c.Description), Scope: c.Scope,
		Line: s.Line(section + "." + id), RowFilters: c.RowFilters, Annotations: newAnnotations(c.Annotations),
		Query: newQuery(c.Query), Queries: c.Queries, Summary: c.Summary, auditAction: c.AuditAction,
	}
	if c.Cache != nil {
		cp.TTLMillis = c.Cache.TTLMillis
	}
	if len(c.Example) > 0 {
		ex := make(map[string]any, len(c.Example))
		for _, e := range c.Example {
			ex[e.Name] = e.Value.Value
		}
		b, err := json.Marshal(ex)
		if err != nil {
			panic(fmt.Sprintf("capgen: example of %s: %v", id, err)) // the spec decoder produced a non-JSON value: a bug
		}
		cp.Example = string(b)
	}
	cp.Input = buildStruct(goName+"Input", fmt.Sprintf("is the input of %s %q.", kindWord(kind), wire), c.Input, true, c.Scope)
	cp.Output = buildStruct(goName+"Output", fmt.Sprintf("is the output of %s %q.", kindWord(kind), wire), c.Output, false, c.Scope)
	cp.Input.IsRoot, cp.Output.IsRoot = true, true
	cp.REST = RESTOp{Method: "POST", Path: ToolPath(id), OperationID: spec.LowerGoName(id, prefix)}
	if kind != "tool" {
		cp.REST.Method = "GET"
		cp.REST.Path, cp.REST.PathParams, cp.REST.QueryParams = RESTPath(wire)
	}
	return cp
}

// InputField returns the top-level input field named name.
func (c *Cap) InputField(name string) (*Field, bool) {
	for _, f := range c.Input.Fields {
		if f.JSONName == name {
			return f, true
		}
	}
	return nil, false
}

var (
	queryVars = regexp.MustCompile(`\{\?([^}]*)\}`)
	pathVars  = regexp.MustCompile(`\{([^?}]+)\}`)
)

// RESTPath maps a resource URI template onto an HTTP path and its query parameters:
// "neemias://attendance/summary{?from,to,class_id}" -> "/attendance/summary", [from to class_id].
func RESTPath(uri string) (path string, pathParams, queryParams []string) {
	_, rest, _ := strings.Cut(uri, "://")
	if m := queryVars.FindStringSubmatch(rest); m != nil {
		queryParams = strings.Split(m[1], ",")
		rest = queryVars.ReplaceAllString(rest, "")
	}
	for _, m := range pathVars.FindAllStringSubmatch(rest, -1) {
		pathParams = append(pathParams, m[1])
	}
	return "/" + rest, pathParams, queryParams
}

// ToolPath is the REST path of a tool.
func ToolPath(name string) string { return "/tools/" + name }

// Role returns the role named name.
func (m *Model) Role(name string) (Role, bool) {
	for _, r := range m.Roles {
		if r.Name == name {
			return r, true
		}
	}
	return Role{}, false
}

// RoleNames returns the role names in spec order.
func (m *Model) RoleNames() []string {
	out := make([]string, len(m.Roles))
	for i, r := range m.Roles {
		out[i] = r.Name
	}
	return out
}

// Scope returns the scope named name.
func (m *Model) Scope(name string) (Scope, bool) {
	for _, s := range m.Scopes {
		if s.Name == name {
			return s, true
		}
	}
	return Scope{}, false
}

// ScopeNames returns the scope names in spec order.
func (m *Model) ScopeNames() []string {
	out := make([]string, len(m.Scopes))
	for i, s := range m.Scopes {
		out[i] = s.Name
	}
	return out
}

func kindWord(kind string) string {
	if kind == "tool" {
		return "tool"
	}
	return "resource"
}

func buildStruct(name, doc string, fields spec.Map[spec.Field], input bool, capScope string) *Struct {
	s := &Struct{GoName: name, Doc: doc, IsOutput: !input}
	for _, e := range fields {
		s.Fields = append(s.Fields, buildField(name, e.Name, e.Value, input, capScope))
	}
	return s
}

func buildField(parent, name string, f spec.Field, input bool, capScope string) *Field {
	fd := &Field{
		JSONName: name, GoName: spec.GoName(name, ""), Required: f.Required,
		Description: strings.TrimSpace(f.Description), Type: f.Type, Format: f.Format,
		Complete: f.Complete, Value: constraintsOf(f),
		NotInText: f.InText != nil && !*f.InText,
	}
	if f.PII != nil {
		fd.PII = f.PII.Category
		fd.VisibleWith = f.PII.VisibleWith
		fd.Otherwise, fd.Handoff = f.PII.Otherwise, f.PII.Handoff
		reducible := !input && f.PII.VisibleWith != "" && f.PII.VisibleWith != capScope
		fd.Redactable = reducible && f.PII.Otherwise == ""
		fd.ShortNamed = reducible && f.PII.Otherwise == "short_name"
	}
	switch f.Type {
	case "array":
		fd.IsSlice = true
		item := f.Items
		fd.Value = constraintsOf(*item)
		if item.Type == "object" {
			fd.Elem = buildStruct(parent+fd.GoName+"Item", fmt.Sprintf("is an element of %s.%s.", parent, fd.GoName), item.Fields, input, capScope)
			fd.Elem.InList = true
			fd.GoType = "[]" + fd.Elem.GoName
		} else {
			fd.GoType = "[]" + scalarGoType(*item)
		}
		return fd
	case "object":
		fd.Elem = buildStruct(parent+fd.GoName, fmt.Sprintf("is the %s member of %s.", name, parent), f.Fields, input, capScope)
		fd.GoType = fd.Elem.GoName
	default:
		fd.GoType = scalarGoType(f)
	}
	if !f.Required || fd.Redactable {
		fd.IsPtr = true
		fd.GoType = "*" + fd.GoType
	}
	return fd
}

// scalarGoType maps a spec scalar onto the Go type the generated code uses.
func scalarGoType(f spec.Field) string { return goScalar(f.Type, f.Format) }

func goScalar(typ, format string) string {
	switch typ {
	case "integer":
		return "int64"
	case "number":
		return "float64"
	case "boolean":
		return "bool"
	}
	switch format {
	case "uuid":
		return "uuid.UUID"
	case "date":
		return "capability.Date"
	case "date-time":
		return "time.Time"
	}
	return "string"
}

// JSONTag is the json struct tag value.
func (f *Field) JSONTag() string {
	if f.Required && !f.Redactable {
		return f.JSONName
	}
	return f.JSONName + ",omitempty"
}

// SchemaTag is the invopop `jsonschema` struct tag value.
func (f *Field) SchemaTag() string {
	var parts []string
	if f.Required && !f.Redactable {
		parts = append(parts, "required")
	}
	sf := f.Value
	if sf.Format != "" {
		parts = append(parts, "format="+sf.Format)
	}
	for _, e := range sf.Enum {
		parts = append(parts, "enum="+escapeTag(e))
	}
	if sf.MinLength != nil {
		parts = append(parts, fmt.Sprintf("minLength=%d", *sf.MinLength))
	}
	if sf.MaxLength != nil {
		parts = append(parts, fmt.Sprintf("maxLength=%d", *sf.MaxLength))
	}
	if sf.Pattern != "" {
		parts = append(parts, "pattern="+escapeTag(sf.Pattern))
	}
	if sf.Minimum != nil {
		parts = append(parts, fmt.Sprintf("minimum=%d", *sf.Minimum))
	}
	if sf.Maximum != nil {
		parts = append(parts, fmt.Sprintf("maximum=%d", *sf.Maximum))
	}
	return strings.Join(parts, ",")
}

// ExtrasTag is the invopop `jsonschema_extras` value: x-pii and x-visible-with keywords.
func (f *Field) ExtrasTag() string {
	if f.PII == "" {
		return ""
	}
	s := "x-pii=" + f.PII
	if f.VisibleWith != "" {
		s += ",x-visible-with=" + f.VisibleWith
	}
	return s
}

// Tags renders the whole struct tag.
func (f *Field) Tags() string {
	t := fmt.Sprintf(`json:%q`, f.JSONTag())
	if st := f.SchemaTag(); st != "" {
		t += fmt.Sprintf(` jsonschema:%q`, st)
	}
	t += fmt.Sprintf(` jsonschema_description:%q`, f.Description)
	if ex := f.ExtrasTag(); ex != "" {
		t += fmt.Sprintf(` jsonschema_extras:%q`, ex)
	}
	if strings.Contains(t, "`") {
		return strconv.Quote(t)
	}
	return "`" + t + "`"
}

func escapeTag(s string) string { return strings.ReplaceAll(s, ",", `\,`) }

// HasPII reports whether the struct or anything inside it holds personal data.
func (s *Struct) HasPII() bool {
	for _, f := range s.Fields {
		if f.PII != "" || (f.Elem != nil && f.Elem.HasPII()) {
			return true
		}
	}
	return false
}

// walk calls visit with the JSON path ("guardians[].phone") of every field of the struct and of
// the structs inside it, depth first in declaration order; visit returning false skips what
// is inside that field.
func (s *Struct) walk(visit func(path string, f *Field) bool) {
	var rec func(prefix string, st *Struct)
	rec = func(prefix string, st *Struct) {
		for _, f := range st.Fields {
			p := prefix + f.JSONName
			if !visit(p, f) || f.Elem == nil {
				continue
			}
			if f.IsSlice {
				rec(p+"[].", f.Elem)
			} else {
				rec(p+".", f.Elem)
			}
		}
	}
	rec("", s)
}

// PIIRules flattens the struct's PII rules into JSON paths ("guardians[].phone").
func (s *Struct) PIIRules() []PIIRule {
	var out []PIIRule
	s.walk(func(p string, f *Field) bool {
		if f.PII != "" {
			out = append(out, PIIRule{Path: p, Category: f.PII, VisibleWith: f.VisibleWith, Redactable: f.Redactable, Otherwise: f.Otherwise, Handoff: f.Handoff})
		}
		return true
	})
	return out
}

// NotInTextPaths are the JSON paths ("classes[].class_id") of the fields left out of tool
// results' text (spec in_text: false; what is inside such a field goes with it).
func (s *Struct) NotInTextPaths() []string {
	var out []string
	s.walk(func(p string, f *Field) bool {
		if f.NotInText {
			out = append(out, p)
			return false
		}
		return true
	})
	return out
}

// PIIRule is a flattened PII rule.
type PIIRule struct {
	Path        string
	Category    string
	VisibleWith string
	Redactable  bool
	Otherwise   string
	Handoff     string
}

// TypeImports returns the extra imports the generated types need.
func (m *Model) TypeImports() []string {
	set := map[string]bool{}
	for _, c := range m.Caps {
		for _, s := range c.Structs() {
			for _, f := range s.Fields {
				switch {
				case strings.Contains(f.GoType, "uuid.UUID"):
					set["github.com/google/uuid"] = true
				case strings.Contains(f.GoType, "time.Time"):
					set["time"] = true
				}
			}
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// RoleFilters returns the row filters of the capability that bind role.
func (m *Model) RoleFilters(c *Cap, role string) []string {
	var out []string
	for _, name := range c.RowFilters {
		rf, _ := m.RowFilterFn(name)
		if len(rf.Roles) == 0 || slices.Contains(rf.Roles, role) {
			out = append(out, name)
		}
	}
	return out
}

// CompletableInputs lists the capability's completable inputs.
func (c *Cap) CompletableInputs() []string {
	var out []string
	for _, f := range c.Input.Fields {
		if f.Complete {
			out = append(out, f.JSONName)
		}
	}
	return out
}

// KindConst is the capability.Kind constant name.
func (c *Cap) KindConst() string {
	switch c.Kind {
	case "tool":
		return "KindTool"
	case "resource_template":
		return "KindResourceTemplate"
	}
	return "KindResource"
}

// AnnotationsLiteral renders the annotation hints as a Go composite literal body.
func (c *Cap) AnnotationsLiteral() string {
	a := c.Annotations
	var parts []string
	add := func(name string, b *bool) {
		if b != nil {
			parts = append(parts, fmt.Sprintf("%s: capability.Bool(%t)", name, *b))
		}
	}
	add("ReadOnly", a.ReadOnly)
	add("Destructive", a.Destructive)
	add("Idempotent", a.Idempotent)
	add("OpenWorld", a.OpenWorld)
	return strings.Join(parts, ", ")
}

// scopeConst is the Go constant name of a scope: "roster:read" -> RosterRead.
func scopeConst(name string) string {
	return spec.GoName(strings.NewReplacer(":", "_", "-", "_", ".", "_").Replace(name), "")
}

// NeedsFinalize reports whether finalizing the struct does anything: a redactable field, a
// short name of its own, a required list that must not be null, a list whose elements have
// short names, or a member that needs it.
func (s *Struct) NeedsFinalize() bool {
	for _, f := range s.Fields {
		if f.Redactable || s.shortNamesItself(f) || (f.IsSlice && f.Required) || f.listShortNames() || (f.Elem != nil && f.Elem.NeedsFinalize()) {
			return true
		}
	}
	return false
}

// shortNamesItself reports whether the struct's own finalize shortens field f. A short-named
// field of a list's element is shortened by the list's owner instead, over the whole list at
// once (names are made distinct within it), so an element finalize has nothing to do for it.
func (s *Struct) shortNamesItself(f *Field) bool { return f.ShortNamed && !s.InList }

// listShortNames reports whether f is a list of structs with short-named fields, which the
// finalize of f's owner shortens.
func (f *Field) listShortNames() bool {
	return f.IsSlice && f.Elem != nil && len(f.Elem.ShortNamedFields()) > 0
}

// ShortNamedFields are the struct's fields that callers without their VisibleWith receive as
// short names; a list of such structs makes them distinct within the list.
func (s *Struct) ShortNamedFields() []*Field {
	var out []*Field
	for _, f := range s.Fields {
		if f.ShortNamed {
			out = append(out, f)
		}
	}
	return out
}

// UsesGranted reports whether the struct's finalize code reads the granted scopes (itself, or
// to pass them to a member's finalize).
func (s *Struct) UsesGranted() bool {
	for _, f := range s.Fields {
		if f.Redactable || s.shortNamesItself(f) || f.listShortNames() || (f.Elem != nil && f.Elem.NeedsFinalize()) {
			return true
		}
	}
	return false
}

// AuditAction is the audit log's action of a successful call: the tool's audit_action, read
// for resources.
func (c *Cap) AuditAction() string {
	if c.auditAction != "" {
		return c.auditAction
	}
	return "read"
}

// Audited reports whether every call is written to the audit log: tools change something, and
// a resource is audited when its output carries personal data (a PII rule on any field).
func (c *Cap) Audited() bool { return c.IsTool() || c.Output.HasPII() }

// AuditIDs are the top-level uuid inputs: record ids, safe for the audit log.
func (c *Cap) AuditIDs() []string {
	var out []string
	for _, f := range c.Input.Fields {
		if f.Format == "uuid" && f.Type == "string" {
			out = append(out, f.JSONName)
		}
	}
	return out
}
