// Package rest serves the capabilities over REST: ogen's generated router (gen/openapi/oas)
// finds the operation and the gate's catalog names its capability (capability.Entry.Operation); the arguments (path and query
// parameters, or a tool's JSON body) go to the pipeline as they came, validated once by the
// same validator as MCP's. It is a second transport over the same invocation pipeline as MCP
// (internal/pipeline) and behind the same edge (httpx.Edge): Host/Origin rules, a query
// string read as written (no ";" separator, no parameter twice: httpx.CheckQuery), one bearer
// credential, the shared per-caller rate limit, the scope check before any body is read, then
// the body limit and the strict JSON check. Errors follow the
// OpenAPI document's Error schema, an RFC 9457 problem (application/problem+json) with a stable
// type URI per error kind; they are chosen by errs.KindOf, and never carry err.Error(), SQL or
// personal data; internal failures get a correlation id that is logged.
package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"

	"github.com/go-faster/jx"
	ogenerrors "github.com/ogen-go/ogen/ogenerrors"

	"github.com/neemias/neemias-mcp/gen/openapi/oas"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/httpx"
	"github.com/neemias/neemias-mcp/internal/pipeline"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/reqid"
)

// Options configure the REST handler. Gate and Edge are required.
type Options struct {
	// Gate is the invocation pipeline, shared with MCP; its catalog names the capability of
	// each operation.
	Gate *pipeline.Gate
	// Edge is what stands in front of the API, shared with MCP (httpx.Edge): the Host/Origin
	// allowlist, the bearer check and its challenges, the per-caller rate limit (one budget
	// across both surfaces), the per-address limit of wrong API keys.
	Edge *httpx.Edge
	// Keys, when set, are the credentials REST takes besides the edge's bearer tokens (church
	// API keys, internal/apikey; MCP takes none).
	Keys *httpx.Keys
	// Hosts are Host values REST answers besides the edge's (the API host of a split origin).
	Hosts []string
	// MaxBodyBytes and MaxJSONDepth bound request bodies (defaults as MCP's).
	MaxBodyBytes int64
	MaxJSONDepth int
	// PathPrefix is where the API is mounted, normally /api/v1.
	PathPrefix string
	Logger     *slog.Logger
}

