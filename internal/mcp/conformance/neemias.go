package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/dispatch"
	"github.com/neemias/neemias-mcp/gen/schemas"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/authn/authntest"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/httpx"
	"github.com/neemias/neemias-mcp/internal/mcp"
	"github.com/neemias/neemias-mcp/internal/pipeline"
	"github.com/neemias/neemias-mcp/internal/principal"
)

// demoHandler answers the one read the fixture-free scenarios exercise (roster counts, the
// first resource listed) from memory; every other capability is reported as not implemented
// before it reaches the handler, so the nil embedded interface is never called.
type demoHandler struct{ capapi.Handler }

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

// NewNeemiasServer serves the real generated registry (gen/capapi, gen/schemas, gen/scopes,
// gen/dispatch) through the runtime, with an in-memory handler that implements only roster
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
	gate, err := pipeline.New(pipeline.Config{RequiredScope: scopes.Required,
		Call: func(ctx context.Context, p pipeline.Permit, args json.RawMessage) (any, error) {
			if p.Capability() != capapi.CapRosterChildren {
				return nil, errs.ErrNotImplemented
			}
			return dispatch.Call(ctx, impl, p, args)
		}})
	if err != nil {
		return nil, err
	}
	opts := mcp.Options{
		Gate: gate,
		Name: "neemias-mcp", Title: "Neemias MCP (conformance demo)", Version: "0.1.0",
		Capabilities: capapi.Capabilities(),
		Complete:     impl.Complete,
		InputSchema:  schemas.Input,
		OutputSchema: schemas.Output,
		Verifier: authntest.Static{Tokens: map[string]principal.Principal{token: {
			UserID: uuid.New(), ChurchID: uuid.New(), Role: "ADMIN", Scopes: admin, ClientID: "conformance",
		}}},
		ResourceMetadataURL: base + "/.well-known/oauth-protected-resource/mcp",
		AllowedHosts:        httpx.LoopbackHosts(),
		AllowedOrigins:      httpx.LoopbackOrigins(),
		Logger:              logger,
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
