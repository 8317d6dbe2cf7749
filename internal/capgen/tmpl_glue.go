package capgen

const handlerTmpl = genHeader + `
package capapi

import (
	"context"

	"github.com/neemias/neemias-mcp/internal/errs"
)

// Handler is implemented by the hand-written capability logic (internal/logic), one method per
// capability. Adding a capability to the spec adds a method here, so the build breaks until the
// new stub is scaffolded and implemented.
//
// Methods receive validated input and return domain errors (internal/errs); the pipeline
// (internal/pipeline) checks scopes before calling them and their catalog entry's invoker
// (capability.Typed) finalizes their output for the caller.
type Handler interface {
{{- range .Caps}}
	// {{.GoName}} handles {{if .IsTool}}tool{{else}}resource{{end}} {{quote .WireName}}.
	//
{{comment "\t" .Description}}
	//
	// Scope: {{.Scope}}. Row filters: {{join .RowFilters ", "}}. Source: {{.SpecRef $}}
	{{.GoName}}(ctx context.Context, in *{{.Input.GoName}}) (*{{.Output.GoName}}, error)
{{- end}}

	// Complete answers completion/complete for a completable input (complete: true in the
	// spec): values of variable that start with prefix, limited to what the caller may see.
	Complete(ctx context.Context, capabilityID, variable, prefix string) ([]string, error)
}

// UnimplementedHandler answers every capability with errs.ErrNotImplemented. Test fakes embed
// it and override what they exercise, so a capability added to the spec does not break them.
type UnimplementedHandler struct{}

var _ Handler = UnimplementedHandler{}
{{range .Caps}}
// {{.GoName}} implements [Handler]; it returns errs.ErrNotImplemented.
func (UnimplementedHandler) {{.GoName}}(context.Context, *{{.Input.GoName}}) (*{{.Output.GoName}}, error) {
	return nil, errs.ErrNotImplemented
}
{{end}}
// Complete implements [Handler]; it returns errs.ErrNotImplemented.
func (UnimplementedHandler) Complete(context.Context, string, string, string) ([]string, error) {
	return nil, errs.ErrNotImplemented
}
`

const catalogTmpl = genHeader + `
package capapi

import (
	"encoding/json"

	"{{.GenImport}}/schemas"
	"github.com/neemias/neemias-mcp/internal/capability"
)

// catalog is the spec's capabilities, one literal each, in spec order (resources first, then
// tools): metadata, PII and audit facts, the one scope, the input and output JSON Schemas
// (gen/schemas/<id>.input.json and .output.json, the one copy, read from the binary when the
// program starts), the REST operation, and bind, which makes the typed invoker (validate,
// decode, call, finalize) over a [Handler]. It is unexported and immutable: callers get
// copies.
var catalog = [...]struct {
	capability.Entry
	bind func(Handler, json.RawMessage) capability.Invoker
}{
{{- range .Caps}}
	{
		Entry: capability.Entry{
			Capability: capability.Capability{
				ID:          {{.IDConstName}},
				Name:        {{.ConstName}},
				Kind:        capability.{{.KindConst}},
				Title:       {{quote .Title}},
				Description: {{quote .Description}},
{{- if not .IsTool}}
				URITemplate: {{.ConstName}},
				MIMEType:    "application/json",
{{- end}}
				Scope:       {{quote .Scope}},
{{- if .Annotations}}
				Annotations: capability.Annotations{ {{- .AnnotationsLiteral -}} },
{{- end}}
				RowFilters:  []string{ {{- range .RowFilters}}{{quote .}}, {{end -}} },
{{- if .Query}}
				View:        {{quote .Query.From}},
{{- end}}
				Audit:       capability.Audit{Action: {{quote .AuditAction}}, Always: {{.Audited}}, IDInputs: []string{ {{- range .AuditIDs}}{{quote .}}, {{end -}} }},
				Inputs: []capability.Variable{
{{- range .Input.Fields}}
					{Name: {{quote .JSONName}}, Type: {{quote .Type}}, Format: {{quote .Format}}, Required: {{.Required}}, Completable: {{.Complete}}},
{{- end}}
				},
				InputPII: []capability.FieldRule{
{{- range .Input.PIIRules}}
					{Path: {{quote .Path}}, Category: {{quote .Category}}, VisibleWith: {{quote .VisibleWith}}},
{{- end}}
				},
				OutputPII: []capability.FieldRule{
{{- range .Output.PIIRules}}
					{Path: {{quote .Path}}, Category: {{quote .Category}}, VisibleWith: {{quote .VisibleWith}}{{if .Otherwise}}, Otherwise: {{quote .Otherwise}}{{end}}{{if .Handoff}}, Handoff: {{quote .Handoff}}{{end}}},
{{- end}}
				},
{{- with .Output.NotInTextPaths}}
				NotInText: []string{ {{- range .}}{{quote .}}, {{end -}} },
{{- end}}
				TTLMillis:   {{.TTLMillis}},
{{- if .Example}}
				Example:     []byte({{quote .Example}}),
{{- end}}
{{- if .Summary}}
				Summary:     {{quote .Summary}},
{{- end}}
				Source:      {{quote (.SpecRef $)}},
			},
			InputSchema:  schemas.Input({{.IDConstName}}),
			OutputSchema: schemas.Output({{.IDConstName}}),
			Operation:    {{quote .GoName}},
		},
		bind: func(h Handler, schema json.RawMessage) capability.Invoker {
			return capability.Typed({{.IDConstName}}, schema, h.{{.GoName}})
		},
	},
{{- end}}
}

// roles is the spec's scope matrix by role: the scopes each role may ever hold.
var roles = []capability.RoleScopes{
{{- range .Roles}}
	{Role: {{quote .Name}}, Scopes: []string{ {{- range .Scopes}}{{quote .}}, {{end -}} }},
{{- end}}
}

// Catalog returns the spec's catalog with every entry's typed invoker bound to h: what the
// pipeline, MCP and REST serve. Add upstream tools with its With.
func Catalog(h Handler) *capability.Catalog {
	entries := make([]capability.Entry, len(catalog))
	for i, e := range catalog {
		entries[i] = e.Entry
		entries[i].Invoke = e.bind(h, e.InputSchema)
	}
	c, err := capability.NewCatalog(roles, entries...)
	if err != nil {
		panic("capapi: " + err.Error()) // capgen checked ids and scopes: a generator bug
	}
	return c
}

// Capabilities returns every capability in spec order (resources first, then tools).
func Capabilities() []capability.Capability {
	out := make([]capability.Capability, len(catalog))
	for i, e := range catalog {
		out[i] = capability.Clone(e.Capability)
	}
	return out
}

// Lookup returns the capability with spec id id.
func Lookup(id string) (capability.Capability, bool) {
	for _, e := range catalog {
		if e.ID == id {
			return capability.Clone(e.Capability), true
		}
	}
	return capability.Capability{}, false
}

// Roles returns the scope matrix by role, in spec order (gen/scopes serves it to OAuth).
func Roles() []capability.RoleScopes {
	out := make([]capability.RoleScopes, len(roles))
	for i, r := range roles {
		out[i] = capability.RoleScopes{Role: r.Role, Scopes: append([]string(nil), r.Scopes...)}
	}
	return out
}
`

