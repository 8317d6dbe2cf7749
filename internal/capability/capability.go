// Package capability holds the runtime model of a capability: the shape every generated registry
// entry has, so the protocol runtime (internal/mcp), the REST adapter and the docs can all read
// one description of what the spec declared. It is hand-written and has no dependencies on
// generated code; gen/capapi instantiates it.
package capability

import (
	"encoding/json"
	"slices"
	"strings"
)

// Kind says how a capability is exposed over MCP.
type Kind string

const (
	// KindResource is a resource with a fixed URI (resources/list).
	KindResource Kind = "resource"
	// KindResourceTemplate is a resource addressed by an RFC 6570 URI template
	// (resources/templates/list).
	KindResourceTemplate Kind = "resource_template"
	// KindTool is a tool (tools/list, tools/call).
	KindTool Kind = "tool"
)

// Annotations are the MCP tool annotations declared in the spec. Pointers keep "not declared"
// apart from false, because MCP gives absent hints a default (destructive: true).
type Annotations struct {
	ReadOnly    *bool
	Destructive *bool
	Idempotent  *bool
	OpenWorld   *bool
}

// PIICategory names the kind of personal data a field holds. It drives log redaction and the
// inspect report; the set is closed so a typo in the spec is caught by the generator.
type PIICategory string

const (
	PIIChildName     PIICategory = "child_name"
	PIIBirthDate     PIICategory = "birth_date"
	PIIGuardianName  PIICategory = "guardian_name"
	PIIGuardianPhone PIICategory = "guardian_phone"
	// PIIHealth is health data (LGPD art. 11): allergies, medical notes.
	PIIHealth PIICategory = "health"
	// PIIPrivateNote is free text about a person for its readers only (a pick-up
	// restriction's note, which may tell of a custody order).
	PIIPrivateNote PIICategory = "private_note"
	// PIISecret is a credential (a pick-up code): returned only where the spec says, never logged.
	PIISecret PIICategory = "secret"
)

// FieldRule is the PII rule of one field, addressed by its JSON path inside the input or output
// (for example "guardians[].phone").
type FieldRule struct {
	Path     string
	Category PIICategory
	// VisibleWith is the scope a caller needs to receive the field; empty means any caller who
	// may invoke the capability receives it.
	VisibleWith string
	// Otherwise is what a caller without VisibleWith receives instead of nothing: "short_name"
	// (ShortNames). Empty: the field is left out for them.
	Otherwise string
	// Handoff, on a top-level secret, is the note that goes with the value when it is shown in
	// the text of a client without MCP Apps; with MCP Apps the value goes to the view only
	// (the result's _meta), never to the model. Empty: an ordinary field.
	Handoff string
}

// Variable is an input of a capability, as far as the runtime needs to know it without the
// JSON Schema: URI template variables are strings on the wire and are converted by type.
type Variable struct {
	Name     string
	Type     string // string, integer, number, boolean, object, array
	Format   string // uuid, date, date-time, or empty
	Required bool
	// Completable marks template variables that completion/complete answers for.
	Completable bool
}

// Capability is one registry entry: everything about a capability except its handler.
type Capability struct {
	// ID is the spec key (snake_case), stable across renames of the URI.
	ID string
	// Name is the wire name: the tool name, or the resource's URI / URI template.
	Name        string
	Kind        Kind
	Title       string
	Description string
	// URITemplate is the RFC 6570 template of a resource template, or the fixed URI of a resource.
	URITemplate string
	MIMEType    string
	// Scope is the one scope a caller needs to invoke the capability.
	Scope       string
	Annotations Annotations
	// RowFilters name the spec's row filters applied to this capability's data.
	RowFilters []string
	// View is the relation a resource's generated query reads (the spec's query.from), whose
	// row-level security the tests compare with the scope matrix; empty for tools.
	View string
	// Audit is what the audit log records of a call.
	Audit     Audit
	Inputs    []Variable
	InputPII  []FieldRule
	OutputPII []FieldRule
	// NotInText are the JSON paths ("classes[].children[].checkin_id") of the output fields
	// that tool results' text leaves out (spec in_text: false; RenderText).
	NotInText []string
	// NoReadTool turns off the read-only tool twin of a resource (every resource is also a
	// tool by default: most clients let the model call tools but not read resources).
	NoReadTool bool
	// TTLMillis is the cache hint for reads (2026-07-28 ttlMs); 0 means no hint.
	TTLMillis int64
	// Example is the spec's example arguments as a JSON object, "$name" strings referring to
	// the test fixture's named values (spec.ExampleNames); see ExampleArgs. Empty: none.
	Example json.RawMessage
	// Summary is the spec's summary template (see ParseSummary): the sentence tool results'
	// text content starts with, before the rendered output (RenderText).
	Summary string
	// Source is where the spec defines it ("spec/capabilities.yaml tools.neemias_checkin_register"),
	// for error messages and docs.
	Source string
}

// IsRead reports whether the capability is a resource (read) rather than a tool.
func (c *Capability) IsRead() bool { return c.Kind != KindTool }

// Input returns the named input variable.
func (c *Capability) Input(name string) (Variable, bool) {
	for _, v := range c.Inputs {
		if v.Name == name {
			return v, true
		}
	}
	return Variable{}, false
}

// ScopeSet is a caller's granted scopes. The zero value grants nothing.
type ScopeSet struct{ scopes []string }

// NewScopeSet builds a set from scope strings (duplicates and empty strings ignored).
func NewScopeSet(scopes ...string) ScopeSet {
	out := make([]string, 0, len(scopes))
	for _, s := range scopes {
		s = strings.TrimSpace(s)
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return ScopeSet{scopes: out}
}

// ParseScopeSet parses an OAuth space-separated scope string.
func ParseScopeSet(s string) ScopeSet { return NewScopeSet(strings.Fields(s)...) }

// Has reports whether scope is granted.
func (s ScopeSet) Has(scope string) bool {
	_, ok := slices.BinarySearch(s.scopes, scope)
	return ok
}

// List returns the granted scopes, sorted; the slice is a copy.
func (s ScopeSet) List() []string { return slices.Clone(s.scopes) }

// String renders the set as an OAuth scope string.
func (s ScopeSet) String() string { return strings.Join(s.scopes, " ") }

// Audit is what the audit log records of a capability's calls, derived from the spec.
type Audit struct {
	// Action of a successful call ("read", "checkin", …); refusals append the reason
	// ("read.forbidden").
	Action string
	// Always: every call, allowed or not, is written (tools, and resources with personal data).
	Always bool
	// IDInputs are the top-level inputs holding record ids (format uuid), the only arguments
	// an entry keeps.
	IDInputs []string
}