// New returns the REST API as an http.Handler.
func New(o Options) (http.Handler, error) {
	if o.Gate == nil {
		return nil, errors.New("rest: Options.Gate is required")
	}
	if err := o.Edge.Check(); err != nil {
		return nil, fmt.Errorf("rest: %w", err)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.PathPrefix == "" {
		o.PathPrefix = "/api/v1"
	}
	rt := &runner{o: o, ops: map[string]*capability.Capability{}}
	for _, e := range o.Gate.Catalog().All() {
		if e.Operation != "" {
			c := e.Capability
			rt.ops[e.Operation] = &c
		}
	}
	// Of ogen's server only the router runs: FindPath (authorize) and ServeHTTP's 404 and 405
	// for what it does not find. ogen generates the router only with the handlers
	// (internal/capgen/ogen.yml), which are never reached: UnimplementedHandler and rt's
	// security methods stand in for them.
	srv, err := oas.NewServer(oas.UnimplementedHandler{}, rt,
		oas.WithPathPrefix(o.PathPrefix),
		oas.WithErrorHandler(rt.errorHandler),
		oas.WithNotFound(func(w http.ResponseWriter, _ *http.Request) {
			writeEdgeError(w, http.StatusNotFound, string(oas.ErrorCodeNotFound), "no such operation; see /api/openapi.json")
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("rest: building ogen server: %w", err)
	}
	// The body rules are applied behind the edge, after the scope check (authorize); a
	// ";"-separated or repeated query parameter is refused at the edge, naming it, before
	// anything reads the query.
	h := rt.authorize(srv, httpx.BodyCheck{MaxBytes: o.MaxBodyBytes, MaxDepth: o.MaxJSONDepth, Errors: writeEdgeError})
	h = o.Edge.Wrap(h, httpx.SurfaceRules{
		Errors: writeEdgeError,
		Query:  &httpx.QueryCheck{Refuse: writeQueryError},
		Hosts:  o.Hosts,
		Keys:   o.Keys,
	})
	return noStore(h), nil
}

// authorize finds the capability of the request's route (ogen's generated router) and runs the
// pipeline's scope check before anything reads the body: a missing scope is a 403 with the
// RFC 6750 challenge naming it, so a client can step up. Unknown routes pass on to ogen, which
// answers 404 (the Error object) or 405. A read then runs on its parameters
// ([runner.invokeParams]); a tool, after the edge's body check, on its body
// ([runner.invokeBody]). Neither goes through ogen's decoders: the pipeline validates once.
func (r *runner) authorize(srv *oas.Server, body httpx.BodyCheck) http.Handler {
	viaOgen := body.Wrap(srv)
	direct := body.Wrap(http.HandlerFunc(r.invokeBody))
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		route, ok := srv.FindPath(req.Method, req.URL)
		if !ok {
			viaOgen.ServeHTTP(w, req)
			return
		}
		c, ok := r.ops[route.Name()]
		if !ok {
			r.writeError(w, req.Context(), fmt.Errorf("rest: operation %q has no capability", route.Name()))
			return
		}
		id := c.ID
		// The arguments the call names, for the audit entry of a refusal (its record ids): a
		// read's path parameters, a tool's body. The body is read here but judged by the
		// edge's rules only after the scope check, so a caller without the scope is refused
		// whatever the body holds.
		var args json.RawMessage
		var readErr error
		if req.Method == http.MethodPost {
			var raw []byte
			if raw, readErr = httpx.ReadBody(w, req, body.Limit()); readErr == nil {
				args = raw
				httpx.SetBody(req, raw)
			}
		} else {
			args = pathArgs(route)
		}
		permit, err := r.o.Gate.Authorize(req.Context(), id, args)
		if err != nil {
			var f *errs.Forbidden
			if errors.As(err, &f) && !f.Unreachable { // step-up keeps the scopes held; see internal/mcp
				httpx.SetInsufficientScope(w.Header(), r.o.Edge.MetadataURL(req.Context()), f.StepUpScopes()...)
			}
			r.writeError(w, req.Context(), err)
			return
		}
		if readErr != nil {
			body.RefuseRead(w, readErr)
			return
		}
		ctx := pipeline.WithPermit(req.Context(), permit)
		if req.Method == http.MethodPost {
			direct.ServeHTTP(w, req.WithContext(withBodyCapability(ctx, id)))
			return
		}
		r.invokeParams(w, req.WithContext(ctx), route, c, permit)
	})
}

// pathArgs are a route's path parameters as a JSON object of strings, for a refusal's audit
// entry (it keeps the record ids among them); nil for none.
func pathArgs(route oas.Route) json.RawMessage {
	vars := pathVars(route)
	if len(vars) == 0 {
		return nil
	}
	b, _ := json.Marshal(vars)
	return b
}

// pathVars are a route's path parameters by name.
func pathVars(route oas.Route) map[string]string {
	vars := map[string]string{}
	names := pathNames(route.PathPattern())
	for i, v := range route.Args() {
		if i < len(names) {
			vars[names[i]] = v
		}
	}
	return vars
}

// invokeParams runs a read (GET) on its path and query parameters as strings, converted by the
// inputs' declared types exactly as MCP converts URI template variables
// (capability.ArgsFromStrings), then validated once by the pipeline's validator: ogen's
// parameter decoders are not run, so a bad id reads "id: must be a UUID such as …" on both
// transports. Query parameters that are not inputs are ignored, as the OpenAPI document's
// operations would; an input given twice is refused.
func (r *runner) invokeParams(w http.ResponseWriter, req *http.Request, route oas.Route, c *capability.Capability, permit pipeline.Permit) {
	ctx := req.Context()
	vars := pathVars(route)
	query := req.URL.Query()
	for _, in := range c.Inputs {
		vs, given := query[in.Name]
		if !given {
			continue
		}
		if _, inPath := vars[in.Name]; inPath || len(vs) > 1 {
			r.writeError(w, ctx, &errs.Invalid{Field: in.Name, Reason: "must be given at most once"})
			return
		}
		vars[in.Name] = vs[0]
	}
	args, err := c.ArgsFromStrings(vars)
	if err != nil {
		r.writeError(w, ctx, err)
		return
	}
	r.answer(w, ctx, permit, args)
}

// pathNames are the parameter names of an OpenAPI path pattern, in order.
func pathNames(pattern string) []string {
	var names []string
	for {
		i := strings.IndexByte(pattern, '{')
		if i < 0 {
			return names
		}
		j := strings.IndexByte(pattern[i:], '}')
		if j < 0 {
			return names
		}
		names = append(names, pattern[i+1:i+j])
		pattern = pattern[i+j+1:]
	}
}

// answer invokes the permitted capability with args and writes its output, encoded once by
// the pipeline, or the error.
func (r *runner) answer(w http.ResponseWriter, ctx context.Context, permit pipeline.Permit, args json.RawMessage) {
	res, err := r.o.Gate.Invoke(ctx, permit, args)
	if err != nil {
		r.writeError(w, ctx, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(res.JSON)
}

type bodyCapabilityKey struct{}

func withBodyCapability(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, bodyCapabilityKey{}, id)
}

// invokeBody runs the capability of an operation with a JSON body (the tools: POST
// /tools/<name>) on the body as it came, already through the edge's body check. ogen's request
// decoder and validator are not run: the arguments are validated once, by the pipeline's one
// validator (internal/capability.Validator), so a REST caller gets the same field-naming
// message as an MCP caller ("child_id: must be a UUID …"), never ogen's generic one, and
// nothing is decoded, re-encoded and validated a second time.
func (r *runner) invokeBody(w http.ResponseWriter, req *http.Request) {
	ctx := req.Context()
	id, _ := ctx.Value(bodyCapabilityKey{}).(string)
	permit, ok := pipeline.PermitFrom(ctx, id)
	if !ok { // authorize issued it just now; fail closed all the same
		r.writeError(w, ctx, fmt.Errorf("rest: %q reached the body handler without a permit", id))
		return
	}
	if mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		r.writeError(w, ctx, &errs.Invalid{Reason: "the request body must be application/json"})
		return
	}
	args, err := io.ReadAll(req.Body) // in memory: the body check has read and bounded it
	if err != nil {
		r.writeError(w, ctx, &errs.Invalid{Reason: "could not read the request body"})
		return
	}
	if len(bytes.TrimSpace(args)) == 0 {
		r.writeError(w, ctx, &errs.Invalid{Reason: "a JSON object body is required"})
		return
	}
	r.answer(w, ctx, permit, args)
}

// noStore marks every answer uncacheable: they hold children's data and depend on the caller.
func noStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

type runner struct {
	o   Options
	ops map[string]*capability.Capability // by ogen operation: the capability it serves
}

// HandleOAuth2 implements oas.SecurityHandler. The edge has verified the bearer token already
// (one credential, one verifier), so this only confirms the caller is on the context.
func (r *runner) HandleOAuth2(ctx context.Context, _ oas.OperationName, _ oas.OAuth2) (context.Context, error) {
	if _, ok := principal.From(ctx); !ok {
		return ctx, errs.ErrUnauthenticated
	}
	return ctx, nil
}

// HandleApiKey implements oas.SecurityHandler for API keys: verified at the edge too (the REST
// verifier accepts both credentials), so the same confirmation.
func (r *runner) HandleApiKey(ctx context.Context, op oas.OperationName, _ oas.ApiKey) (context.Context, error) {
	return r.HandleOAuth2(ctx, op, oas.OAuth2{})
}

// restError is how REST answers one error kind.
type restError struct {
	status  int
	code    oas.ErrorCode
	message string // fixed message; "" means the error's own (agent-facing) text
}

// byKind is REST's table of the error kinds (errs.KindOf). Each code has its RFC 9457 problem
// type and title (problems).
var byKind = map[errs.Kind]restError{
	errs.KindInvalid:         {http.StatusBadRequest, oas.ErrorCodeInvalidInput, ""},
	errs.KindNotFound:        {http.StatusNotFound, oas.ErrorCodeNotFound, "not found"},
	errs.KindUnauthenticated: {http.StatusUnauthorized, oas.ErrorCodeUnauthorized, "a valid bearer token is required"},
	errs.KindForbidden:       {http.StatusForbidden, oas.ErrorCodeForbidden, ""},
	errs.KindConflict:        {http.StatusConflict, oas.ErrorCodeConflict, ""},
	errs.KindNotImplemented:  {http.StatusNotImplemented, oas.ErrorCodeNotImplemented, "this capability is not available yet"},
	errs.KindUnavailable:     {http.StatusServiceUnavailable, oas.ErrorCodeUnavailable, "temporarily unavailable (the database did not answer); retry in a few seconds"},
	errs.KindInternal:        {http.StatusInternalServerError, oas.ErrorCodeInternal, "internal error; quote the correlation id when reporting it"},
}

// problems are the stable RFC 9457 type and title of every error code, those of byKind and
// those the edge writes (rate_limited, too_large, unavailable).
var problems = map[oas.ErrorCode]struct {
	typ   oas.ErrorType
	title string
}{
	oas.ErrorCodeInvalidInput:   {oas.ErrorTypeUrnNeemiasProblemInvalidInput, "Invalid input"},
	oas.ErrorCodeNotFound:       {oas.ErrorTypeUrnNeemiasProblemNotFound, "Not found"},
	oas.ErrorCodeUnauthorized:   {oas.ErrorTypeUrnNeemiasProblemUnauthorized, "Unauthorized"},
	oas.ErrorCodeForbidden:      {oas.ErrorTypeUrnNeemiasProblemForbidden, "Forbidden"},
	oas.ErrorCodeConflict:       {oas.ErrorTypeUrnNeemiasProblemConflict, "Conflict"},
	oas.ErrorCodeNotImplemented: {oas.ErrorTypeUrnNeemiasProblemNotImplemented, "Not implemented"},
	oas.ErrorCodeRateLimited:    {oas.ErrorTypeUrnNeemiasProblemRateLimited, "Too many requests"},
	oas.ErrorCodeTooLarge:       {oas.ErrorTypeUrnNeemiasProblemTooLarge, "Request too large"},
	oas.ErrorCodeUnavailable:    {oas.ErrorTypeUrnNeemiasProblemUnavailable, "Temporarily unavailable"},
	oas.ErrorCodeInternal:       {oas.ErrorTypeUrnNeemiasProblemInternal, "Internal error"},
}

// problem is the RFC 9457 object of code at status with detail.
func problem(status int, code oas.ErrorCode, detail string) oas.Error {
	p, ok := problems[code]
	if !ok {
		code, p = oas.ErrorCodeInternal, problems[oas.ErrorCodeInternal]
	}
	return oas.Error{Type: p.typ, Title: p.title, Status: status, Code: code, Detail: detail}
}

// NewError maps a pipeline error onto the REST error response by its kind.
func (r *runner) NewError(ctx context.Context, err error) *oas.ErrorStatusCode {
	kind := errs.KindOf(err)
	m, ok := byKind[kind]
	if !ok {
		kind, m = errs.KindInternal, byKind[errs.KindInternal]
	}
	e := problem(m.status, m.code, m.message)
	switch kind {
	case errs.KindInvalid:
		inv, _ := errs.AsInvalid(err)
		e.Detail = errs.Shown(inv.Error(), inv.Detail) // the detail is the caller's; Error() (logs) omits it
		if inv.Field != "" {
			e.Field = oas.NewOptString(inv.Field)
		}
	case errs.KindForbidden, errs.KindConflict:
		e.Detail = domainMessage(err)
	case errs.KindInternal:
		id := reqid.FromOrNew(ctx)
		r.o.Logger.ErrorContext(ctx, "rest: internal error", "correlation_id", id, "error", err)
		e.CorrelationID = oas.NewOptString(id)
	}
	return &oas.ErrorStatusCode{StatusCode: m.status, Response: e}
}

// domainMessage is the agent-facing text of a Forbidden or Conflict (no personal data: these
// texts are written by the server, never from input). A Conflict's detail (a restriction's
// note, for the caller only) follows its reason (errs.Shown); its Error(), which logs use,
// leaves it out.
func domainMessage(err error) string {
	var f *errs.Forbidden
	if errors.As(err, &f) {
		return f.Error()
	}
	var c *errs.Conflict
	if errors.As(err, &c) {
		return errs.Shown(c.Error(), c.Detail)
	}
	return "refused"
}

// errorHandler renders errors ogen raises itself (bad parameters, bad JSON, security).
func (r *runner) errorHandler(ctx context.Context, w http.ResponseWriter, _ *http.Request, err error) {
	var secErr *ogenerrors.SecurityError
	var paramErr *ogenerrors.DecodeParamError
	var decErr *ogenerrors.DecodeParamsError
	var bodyErr *ogenerrors.DecodeRequestError
	switch {
	case errors.As(err, &secErr):
		err = errs.ErrUnauthenticated
	case errors.As(err, &paramErr):
		// The parameter's name (DecodeParamsError.Name is the operation's); the value is not
		// echoed.
		err = &errs.Invalid{Field: paramErr.Name, Reason: "has the wrong form"}
	case errors.As(err, &decErr):
		err = &errs.Invalid{Reason: "a parameter has the wrong form"}
	case errors.As(err, &bodyErr):
		err = &errs.Invalid{Reason: "the request body is not valid for this operation"}
	}
	r.writeError(w, ctx, err)
}

func (r *runner) writeError(w http.ResponseWriter, ctx context.Context, err error) {
	resp := r.NewError(ctx, err)
	writeJSON(w, resp.StatusCode, resp.Response)
}

// writeEdgeError is the edge's ErrorWriter for REST: the documented Error object.
func writeEdgeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, problem(status, oas.ErrorCode(code), message))
}

// writeQueryError answers a query string the edge refuses (httpx.CheckQuery): 400
// invalid_input naming the parameter in field, worded as every invalid parameter is
// ("invalid input: from: must be given at most once").
func writeQueryError(w http.ResponseWriter, qe *httpx.QueryError) {
	inv := &errs.Invalid{Field: qe.Param, Reason: qe.Reason}
	e := problem(http.StatusBadRequest, oas.ErrorCodeInvalidInput, inv.Error())
	e.Field = oas.NewOptString(qe.Param)
	writeJSON(w, http.StatusBadRequest, e)
}

func writeJSON(w http.ResponseWriter, status int, e oas.Error) {
	enc := jx.GetEncoder()
	defer jx.PutEncoder(enc)
	e.Encode(enc)
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(enc.Bytes())
}
