package mcp

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"text/template"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/httpx"
	"github.com/neemias/neemias-mcp/internal/mcp/uritemplate"
	"github.com/neemias/neemias-mcp/internal/pipeline"
	"github.com/neemias/neemias-mcp/internal/principal"
)

// Handler serves MCP over Streamable HTTP (POST /mcp; mount the same handler at /sse as a
// compatibility alias). Build it with NewHandler.
type Handler struct {
	opts     Options
	log      *slog.Logger
	entries  []*entry // spec order
	tools    map[string]*entry
	reads    []*entry // resources and resource templates, spec order
	state    *StateSealer
	stateTTL time.Duration
	engine   *sdk.StreamableHTTPHandler
	fast     *fastPath // nil: every request goes to the engine (Options.EngineOnly)
	chain    http.Handler

	mu      sync.Mutex
	servers map[string]*sdk.Server // keyed by the visible capability set
	callers map[string]*sdk.Server // the same servers, keyed by role and scopes (serverFor)
}

// entry is one capability with everything the runtime precomputes for it.
type entry struct {
	capability.Capability
	tmpl      *uritemplate.Template
	inputRaw  json.RawMessage
	outputRaw json.RawMessage
	summary   *template.Template // the spec's summary (tool results' text starts with it), or nil
	// appView is, for an app-only tool (a view's app_tools), the view that calls it; nil
	// otherwise. App-only tools are the capability of the tool they run under another name.
	appView *capability.View
	// session: the handler talks to the client while it runs (capability.Entry.Session).
	session bool
}

// NewHandler validates opts, compiles every capability's schemas and URI template, and returns
// the HTTP handler. Every problem with the registry is reported here, at start-up, never as a
// panic at request time.
func NewHandler(opts Options) (*Handler, error) {
	if err := checkOptions(&opts); err != nil {
		return nil, err
	}
	h := &Handler{
		opts:     opts,
		log:      opts.Logger,
		tools:    map[string]*entry{},
		stateTTL: opts.StateTTL,
		servers:  map[string]*sdk.Server{},
		callers:  map[string]*sdk.Server{},
	}
	keys := opts.StateKeys
	if len(keys) == 0 {
		k := make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			return nil, fmt.Errorf("mcp: generating requestState key: %w", err)
		}
		keys = [][]byte{k}
	}
	st, err := NewStateSealer(keys...)
	if err != nil {
		return nil, fmt.Errorf("mcp: %w", err)
	}
	h.state = st

	names := map[string]string{}
	var caps []capability.Capability
	var appTools []capability.Entry // the catalog's aliases with a view: registered after the tools they run
	for _, ce := range opts.Gate.Catalog().All() {
		if ce.Runs != "" {
			appTools = append(appTools, ce)
			continue
		}
		c := ce.Capability
		caps = append(caps, c)
		e, err := h.compile(ce)
		if err != nil {
			return nil, fmt.Errorf("mcp: capability %q (%s): %w", c.ID, c.Source, err)
		}
		if prev, dup := names[kindKey(c)]; dup {
			return nil, fmt.Errorf("mcp: capability %q: wire name %q already used by %q", c.ID, c.Name, prev)
		}
		names[kindKey(c)] = c.ID
		h.entries = append(h.entries, e)
		if c.Kind == capability.KindTool {
			h.tools[c.Name] = e
		} else {
			h.reads = append(h.reads, e)
		}
	}
	// Read-tool twins come after the capabilities, so a declared tool's name always wins the
	// duplicate check below.
	for _, r := range slices.Clone(h.reads) {
		if opts.ReadToolPrefix == "" || r.NoReadTool {
			continue
		}
		twin := readTool(r, opts.ReadToolPrefix)
		if prev, dup := names[kindKey(twin.Capability)]; dup {
			return nil, fmt.Errorf("mcp: the read tool of %q would be named %q, which %q already is; set no_read_tool or rename", r.ID, twin.Name, prev)
		}
		names[kindKey(twin.Capability)] = r.ID
		h.entries = append(h.entries, twin)
		h.tools[twin.Name] = twin
	}

	if err := checkViews(opts.Views, caps); err != nil {
		return nil, err
	}
	if err := h.addAppTools(names, appTools); err != nil {
		return nil, err
	}

	h.fast = h.newFastPath()
	h.engine = sdk.NewStreamableHTTPHandler(h.serverFor, &sdk.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: false, // SSE: in JSON mode the SDK loses mid-call progress and log notifications
		// Our HostOriginGuard replaces the SDK's loopback-only check, which would also reject a
		// reverse proxy that connects over loopback with the public Host.
		DisableLocalhostProtection:   true,
		MaxRequestBodyBytes:          opts.MaxBodyBytes,
		Logger:                       sdkLogger(opts.Logger),
		PropagateRequestCancellation: true,
	})
	// The endpoint has no GET stream (stateless) and no DELETE (no sessions); its refusals are
	// JSON-RPC errors, which carry the request's id where the edge can read it.
	h.chain = opts.Edge.Wrap(http.HandlerFunc(h.serveMCP), httpx.SurfaceRules{
		Method: http.MethodPost,
		RPCID:  func(r *http.Request) json.RawMessage { return requestID(r, opts.MaxBodyBytes, opts.MaxJSONDepth) },
	})
	return h, nil
}

