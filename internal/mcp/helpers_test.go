package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/internal/authn/authntest"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/httpx"
	"github.com/neemias/neemias-mcp/internal/mcp"
	"github.com/neemias/neemias-mcp/internal/pipeline"
	"github.com/neemias/neemias-mcp/internal/principal"
)

// A small hand-made registry shaped like spec/capabilities.yaml, so the runtime is tested
// independently of the generator's output.
const (
	childA   = "3f1c2a9e-8b7d-4c6e-9f0a-1b2c3d4e5f60"
	classA   = "7a6b5c4d-3e2f-4a1b-8c9d-0e1f2a3b4c5d"
	canary   = "CANARY_NOME_7F3"
	tokAdmin = "tok-admin"
	tokVol   = "tok-volunteer"
	tokNone  = "tok-none"
)

var fakeCaps = []capability.Capability{
	{ID: "roster_children", Name: "neemias://roster/children", Kind: capability.KindResource, URITemplate: "neemias://roster/children",
		Title: "Children roster counts", Description: "Counts per class.", MIMEType: "application/json", Scope: "roster:read", TTLMillis: 60000},
	{ID: "roster_child", Name: "neemias://roster/children/{id}", Kind: capability.KindResourceTemplate, URITemplate: "neemias://roster/children/{id}",
		Title: "One child", Description: "One child's record.", MIMEType: "application/json", Scope: "children:read", TTLMillis: 30000,
		Inputs: []capability.Variable{{Name: "id", Type: "string", Format: "uuid", Required: true}}},
	{ID: "attendance_summary", Name: "neemias://attendance/summary{?from,to,class_id}", Kind: capability.KindResourceTemplate,
		URITemplate: "neemias://attendance/summary{?from,to,class_id}", Title: "Attendance", Description: "Check-ins per day.",
		MIMEType: "application/json", Scope: "attendance:read", TTLMillis: 60000,
		Inputs: []capability.Variable{{Name: "from", Type: "string", Format: "date"}, {Name: "to", Type: "string", Format: "date"},
			{Name: "class_id", Type: "string", Format: "uuid", Completable: true}}},
	{ID: "neemias_checkin_register", Name: "neemias_checkin_register", Kind: capability.KindTool, Title: "Register a check-in",
		Description: "Checks a child in.", Scope: "checkins:write", Annotations: capability.Annotations{ReadOnly: ptr(false), Idempotent: ptr(true)}},
	{ID: "neemias_child_enroll", Name: "neemias_child_enroll", Kind: capability.KindTool, Title: "Enroll a child",
		Description: "Enrolls a child.", Scope: "children:write"},
}

func ptr[T any](v T) *T { return &v }

var fakeInput = map[string]string{
	"roster_children":    `{"type":"object","additionalProperties":false}`,
	"roster_child":       `{"type":"object","additionalProperties":false,"required":["id"],"properties":{"id":{"type":"string","format":"uuid"}}}`,
	"attendance_summary": `{"type":"object","additionalProperties":false,"properties":{"from":{"type":"string","format":"date"},"to":{"type":"string","format":"date"},"class_id":{"type":"string","format":"uuid"}}}`,
	"neemias_checkin_register": `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,"required":["child_id"],
		"properties":{"child_id":{"type":"string","format":"uuid"},"service_date":{"type":"string","format":"date"}}}`,
	"neemias_child_enroll": `{"type":"object","additionalProperties":false,"required":["name","guardian"],"properties":{
		"name":{"type":"string","minLength":2,"maxLength":120},
		"guardian":{"type":"object","additionalProperties":false,"required":["phone","relationship"],"properties":{
			"phone":{"type":"string","pattern":"^\\+?[0-9 ()-]{8,20}$"},"relationship":{"type":"string","enum":["mother","father","other"]}}}}}`,
}