const scopesTmpl = genHeader + `
// Package scopes is the spec's scopes and the scopes each role may hold, as immutable data,
// for the authorization server and the consent page; the scope each capability needs is its
// catalog entry's (gen/capapi.Catalog). Lookups fail closed: an unknown role gets nothing.
package scopes

import (
	"{{.GenImport}}/capapi"
	"github.com/neemias/neemias-mcp/internal/capability"
)

// Scope names.
const (
{{- range .Scopes}}
	{{.ConstName}} = {{quote .Name}}
{{- end}}
)

// Info describes a scope for consent pages and docs.
type Info = capability.ScopeInfo

// matrix is unexported and immutable: lookups fail closed and return copies.
var matrix = capability.NewScopeMatrix(
	[]capability.ScopeInfo{
{{- range .Scopes}}
		{Name: {{quote .Name}}, Description: {{quote .Description}}, En: {{quote .En}}, Pt: {{quote .Pt}}, Sensitive: {{.Sensitive}}
			{{- if .Sensitive}},
			WarningPt: {{quote .WarningPt}},
			WarningEn: {{quote .WarningEn}}{{end}}},
{{- end}}
	},
	capapi.Roles(),
)

// RoleScopes returns the scopes role may hold; ok is false for an unknown role.
func RoleScopes(role string) (capability.ScopeSet, bool) { return matrix.RoleScopes(role) }

// Grant returns requested ∩ the role's scopes: what a token for role may carry.
func Grant(role string, requested capability.ScopeSet) capability.ScopeSet {
	return matrix.Grant(role, requested)
}

// Roles returns the role names in spec order.
func Roles() []string { return matrix.Roles() }

// IsRole reports whether role is one of [Roles].
func IsRole(role string) bool { return matrix.IsRole(role) }

// All returns every scope in spec order.
func All() []Info { return matrix.All() }

// Describe returns the description of scope name.
func Describe(name string) (Info, bool) { return matrix.Describe(name) }
`

const schemasTmpl = genHeader + `
// Package schemas embeds the JSON Schemas (draft 2020-12) of every capability input and
// output, built by capgen from the spec with invopop/jsonschema's document types, and the REST
// API's OpenAPI document. These files are the one copy: the catalog (gen/capapi) takes each
// entry's schemas from here, and a test (internal/capgen/schemas_guard_test.go) proves
// invopop's reflection of the generated Go types gives exactly these schemas.
package schemas

import (
	"embed"
	"encoding/json"
)

//go:embed *.json
var files embed.FS

// Input returns the input schema of capability id, <id>.input.json. It panics when there is
// none: gen/capapi's catalog reads every capability's when the program starts, so a missing
// file stops it there.
func Input(id string) json.RawMessage { return mustRead(id + ".input.json") }

// Output returns the output schema of capability id, <id>.output.json; it panics as [Input].
func Output(id string) json.RawMessage { return mustRead(id + ".output.json") }

// OpenAPI returns the REST API's OpenAPI document (the same as gen/openapi/openapi.json).
func OpenAPI() json.RawMessage { return read("openapi.json") }

func mustRead(name string) json.RawMessage {
	b, err := files.ReadFile(name)
	if err != nil {
		panic("schemas: " + err.Error()) // capgen writes one per capability: a generator bug
	}
	return b
}

func read(name string) json.RawMessage {
	b, err := files.ReadFile(name)
	if err != nil {
		return nil
	}
	return b
}
`
