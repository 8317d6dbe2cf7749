// Package rest serves the capabilities over REST through ogen's generated server
// (gen/openapi/oas) and the generated adapter (gen/restapi). It is a second transport over the
// same dispatcher as MCP: the same bearer tokens, scopes, validation, row filters and
// redaction. Errors follow the OpenAPI document's Error schema and never carry err.Error(),
// SQL or personal data; internal failures get a correlation id that is logged.
package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/go-faster/jx"
	ogenerrors "github.com/ogen-go/ogen/ogenerrors"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/dispatch"
	"github.com/neemias/neemias-mcp/gen/openapi/oas"
	"github.com/neemias/neemias-mcp/gen/restapi"
	"github.com/neemias/neemias-mcp/internal/authn"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/reqid"
)

// Options configure the REST handler.
type Options struct {
	Handler capapi.Handler
	// Invoke, when set, replaces dispatch.Invoke (the server passes the logic's auditing
	// Invoke).
	Invoke   func(ctx context.Context, id string, args json.RawMessage, granted capability.ScopeSet) (any, error)
	Verifier authn.Verifier
	// ResourceMetadataURL goes into every WWW-Authenticate challenge (RFC 9728).
	ResourceMetadataURL string
	// PathPrefix is where the API is mounted, normally /api/v1.
	PathPrefix string
	Logger     *slog.Logger
}

// New returns the REST API as an http.Handler.
func New(o Options) (http.Handler, error) {
	if o.Handler == nil || o.Verifier == nil {
		return nil, errors.New("rest: Handler and Verifier are required")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.PathPrefix == "" {
		o.PathPrefix = "/api/v1"
	}
	rt := &runner{o: o}
	srv, err := oas.NewServer(&restapi.Adapter{Runner: rt}, rt,
		oas.WithPathPrefix(o.PathPrefix),
		oas.WithErrorHandler(rt.errorHandler),
	)
	if err != nil {
		return nil, fmt.Errorf("rest: building ogen server: %w", err)
	}
	return challenges(srv, o.ResourceMetadataURL), nil
}

// challenges adds the RFC 6750 WWW-Authenticate header to 401 and 403 answers: ogen routes
// security failures through NewError, which cannot set headers. NewError tells the writer the
// missing scope through the request context, so a 403 names it (scope="…"), as MCP's does.
func challenges(next http.Handler, metadataURL string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &challengeWriter{ResponseWriter: w, metadataURL: metadataURL, noCredentials: r.Header.Get("Authorization") == ""}
		next.ServeHTTP(cw, r.WithContext(context.WithValue(r.Context(), challengeKey{}, cw)))
	})
}

type challengeKey struct{}

type challengeWriter struct {
	http.ResponseWriter
	metadataURL string
	scope       string // the scope a 403 lacks, when known
	// noCredentials: RFC 6750 §3.1 says a challenge to a request without credentials carries
	// no error code.
	noCredentials bool
}

func (c *challengeWriter) WriteHeader(status int) {
	switch status {
	case http.StatusUnauthorized:
		if c.noCredentials {
			c.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata=%q`, c.metadataURL))
		} else {
			c.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="invalid_token", resource_metadata=%q`, c.metadataURL))
		}
	case http.StatusForbidden:
		scope := ""
		if c.scope != "" {
			scope = fmt.Sprintf(`, scope=%q`, c.scope)
		}
		c.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope"%s, resource_metadata=%q`, scope, c.metadataURL))
	}
	c.ResponseWriter.WriteHeader(status)
}

type runner struct{ o Options }

// Run implements restapi.Runner over the generated dispatcher.
func (r *runner) Run(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error) {
	p, ok := principal.From(ctx)
	if !ok {
		return nil, errs.ErrUnauthenticated
	}
	invoke := r.o.Invoke
	if invoke == nil {
		invoke = func(ctx context.Context, id string, args json.RawMessage, granted capability.ScopeSet) (any, error) {
			return dispatch.Invoke(ctx, r.o.Handler, id, args, granted)
		}
	}
	out, err := invoke(ctx, id, args, p.Scopes)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encoding output of %q: %w", id, err)
	}
	return b, nil
}

