package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/principal"
)

// The fast path answers the requests that are most of the traffic — tools/call of the spec's
// tools and read-tool twins, resources/read, and the lists — without the SDK engine, after
// serveMCP's checks and the scope check, and writes exactly what the engine's stateless
// streamable handler would have written: the same result JSON, one SSE "message" event, the
// same status and headers. What it does not fully understand goes to the engine unchanged:
// initialize, completion, prompts, ping, server/discover, any request with a progress token,
// a cursor, inputResponses, requestState, a logLevel or clientInfo in _meta, any unknown
// parameter, Mcp-Param-* headers, app-only tools, ui:// reads, the capabilities of
// capability.Entry.Session, and requests whose routing headers the engine would refuse.
//
// Why it is not a second implementation: tools/call and resources/read run the very functions
// the engine's handlers run (toolCall, readResult; invocation carries what they read of the
// request); the lists are the engine's own answers, asked once per caller-visible set and
// variant and kept (listKey); and every outcome the fast path does not encode itself (an
// error, a capability's own raw SDK result, content it does not know) is handed over to the
// engine, whose handler returns the outcome already built instead of invoking the capability
// again (handedOver). What the fast path does write is the SDK's post-processing of a result
// (cache hints, resultType and _meta serverInfo in 2026-07-28, the SSE frame), pinned by the
// differential test (wire_fastpath_diff_test.go, FuzzFastPathEquivalence) against the engine
// on the same registry and store.
type fastPath struct {
	calls map[*entry]toolCallFunc // every tool's call, built once
	// engine are the entries always served by the engine.
	engine map[*entry]bool
	// serverInfo is 2026-07-28's result _meta, {"io.modelcontextprotocol/serverInfo": impl}.
	impl       *sdk.Implementation
	serverInfo []byte
	lists      sync.Map // listKey -> []byte: the engine's result of that list
	// caps are client capabilities as the engine reads them, by their JSON text (clientCaps).
	caps      sync.Map // string -> *sdk.ClientCapabilities
	capsCount atomic.Int64
	// answered counts the requests answered without the engine (the differential test reads
	// it, to know the fast path was taken).
	answered atomic.Int64
}

// newFastPath precomputes the fast path over h's entries; nil when Options.EngineOnly.
func (h *Handler) newFastPath() *fastPath {
	if h.opts.EngineOnly {
		return nil
	}
	f := &fastPath{calls: map[*entry]toolCallFunc{}, engine: map[*entry]bool{},
		impl: &sdk.Implementation{Name: h.opts.Name, Title: h.opts.Title, Version: h.opts.Version}}
	f.serverInfo, _ = json.Marshal(map[string]any{sdk.MetaKeyServerInfo: f.impl})
	for _, e := range h.entries {
		if e.Kind == capability.KindTool {
			f.calls[e] = h.toolCall(e)
		}
		if e.appView != nil || bytes.Contains(e.inputRaw, []byte(`"x-mcp-header"`)) || e.session {
			f.engine[e] = true
		}
	}
	return f
}

// toolCallOf returns e's call: the one built for the fast path, or a new one.
func (f *fastPath) toolCallOf(h *Handler, e *entry) toolCallFunc {
	if f != nil {
		if c, ok := f.calls[e]; ok {
			return c
		}
	}
	return h.toolCall(e)
}

// handover is an outcome the fast path built and leaves to the engine to write.
type handover struct {
	method, target string
	tool           *sdk.CallToolResult
	read           *sdk.ReadResourceResult
	err            error
}

type handoverKey struct{}

// handedOver returns the outcome the fast path built for this request, if it built one.
func handedOver(ctx context.Context, method, target string) (*handover, bool) {
	o, ok := ctx.Value(handoverKey{}).(*handover)
	if !ok || o.method != method || o.target != target {
		return nil, false
	}
	return o, true
}

// fastRequest is what the fast path reads of a request's params.
type fastRequest struct {
	name, uri string
	args      json.RawMessage
	caps      json.RawMessage // _meta's client capabilities, raw; nil if absent
}