var fakeOutput = map[string]string{
	"roster_children":          `{"type":"object","additionalProperties":false,"required":["total_children"],"properties":{"total_children":{"type":"integer"}}}`,
	"roster_child":             `{"type":"object","additionalProperties":false,"required":["child_id","name"],"properties":{"child_id":{"type":"string","format":"uuid"},"name":{"type":"string"}}}`,
	"attendance_summary":       `{"type":"object","required":["from","to","total_checkins"],"properties":{"from":{"type":"string","format":"date"},"to":{"type":"string","format":"date"},"total_checkins":{"type":"integer"}}}`,
	"neemias_checkin_register": `{"type":"object","additionalProperties":false,"required":["checkin_id","child_id"],"properties":{"checkin_id":{"type":"string","format":"uuid"},"child_id":{"type":"string","format":"uuid"}}}`,
	"neemias_child_enroll":     `{"type":"object","required":["child_id"],"properties":{"child_id":{"type":"string","format":"uuid"}}}`,
}

// fakeSpec is the fake registry a test serves: the capabilities, their output schemas, the
// call behind the one validator, and the refusal hook. The zero value is the default
// (fakeCaps, fakeOutput, fakeInvoke, no hook).
type fakeSpec struct {
	caps      []capability.Capability
	output    func(id string) json.RawMessage
	call      func(ctx context.Context, id string, args json.RawMessage) (any, error)
	onRefused pipeline.RefusalHook
	// views' app-only tools become catalog aliases, as server.New adds them
	views []capability.View
}

// entries are s's catalog entries: each validates its arguments against fakeInput, then calls.
func (s fakeSpec) entries() []capability.Entry {
	caps, output, call := s.caps, s.output, s.call
	if caps == nil {
		caps = fakeCaps
	}
	if output == nil {
		output = func(id string) json.RawMessage { return json.RawMessage(fakeOutput[id]) }
	}
	if call == nil {
		call = fakeInvoke
	}
	var out []capability.Entry
	for _, c := range caps {
		id, input := c.ID, json.RawMessage(fakeInput[c.ID])
		v, err := capability.NewValidator(input)
		if err != nil {
			panic(err)
		}
		out = append(out, capability.Entry{Capability: c, InputSchema: input, OutputSchema: output(id),
			Invoke: func(ctx context.Context, _ capability.ScopeSet, args json.RawMessage) (any, error) {
				if err := v.Validate(args); err != nil {
					return nil, err
				}
				return call(ctx, id, args)
			}})
	}
	return out
}

// gate is the pipeline over s.
func (s fakeSpec) gate() *pipeline.Gate {
	cat, err := capability.NewCatalog(nil, s.entries()...)
	if err == nil {
		cat, err = cat.With(capability.AppToolEntries(s.views)...)
	}
	if err != nil {
		panic(err)
	}
	g, err := pipeline.New(pipeline.Config{Catalog: cat, OnRefused: s.onRefused})
	if err != nil {
		panic(err)
	}
	return g
}

// fakeGate is the pipeline over the fake registry: scopes from fakeCaps, the one validator,
// then fakeInvoke.
func fakeGate() *pipeline.Gate { return fakeSpec{}.gate() }

// fakeInvoke plays the generated invokers over an in-memory church with one child.
func fakeInvoke(_ context.Context, id string, args json.RawMessage) (any, error) {
	var in map[string]any
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, &errs.Invalid{Reason: "arguments must be an object"}
	}
	switch id {
	case "roster_children":
		return map[string]any{"total_children": 1}, nil
	case "roster_child":
		if in["id"] != childA {
			return nil, errs.ErrNotFound
		}
		return map[string]any{"child_id": childA, "name": "Maria " + canary}, nil
	case "attendance_summary":
		from, _ := in["from"].(string)
		to, _ := in["to"].(string)
		if from != "" && to != "" && from > to {
			return nil, &errs.Invalid{Field: "from", Reason: "must not be after to"}
		}
		return map[string]any{"from": "2026-06-01", "to": "2026-06-30", "total_checkins": 42}, nil
	case "neemias_checkin_register":
		if in["child_id"] != childA {
			return nil, errs.ErrNotFound
		}
		return map[string]any{"checkin_id": "0b9f3e1a-6c2d-4e8f-a1b2-c3d4e5f6a7b8", "child_id": childA}, nil
	case "neemias_child_enroll":
		// A driver error full of personal data and SQL: must never reach the client.
		return nil, fmt.Errorf("insert: ERROR: duplicate key value violates unique constraint \"children_name_key\" (SQLSTATE 23505): Key (name)=(%s) already exists", canary)
	}
	return nil, errs.ErrNotImplemented
}