// HandleOAuth2 implements oas.SecurityHandler: it verifies the bearer token and puts the
// caller on the context. Scope checks happen in the dispatcher, which knows the capability.
func (r *runner) HandleOAuth2(ctx context.Context, _ oas.OperationName, t oas.OAuth2) (context.Context, error) {
	p, err := r.o.Verifier.Verify(ctx, t.Token)
	if err != nil {
		if errors.Is(err, authn.ErrInvalidToken) {
			return ctx, errs.ErrUnauthenticated
		}
		return ctx, err
	}
	return principal.With(ctx, p), nil
}

// NewError maps a domain error onto the REST error response.
func (r *runner) NewError(ctx context.Context, err error) *oas.ErrorStatusCode {
	var (
		inv  *errs.Invalid
		forb *errs.Forbidden
		conf *errs.Conflict
	)
	var sec *ogenerrors.SecurityError
	switch {
	case errors.As(err, &sec):
		return r.NewError(ctx, errs.ErrUnauthenticated)
	case errors.As(err, &inv):
		e := oas.Error{Code: oas.ErrorCodeInvalidInput, Message: inv.Error()}
		if inv.Field != "" {
			e.Field = oas.NewOptString(inv.Field)
		}
		return &oas.ErrorStatusCode{StatusCode: http.StatusBadRequest, Response: e}
	case errors.Is(err, errs.ErrUnauthenticated):
		return &oas.ErrorStatusCode{StatusCode: http.StatusUnauthorized, Response: oas.Error{Code: oas.ErrorCodeUnauthorized, Message: "a valid bearer token is required"}}
	case errors.As(err, &forb):
		if cw, ok := ctx.Value(challengeKey{}).(*challengeWriter); ok {
			cw.scope = forb.Scope
		}
		return &oas.ErrorStatusCode{StatusCode: http.StatusForbidden, Response: oas.Error{Code: oas.ErrorCodeForbidden, Message: forb.Error()}}
	case errors.Is(err, errs.ErrNotFound):
		return &oas.ErrorStatusCode{StatusCode: http.StatusNotFound, Response: oas.Error{Code: oas.ErrorCodeNotFound, Message: "not found"}}
	case errors.As(err, &conf):
		return &oas.ErrorStatusCode{StatusCode: http.StatusConflict, Response: oas.Error{Code: oas.ErrorCodeConflict, Message: conf.Error()}}
	}
	id := reqid.FromOrNew(ctx)
	r.o.Logger.ErrorContext(ctx, "rest: internal error", "correlation_id", id, "error", err)
	return &oas.ErrorStatusCode{StatusCode: http.StatusInternalServerError, Response: oas.Error{
		Code: oas.ErrorCodeInternal, Message: "internal error; quote the correlation id when reporting it", CorrelationID: oas.NewOptString(id),
	}}
}

// errorHandler renders errors ogen raises itself (bad parameters, bad JSON, security).
func (r *runner) errorHandler(ctx context.Context, w http.ResponseWriter, req *http.Request, err error) {
	var resp *oas.ErrorStatusCode
	var secErr *ogenerrors.SecurityError
	var paramErr *ogenerrors.DecodeParamError
	var decErr *ogenerrors.DecodeParamsError
	var bodyErr *ogenerrors.DecodeRequestError
	switch {
	case errors.As(err, &secErr):
		resp = r.NewError(ctx, errs.ErrUnauthenticated)
	case errors.As(err, &paramErr):
		// The parameter's name (DecodeParamsError.Name is the operation's); the value is not
		// echoed.
		resp = r.NewError(ctx, &errs.Invalid{Field: paramErr.Name, Reason: "has the wrong form"})
	case errors.As(err, &decErr):
		resp = r.NewError(ctx, &errs.Invalid{Reason: "a parameter has the wrong form"})
	case errors.As(err, &bodyErr):
		resp = r.NewError(ctx, &errs.Invalid{Reason: "the request body is not valid for this operation"})
	default:
		resp = r.NewError(ctx, err)
	}
	e := jx.GetEncoder()
	defer jx.PutEncoder(e)
	resp.Response.Encode(e)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(e.Bytes())
}
