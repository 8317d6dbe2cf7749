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
// (internal/pipeline) checks scopes before calling them and gen/dispatch redacts their output.
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

const registryTmpl = genHeader + `
package capapi

import "github.com/neemias/neemias-mcp/internal/capability"

// registry is unexported and immutable: callers get deep copies.
var registry = capability.NewRegistry([]capability.Capability{
{{- range .Caps}}
	{
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
{{- end}}
})

// Capabilities returns every capability in spec order (resources first, then tools).
func Capabilities() []capability.Capability { return registry.All() }

// Lookup returns the capability with spec id id.
func Lookup(id string) (capability.Capability, bool) { return registry.Lookup(id) }
`

const dispatchTmpl = genHeader + `
// Package dispatch is the generated glue between the invocation pipeline (internal/pipeline)
// and the hand-written Handler: input validation against the generated schemas, strict
// decoding, the typed call, and redaction of the output. It runs only with a pipeline.Permit,
// so the scope check is the pipeline's, made once per call.
package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"{{.GenImport}}/capapi"
	"{{.GenImport}}/schemas"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/pipeline"
)

var inputs = capability.NewValidatorSet(schemas.Input)

// Bind returns the pipeline's CallFunc over h.
func Bind(h capapi.Handler) pipeline.CallFunc {
	return func(ctx context.Context, p pipeline.Permit, args json.RawMessage) (any, error) {
		return Call(ctx, h, p, args)
	}
}

// Call runs the capability of permit p with args (a JSON object) on h: it returns the
// finalized output (JSON-marshalable), *errs.Invalid for bad input, or the handler's error.
func Call(ctx context.Context, h capapi.Handler, p pipeline.Permit, args json.RawMessage) (any, error) {
	if !p.Valid() {
		return nil, errors.New("dispatch: no permit")
	}
	switch id := p.Capability(); id {
{{- range .Caps}}
	case capapi.{{.IDConstName}}:
		in := new(capapi.{{.Input.GoName}})
		if err := inputs.Decode(id, args, in); err != nil {
			return nil, err
		}
		return capability.Call(ctx, id, in, h.{{.GoName}}, p.Scopes())
{{- end}}
	}
	return nil, fmt.Errorf("dispatch: capability %q has no case", p.Capability())
}
`

const scopesTmpl = genHeader + `
// Package scopes is the scope matrix of the spec as immutable data: which scope each
// capability needs and which scopes each role may hold. Lookups fail closed: an unknown
// capability or role gets nothing.
package scopes

import "github.com/neemias/neemias-mcp/internal/capability"

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
	map[string]string{
{{- range .Caps}}
		{{quote .ID}}: {{quote .Scope}},
{{- end}}
	},
	[]capability.RoleScopes{
{{- range .Roles}}
		{Role: {{quote .Name}}, Scopes: []string{ {{- range .Scopes}}{{quote .}}, {{end -}} }},
{{- end}}
	},
)

// Required returns the scope capability id needs; ok is false for an unknown capability,
// which callers must treat as deny.
func Required(id string) (scope string, ok bool) { return matrix.Required(id) }

// Allowed reports whether granted covers capability id. Unknown capabilities are denied.
func Allowed(id string, granted capability.ScopeSet) bool { return matrix.Allowed(id, granted) }

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
// output, built by capgen from the spec with invopop/jsonschema's document types; a test
// (internal/capgen/schemas_guard_test.go) proves invopop's reflection of the generated Go
// types gives exactly these schemas.
package schemas

import (
	"embed"
	"encoding/json"
)

//go:embed *.json
var files embed.FS

// Input returns the input schema of capability id, or nil.
func Input(id string) json.RawMessage { return read(id + ".input.json") }

// Output returns the output schema of capability id, or nil.
func Output(id string) json.RawMessage { return read(id + ".output.json") }

// OpenAPI returns the REST API's OpenAPI document (the same as gen/openapi/openapi.json).
func OpenAPI() json.RawMessage { return read("openapi.json") }

func read(name string) json.RawMessage {
	b, err := files.ReadFile(name)
	if err != nil {
		return nil
	}
	return b
}
`
