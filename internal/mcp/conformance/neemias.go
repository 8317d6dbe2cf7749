package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/authn/authntest"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/httpx"
	"github.com/neemias/neemias-mcp/internal/mcp"
	"github.com/neemias/neemias-mcp/internal/pipeline"
	"github.com/neemias/neemias-mcp/internal/principal"
)

// demoHandler answers roster counts from memory with a realistic output. Every other resource
// of the registry is answered with the smallest output its schema accepts ([outputInstance]),
// so the caching scenario, which reads whichever resource resources/list names first, passes
// whatever resources the spec adds; tools are reported as not implemented.
type demoHandler struct{ capapi.UnimplementedHandler }

func (demoHandler) RosterChildren(context.Context, *capapi.RosterChildrenInput) (*capapi.RosterChildrenOutput, error) {
	class := uuid.MustParse("7a6b5c4d-3e2f-4a1b-8c9d-0e1f2a3b4c5d")
	return &capapi.RosterChildrenOutput{
		TotalChildren: 3,
		Classes:       []capapi.RosterChildrenOutputClassesItem{{ClassID: class, ClassName: "Berçário", MinAge: 0, MaxAge: 2, Children: 3}},
		AgeGroups:     []capapi.RosterChildrenOutputAgeGroupsItem{{Age: 1, Children: 3}},
	}, nil
}

func (demoHandler) Complete(context.Context, string, string, string) ([]string, error) {
	return nil, nil
}

// NewNeemiasServer serves the real generated catalog (gen/capapi) through the runtime, with an in-memory handler that implements only roster
// counts. It is what the fixture-free conformance scenarios run against; the token is an ADMIN
// with every scope of that role.
func NewNeemiasServer(base, token string, logger *slog.Logger) (http.Handler, error) {
	return NewNeemiasServerWith(base, token, logger, nil)
}

// NewNeemiasServerWith is NewNeemiasServer with a last say on the options (the differential
// test's EngineOnly).
func NewNeemiasServerWith(base, token string, logger *slog.Logger, adjust func(*mcp.Options)) (http.Handler, error) {
	admin, _ := scopes.RoleScopes("ADMIN")
	impl := demoHandler{}
	var entries []capability.Entry
	for _, e := range capapi.Catalog(impl).All() {
		switch out := e.OutputSchema; {
		case e.ID == capapi.CapRosterChildren:
		case e.IsRead():
			e.Invoke = func(context.Context, capability.ScopeSet, json.RawMessage) (any, error) { return outputInstance(out) }
		default:
			e.Invoke = func(context.Context, capability.ScopeSet, json.RawMessage) (any, error) {
				return nil, errs.ErrNotImplemented
			}
		}
		entries = append(entries, e)
	}
	cat, err := capability.NewCatalog(capapi.Roles(), entries...)
	if err != nil {
		return nil, err
	}
	gate, err := pipeline.New(pipeline.Config{Catalog: cat})
	if err != nil {
		return nil, err
	}
	opts := mcp.Options{
		Gate: gate,
		Name: "neemias-mcp", Title: "Neemias MCP (conformance demo)", Version: "0.1.0",
		Complete: impl.Complete,
		Edge: &httpx.Edge{
			Verifier: authntest.Static{Tokens: map[string]principal.Principal{token: {
				UserID: uuid.New(), ChurchID: uuid.New(), Role: "ADMIN", Scopes: admin, ClientID: "conformance",
			}}},
			ResourceMetadataURL: base + "/.well-known/oauth-protected-resource/mcp",
			Hosts:               httpx.LoopbackHosts(),
			Origins:             httpx.LoopbackOrigins(),
			Logger:              logger,
		},
		Logger: logger,
	}
	if adjust != nil {
		adjust(&opts)
	}
	h, err := mcp.NewHandler(opts)
	if err != nil {
		return nil, fmt.Errorf("building the Neemias handler: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle("/sse", h)
	return mux, nil
}

// outputInstance is the smallest JSON value the output schema accepts: every required
// property, a string of its format (a uuid, a date, a date-time), 0, false, empty lists.
func outputInstance(schema json.RawMessage) (json.RawMessage, error) {
	var s jsonSchema
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("conformance: reading an output schema: %w", err)
	}
	return json.Marshal(s.instance())
}

type jsonSchema struct {
	Type       any                    `json:"type"`
	Format     string                 `json:"format"`
	Enum       []any                  `json:"enum"`
	Const      any                    `json:"const"`
	MinLength  int                    `json:"minLength"`
	Minimum    *float64               `json:"minimum"`
	Properties map[string]*jsonSchema `json:"properties"`
	Required   []string               `json:"required"`
	Items      *jsonSchema            `json:"items"`
	MinItems   int                    `json:"minItems"`
}

func (s *jsonSchema) instance() any {
	if s.Const != nil {
		return s.Const
	}
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	typ, _ := s.Type.(string)
	if list, ok := s.Type.([]any); ok && len(list) > 0 {
		typ, _ = list[0].(string)
	}
	switch typ {
	case "object":
		out := map[string]any{}
		for _, name := range s.Required {
			if p := s.Properties[name]; p != nil {
				out[name] = p.instance()
			}
		}
		return out
	case "array":
		out := []any{}
		for range s.MinItems {
			if s.Items != nil {
				out = append(out, s.Items.instance())
			}
		}
		return out
	case "integer", "number":
		if s.Minimum != nil {
			return *s.Minimum
		}
		return 0
	case "boolean":
		return false
	case "null":
		return nil
	case "string":
		switch s.Format {
		case "uuid":
			return "00000000-0000-4000-8000-000000000000"
		case "date":
			return "2026-01-04"
		case "date-time":
			return "2026-01-04T09:00:00Z"
		case "email":
			return "demo@example.com"
		case "uri":
			return "https://example.com/"
		}
		return strings.Repeat("x", max(s.MinLength, 1))
	}
	return map[string]any{}
}