// readTool is the read-only tool twin of read entry r: the same capability (id, scope, schemas,
// redaction, audit), exposed as tools/call ReadToolPrefix+id.
func readTool(r *entry, prefix string) *entry {
	c := capability.Clone(r.Capability)
	c.Name = prefix + c.ID
	c.Kind = capability.KindTool
	c.Description = strings.TrimSpace(c.Description) + " The same data as the resource " + r.URITemplate + "."
	c.Annotations = capability.Annotations{ReadOnly: capability.Bool(true), Destructive: capability.Bool(false),
		Idempotent: capability.Bool(true), OpenWorld: capability.Bool(false)}
	return &entry{Capability: c, inputRaw: r.inputRaw, outputRaw: r.outputRaw, summary: r.summary, session: r.session}
}

func kindKey(c capability.Capability) string {
	if c.Kind == capability.KindTool {
		return "tool:" + c.Name
	}
	return "read:" + c.Name
}

func checkOptions(o *Options) error {
	if o.Gate == nil {
		return errors.New("mcp: Options.Gate is required")
	}
	if err := o.Edge.Check(); err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	if o.Name == "" {
		o.Name = "neemias-mcp"
	}
	if o.Version == "" {
		o.Version = "0.0.0"
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = httpx.DefaultMaxBodyBytes
	}
	if o.MaxJSONDepth <= 0 {
		o.MaxJSONDepth = httpx.DefaultMaxJSONDepth
	}
	if o.ListTTL <= 0 {
		o.ListTTL = 5 * time.Minute
	}
	if o.DiscoverTTL <= 0 {
		o.DiscoverTTL = time.Hour
	}
	if o.StateTTL <= 0 {
		o.StateTTL = 10 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return nil
}

func (h *Handler) compile(ce capability.Entry) (*entry, error) {
	c := ce.Capability
	e := &entry{Capability: c, session: ce.Session}
	e.inputRaw = ce.InputSchema
	if len(e.inputRaw) == 0 {
		return nil, errors.New("no input schema")
	}
	var root struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(e.inputRaw, &root); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	if root.Type != "object" {
		return nil, errors.New(`input schema root must be "type": "object"`)
	}
	if raw := ce.OutputSchema; len(raw) > 0 {
		if !json.Valid(raw) {
			return nil, errors.New("output schema is not valid JSON")
		}
		e.outputRaw = raw
	}
	if c.Summary != "" {
		t, err := capability.ParseSummary(c.Summary)
		if err != nil {
			return nil, fmt.Errorf("summary: %w", err)
		}
		e.summary = t
	}
	switch c.Kind {
	case capability.KindTool:
	case capability.KindResource, capability.KindResourceTemplate:
		t, err := uritemplate.Compile(c.URITemplate)
		if err != nil {
			return nil, err
		}
		for _, v := range t.Variables() {
			if _, ok := c.Input(v); !ok {
				return nil, fmt.Errorf("template variable %q is not a declared input", v)
			}
		}
		e.tmpl = t
	default:
		return nil, fmt.Errorf("unknown kind %q", c.Kind)
	}
	return e, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rw := newResponseWriter(w)
	h.chain.ServeHTTP(rw, r.WithContext(context.WithValue(r.Context(), responseWriterKey{}, rw)))
}

// routingHeaders are the headers that route a request (and that intermediaries may route
// on): each must appear at most once, or one layer could act on a value another never checked.
var routingHeaders = []string{"MCP-Protocol-Version", "Mcp-Method", "Mcp-Name"}

// serveMCP runs the MCP-aware checks on an authenticated POST, then hands it to the SDK.
func (h *Handler) serveMCP(w http.ResponseWriter, r *http.Request) {
	for _, name := range routingHeaders {
		if len(r.Header.Values(name)) > 1 {
			httpx.WriteRPCError(w, http.StatusBadRequest, nil, httpx.RPCError{Code: httpx.CodeInvalidRequest, Message: fmt.Sprintf("the %s header must appear at most once", name)})
			return
		}
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" && !isJSONMediaType(ct) {
		httpx.WriteRPCError(w, http.StatusUnsupportedMediaType, nil, httpx.RPCError{Code: httpx.CodeInvalidRequest, Message: "Content-Type must be application/json"})
		return
	}
	if !acceptsBoth(r.Header.Values("Accept")) {
		httpx.WriteRPCError(w, http.StatusNotAcceptable, nil, httpx.RPCError{Code: httpx.CodeInvalidRequest, Message: "Accept must list both application/json and text/event-stream"})
		return
	}
	body, err := httpx.ReadBody(w, r, h.opts.MaxBodyBytes)
	if err != nil {
		if errors.Is(err, httpx.ErrBodyTooLarge) {
			httpx.WriteRPCError(w, http.StatusRequestEntityTooLarge, nil, httpx.RPCError{Code: httpx.CodeInvalidRequest, Message: fmt.Sprintf("request body exceeds %d bytes", h.opts.MaxBodyBytes)})
			return
		}
		httpx.WriteRPCError(w, http.StatusBadRequest, nil, httpx.RPCError{Code: httpx.CodeParseError, Message: "could not read the request body"})
		return
	}
	if err := httpx.CheckJSON(body, h.opts.MaxJSONDepth); err != nil {
		var je *httpx.JSONError
		errors.As(err, &je)
		httpx.WriteRPCError(w, http.StatusBadRequest, nil, httpx.RPCError{Code: je.Code, Message: je.Reason})
		return
	}
	env, rpcErr := parseEnvelope(body)
	if rpcErr != nil {
		var id json.RawMessage
		if env != nil {
			id = env.id
		}
		httpx.WriteRPCError(w, http.StatusBadRequest, id, *rpcErr)
		return
	}
	if h.opts.Observe != nil {
		r = r.WithContext(h.opts.Observe(r.Context(), env.method, env.traceparent, env.tracestate))
	}
	if env.isNotification {
		// Stateless: no notification a client may send changes anything here (no session to
		// initialize, no in-flight request on another connection to cancel).
		w.WriteHeader(http.StatusAccepted)
		return
	}
	era, rpcErr := classify(env, r.Header.Get("MCP-Protocol-Version"))
	if rpcErr != nil {
		httpx.WriteRPCError(w, http.StatusBadRequest, env.id, *rpcErr)
		return
	}
	if era == eraLegacy && len(h.opts.Views) > 0 {
		// MCP Apps in the 2025 eras, statelessly (uisession.go).
		if env.method == "initialize" {
			if initializeDeclaresUI(body) {
				issueUISession(r)
			}
		} else if isUISessionID(r.Header.Get("Mcp-Session-Id")) {
			r = r.WithContext(withLegacyUI(r.Context()))
		}
	}
	if env.method == "tools/call" && h.tools[env.name] == nil {
		h.unknownTool(w, env)
		return
	}
	if e := h.tools[env.name]; env.method == "tools/call" && e.appView != nil && !h.declaredUI(r.Context(), era, env) {
		h.refuseAppOnly(w, r, env, e, body)
		return
	}
	e, vars := h.target(env)
	if env.method == "resources/read" {
		env.read, env.readVars = e, vars
	}
	if e != nil {
		// The pipeline's scope check, made here (once) because its answer is an HTTP status:
		// 403 insufficient_scope lets the client step up before any JSON-RPC is spoken. The
		// permit travels on the context to the handler the SDK calls.
		var args json.RawMessage
		if vars != nil {
			args, _ = e.ArgsFromStrings(vars) // for the audit entry's ids only; errors come later
		}
		permit, err := h.opts.Gate.Authorize(r.Context(), e.ID, args)
		if err != nil {
			var f *errs.Forbidden
			if errors.As(err, &f) && !f.Unreachable {
				// Step-up: the challenge names the scopes held plus the one needed, so a client
				// that re-authorizes with exactly these (the TypeScript SDK 1.x does) keeps the
				// others. A scope the role can never hold gets no challenge: not found, like a
				// capability that is not listed.
				httpx.WriteInsufficientScope(w, h.opts.Edge.MetadataURL(r.Context()), f.StepUpScopes()...)
				return
			}
			h.notFoundEarly(w, env, r)
			return
		}
		r = r.WithContext(pipeline.WithPermit(r.Context(), permit))
	}
	if r = h.serveFast(w, r, env, era, body); r == nil {
		return // answered without the engine, as the engine would have (fastpath.go)
	}
	// Session and resumption headers mean nothing to a stateless server (but for the UI
	// session id, read above): ignore them (the SDK would refuse Last-Event-ID on a POST).
	r.Header.Del("Mcp-Session-Id")
	r.Header.Del("Last-Event-ID")
	// The SDK never sees the client's id, only a token it echoes; the id's own bytes go back
	// in the response (rpcid.go).
	hidden, idw, err := hideID(w, body)
	if err != nil {
		h.log.ErrorContext(r.Context(), "hiding the JSON-RPC id from the engine", "error", err)
		httpx.WriteRPCError(w, http.StatusInternalServerError, env.id, httpx.RPCError{Code: httpx.CodeInternalError, Message: "internal error"})
		return
	}
	httpx.SetBody(r, hidden)
	h.engine.ServeHTTP(idw, r)
}

// notFoundEarly answers a request for a capability whose scope is unknown (fail closed) as if
// it did not exist.
func (h *Handler) notFoundEarly(w http.ResponseWriter, env *envelope, r *http.Request) {
	if env.method == "tools/call" {
		h.unknownTool(w, env)
		return
	}
	code, status := int64(CodeResourceNotFoundLegacy), http.StatusOK
	if env.metaPresent {
		code, status = httpx.CodeInvalidParams, http.StatusBadRequest
	}
	httpx.WriteRPCError(w, status, env.id, httpx.RPCError{Code: code, Message: "Resource not found", Data: map[string]string{"uri": env.uri}})
}

// unknownTool answers a tools/call of a tool that does not exist (or is unreachable) the way the
// SDK would, -32602 with HTTP 400 (modern) or 200 (legacy), but without echoing the requested
// name: it is the caller's free text, and errors never repeat input values.
func (h *Handler) unknownTool(w http.ResponseWriter, env *envelope) {
	status := http.StatusOK
	if env.metaPresent {
		status = http.StatusBadRequest
	}
	httpx.WriteRPCError(w, status, env.id, httpx.RPCError{Code: httpx.CodeInvalidParams, Message: "unknown tool: call tools/list for the tools you may use"})
}

// target returns the capability a tools/call or resources/read addresses, if any, and the
// URI template's variables of a read.
func (h *Handler) target(env *envelope) (*entry, map[string]string) {
	switch env.method {
	case "tools/call":
		return h.tools[env.name], nil
	case "resources/read":
		return h.matchRead(env.uri)
	}
	return nil, nil
}

// matchRead finds the resource or template that strictly matches uri.
func (h *Handler) matchRead(uri string) (*entry, map[string]string) {
	for _, e := range h.reads {
		if vars, ok := e.tmpl.Match(uri); ok {
			return e, vars
		}
	}
	return nil, nil
}

// isJSONMediaType reports whether a Content-Type is application/json, parameters allowed.
func isJSONMediaType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

func acceptsBoth(values []string) bool {
	if len(values) == 1 && values[0] == "application/json, text/event-stream" {
		return true // what every MCP client sends, without splitting it
	}
	var jsonOK, sseOK bool
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				sseOK = true
			case "*/*":
				jsonOK, sseOK = true, true
			}
		}
	}
	return jsonOK && sseOK
}