func fakeComplete(_ context.Context, id, variable, prefix string) ([]string, error) {
	if id == "attendance_summary" && variable == "class_id" {
		return []string{classA, "7a000000-0000-4000-8000-000000000000"}, nil
	}
	return nil, errors.New("unexpected completion")
}

func principalWith(scopes ...string) principal.Principal {
	return principal.Principal{UserID: uuid.New(), ChurchID: uuid.New(), Role: "ADMIN", Scopes: capability.NewScopeSet(scopes...), ClientID: "test"}
}

// testOptions returns runtime options over the fake registry; logs go to logs (may be nil).
func testOptions(logs io.Writer) mcp.Options {
	if logs == nil {
		logs = io.Discard
	}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	return mcp.Options{
		Name: "neemias-test", Version: "0.0.1",
		Gate:     fakeGate(),
		Complete: fakeComplete,
		Edge: &httpx.Edge{
			Verifier: authntest.Static{Tokens: map[string]principal.Principal{
				tokAdmin: principalWith("roster:read", "attendance:read", "checkins:read", "checkins:write", "children:read", "children:write", "guardians:read"),
				tokVol:   principalWith("roster:read", "checkins:write", "attendance:read"),
				tokNone:  principalWith(),
			}},
			ResourceMetadataURL: "https://mcp.example.org/.well-known/oauth-protected-resource/mcp",
			Hosts:               append(httpx.LoopbackHosts(), "mcp.example.org"),
			Origins:             []string{"https://app.example.org"},
			Logger:              logger,
		},
		MaxBodyBytes: 64 << 10,
		Logger:       logger,
	}
}

func newServer(t *testing.T, opts mcp.Options) *httptest.Server {
	t.Helper()
	h, err := mcp.NewHandler(opts)
	if err != nil {
		t.Fatalf("NewHandler: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func newTestServer(t *testing.T) *httptest.Server { return newServer(t, testOptions(nil)) }

// exchange is one HTTP round trip.
type exchange struct {
	status int
	header http.Header
	body   string
	msg    map[string]any // the JSON-RPC response (last SSE message, or the JSON body)
}

func (e exchange) errorCode() float64 {
	if m, ok := e.msg["error"].(map[string]any); ok {
		c, _ := m["code"].(float64)
		return c
	}
	return 0
}

func (e exchange) errorMessage() string {
	if m, ok := e.msg["error"].(map[string]any); ok {
		s, _ := m["message"].(string)
		return s
	}
	return ""
}

func (e exchange) result() map[string]any {
	r, _ := e.msg["result"].(map[string]any)
	return r
}

// do sends body with the standard headers plus extra (an empty value deletes a header).
func do(t *testing.T, srv *httptest.Server, method string, extra map[string]string, body string) exchange {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+tokAdmin)
	for k, v := range extra {
		if k == "Host" {
			req.Host = v
			continue
		}
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	ex := exchange{status: resp.StatusCode, header: resp.Header, body: string(raw)}
	payload := raw
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(strings.NewReader(string(raw)))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				payload = []byte(d) // the final response is the last message
			}
		}
	}
	_ = json.Unmarshal(payload, &ex.msg)
	return ex
}

// post sends a legacy-era request (2025-11-25 header, no _meta).
func post(t *testing.T, srv *httptest.Server, extra map[string]string, body string) exchange {
	t.Helper()
	h := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	for k, v := range extra {
		h[k] = v
	}
	return do(t, srv, http.MethodPost, h, body)
}

// modern sends a well-formed 2026-07-28 request for method with params (name or uri picked up
// for Mcp-Name), plus extra headers.
func modern(t *testing.T, srv *httptest.Server, extra map[string]string, method string, params map[string]any) exchange {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if _, ok := params["_meta"]; !ok {
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if n, ok := params["name"].(string); ok {
		h["Mcp-Name"] = n
	}
	if u, ok := params["uri"].(string); ok {
		h["Mcp-Name"] = u
	}
	for k, v := range extra {
		h[k] = v
	}
	return do(t, srv, http.MethodPost, h, string(body))
}

func rpc(id any, method string, params any) string {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != nil {
		m["id"] = id
	}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return string(b)
}