// allowed are the params members the fast path understands, by method.
var allowed = map[string][]string{
	"tools/call":               {"name", "arguments", "_meta"},
	"resources/read":           {"uri", "_meta"},
	"tools/list":               {"_meta"},
	"resources/list":           {"_meta"},
	"resources/templates/list": {"_meta"},
}

// allowedMeta are the _meta members the fast path understands: those the engine reads only
// to classify the request, or not at all.
var allowedMeta = []string{metaProtocolVersion, metaClientCapabilities, "traceparent", "tracestate"}

// parseFast reads what the fast path needs of env's params (decoded once, by parseEnvelope);
// false when they hold anything it does not understand.
func parseFast(env *envelope) (fastRequest, bool) {
	var out fastRequest
	method := env.method
	keys, ok := allowed[method]
	if !ok {
		return out, false
	}
	params := env.params
	if params == nil {
		// tools/call and resources/read require params (the engine refuses without).
		return out, method != "tools/call" && method != "resources/read"
	}
	for k := range params {
		if !contains(keys, k) {
			return out, false
		}
	}
	if raw, ok := params["name"]; ok && (json.Unmarshal(raw, &out.name) != nil || out.name == "") {
		return out, false
	}
	if raw, ok := params["uri"]; ok && (json.Unmarshal(raw, &out.uri) != nil || out.uri == "") {
		return out, false
	}
	if (method == "tools/call" && out.name == "") || (method == "resources/read" && out.uri == "") {
		return out, false
	}
	out.args = params["arguments"]
	if raw, ok := params["_meta"]; ok {
		if raw = bytes.TrimSpace(raw); len(raw) == 0 || raw[0] != '{' {
			return out, false // a null _meta is the engine's to judge
		}
		for k := range env.meta {
			if !contains(allowedMeta, k) {
				return out, false
			}
		}
		out.caps = env.meta[metaClientCapabilities]
	}
	return out, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// serveFast answers r without the engine when it can, and returns nil; otherwise it returns the
// request to hand to the engine: r itself, or r carrying an outcome already built (handover).
// serveMCP calls it after every check and the scope check.
func (h *Handler) serveFast(w http.ResponseWriter, r *http.Request, env *envelope, era era, body []byte) *http.Request {
	f := h.fast
	if f == nil {
		return r
	}
	if _, ok := allowed[env.method]; !ok {
		return r
	}
	req, ok := parseFast(env)
	if !ok {
		return r
	}
	modern := era == eraModern
	if modern && !engineHeadersMatch(r.Header, env.method, req.name+req.uri) {
		return r
	}
	for k := range r.Header {
		if strings.HasPrefix(k, "Mcp-Param-") {
			return r
		}
	}
	// What the engine's request reports of the client's capabilities: _meta's, else the
	// session's (2026-07-28: _meta's, required; 2025: none).
	caps := f.clientCaps(req.caps)
	if modern && caps == nil {
		return r // the engine refuses a 2026-07-28 request without valid client capabilities
	}
	ctx := r.Context()
	p, _ := principal.From(ctx)
	switch env.method {
	case "tools/call":
		e := h.tools[req.name]
		if e == nil || f.engine[e] || !h.opts.Gate.Listed(p, e.ID) {
			return r
		}
		res, raw, err := f.calls[e](ctx, invocation{target: req.name, args: req.args, clientCaps: caps, modern: modern})
		if err == nil && !raw && writeSSE(w, env.id, func(b []byte) ([]byte, bool) { return f.appendTool(b, res, modern) }) {
			f.answered.Add(1)
			return nil
		}
		return r.WithContext(context.WithValue(ctx, handoverKey{}, &handover{method: env.method, target: req.name, tool: res, err: err}))
	case "resources/read":
		if strings.HasPrefix(req.uri, "ui://") {
			return r
		}
		e := env.read
		if e == nil || f.engine[e] || !h.opts.Gate.Listed(p, e.ID) {
			return r
		}
		res, raw, err := h.readResult(ctx, invocation{target: req.uri, clientCaps: caps, modern: modern, read: e, readVars: env.readVars})
		if err == nil && !raw && writeSSE(w, env.id, func(b []byte) ([]byte, bool) { return f.appendRead(ctx, b, h, e, req.uri, res, modern) }) {
			f.answered.Add(1)
			return nil
		}
		return r.WithContext(context.WithValue(ctx, handoverKey{}, &handover{method: env.method, target: req.uri, read: res, err: err}))
	}
	// The lists.
	ui := len(h.opts.Views) > 0 && wantsUI(ctx, caps)
	key := listKey{server: h.serverFor(r), method: env.method, ui: ui, version: r.Header.Get("MCP-Protocol-Version")}
	b, ok := f.lists.Load(key)
	if !ok {
		res, ok := h.askEngine(r, body)
		if !ok {
			return r
		}
		b, _ = f.lists.LoadOrStore(key, res)
	}
	list := b.([]byte)
	writeSSE(w, env.id, func(b []byte) ([]byte, bool) { return append(b, list...), true })
	f.answered.Add(1)
	return nil
}

// maxCachedCaps bounds the client capabilities kept: a few distinct texts per kind of client;
// past the bound, new texts are read each time instead of kept.
const maxCachedCaps = 256

// clientCaps is what the engine's request reports of the client capabilities in a 2026-07-28
// request's _meta (go-sdk ServerRequest.ClientCapabilities: the member decoded, re-marshalled
// and decoded again through a 32 KB buffer), read once per distinct text and kept: clients
// send the same few bytes on every request. nil when absent or unreadable, as the engine.
// The value is shared by every request with that text: nothing may change it.
func (f *fastPath) clientCaps(raw json.RawMessage) *sdk.ClientCapabilities {
	if len(raw) == 0 {
		return nil
	}
	if c, ok := f.caps.Load(string(raw)); ok {
		return c.(*sdk.ClientCapabilities)
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	c := (&sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{Meta: sdk.Meta{metaClientCapabilities: v}}}).ClientCapabilities()
	if f.capsCount.Load() < maxCachedCaps {
		if _, loaded := f.caps.LoadOrStore(string(raw), c); !loaded {
			f.capsCount.Add(1)
		}
	}
	return c
}

// engineHeadersMatch reports whether the engine accepts a 2026-07-28 request's Mcp-Method and
// Mcp-Name headers (go-sdk validateMcpHeaders): present, and equal to the body's.
func engineHeadersMatch(hd http.Header, method, name string) bool {
	if hd.Get("Mcp-Method") != method {
		return false
	}
	if method == "tools/call" || method == "resources/read" {
		return name != "" && hd.Get("Mcp-Name") == name
	}
	return true
}

// listKey names one list answer: the SDK server of the caller's visible capabilities, the
// method, the MCP Apps variant and the protocol version (the era).
type listKey struct {
	server  *sdk.Server
	method  string
	ui      bool
	version string
}

// askEngine serves r (a list request) through the engine into memory and returns the result
// JSON of its answer; false for anything but one SSE message holding a result.
func (h *Handler) askEngine(r *http.Request, body []byte) ([]byte, bool) {
	req := r.Clone(r.Context())
	req.Header.Del("Mcp-Session-Id")
	req.Header.Del("Last-Event-ID")
	req.Body = http.NoBody
	if len(body) > 0 {
		req.Body = readCloser{bytes.NewReader(body)}
	}
	req.ContentLength = int64(len(body))
	rec := &memoryWriter{header: http.Header{}}
	h.engine.ServeHTTP(rec, req)
	data, ok := bytes.CutPrefix(rec.body.Bytes(), []byte("event: message\ndata: "))
	if rec.status != 0 && rec.status != http.StatusOK || !ok || !bytes.HasSuffix(data, []byte("\n\n")) ||
		bytes.Contains(data[:len(data)-2], []byte("\n")) {
		return nil, false
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &msg) != nil || len(msg.Result) == 0 || msg.Error != nil {
		return nil, false
	}
	return bytes.Clone(msg.Result), true
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// memoryWriter is the http.ResponseWriter askEngine records the engine's answer with.
type memoryWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (m *memoryWriter) Header() http.Header { return m.header }
func (m *memoryWriter) WriteHeader(status int) {
	if m.status == 0 {
		m.status = status
	}
}
func (m *memoryWriter) Write(b []byte) (int, error) { return m.body.Write(b) }
func (m *memoryWriter) Flush()                      {}