// visible returns the capabilities listed for the caller (what its role can reach), in spec
// order.
func (h *Handler) visible(p principal.Principal) []*entry {
	var out []*entry
	for _, e := range h.entries {
		if h.opts.Gate.Listed(p, e.ID) {
			out = append(out, e)
		}
	}
	return out
}

// serverFor returns the SDK server for the request's caller: one server per distinct set of
// visible capabilities, built once and cached (at most 2^len(scopes) of them), so tools/list and
// resources/list show only what the caller may use. The SDK calls this for every request.
//
// What a caller sees depends only on its role and scopes, so the server is also kept by those
// (callers, at most maxCallerKeys of them): a request of a known kind of caller finds its
// server without walking the catalog.
func (h *Handler) serverFor(r *http.Request) *sdk.Server {
	p, _ := principal.From(r.Context())
	caller := p.Role + "\x00" + p.Scopes.String()
	h.mu.Lock()
	s, ok := h.callers[caller]
	h.mu.Unlock()
	if ok {
		return s
	}
	vis := h.visible(p)
	ids := make([]string, len(vis))
	for i, e := range vis {
		ids[i] = e.ID
	}
	key := strings.Join(ids, ",")
	h.mu.Lock()
	defer h.mu.Unlock()
	if s, ok = h.servers[key]; !ok {
		s = h.buildServer(vis)
		h.servers[key] = s
	}
	if len(h.callers) < maxCallerKeys {
		h.callers[caller] = s
	}
	return s
}

// maxCallerKeys bounds serverFor's servers by caller: roles times the scope sets tokens carry.
const maxCallerKeys = 1024
