package upstream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/upstream"
)

// countingListener counts accepted connections.
type countingListener struct {
	net.Listener
	accepts atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepts.Add(1)
	}
	return c, err
}

func listen(t *testing.T) *countingListener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return &countingListener{Listener: l}
}

// goUpstream is an upstream built with go-sdk's server: tools with each kind of annotation,
// and an HTTP layer that records every request body and can fail, cut or delay tools/call.
type goUpstream struct {
	URL       string
	ln        *countingListener
	mu        sync.Mutex
	bodies    [][]byte
	auth      []string
	calls     map[string]int // tools/call that reached the MCP handler, per tool
	fail503   map[string]int // tool -> how many more calls answer 503
	cut       map[string]bool
	drop      map[string]int // tool -> how many more calls lose the connection before any answer
	lookupOut map[string]any
}

func bptr(b bool) *bool { return &b }

func newGoUpstream(t *testing.T) *goUpstream {
	t.Helper()
	u := &goUpstream{calls: map[string]int{}, fail503: map[string]int{}, cut: map[string]bool{}, drop: map[string]int{},
		lookupOut: map[string]any{"title": "Manual do voluntário", "isbn": "978-85-333-0227-3"}}
	srv := sdk.NewServer(&sdk.Implementation{Name: "go-upstream", Version: "1"}, nil)
	text := func(s string) []sdk.Content { return []sdk.Content{&sdk.TextContent{Text: s}} }
	ro := &sdk.ToolAnnotations{ReadOnlyHint: true}
	idem := &sdk.ToolAnnotations{IdempotentHint: true, DestructiveHint: bptr(false)}
	obj := map[string]any{"type": "object"}
	add := func(name string, ann *sdk.ToolAnnotations, h func(args map[string]any) *sdk.CallToolResult) {
		srv.AddTool(&sdk.Tool{Name: name, Annotations: ann, InputSchema: obj}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args map[string]any
			_ = json.Unmarshal(req.Params.Arguments, &args)
			return h(args), nil
		})
	}
	add("lookup", ro, func(map[string]any) *sdk.CallToolResult {
		u.mu.Lock()
		out := u.lookupOut
		u.mu.Unlock()
		b, _ := json.Marshal(out)
		return &sdk.CallToolResult{Content: text(string(b)), StructuredContent: out}
	})
	add("echo", ro, func(args map[string]any) *sdk.CallToolResult {
		b, _ := json.Marshal(args)
		return &sdk.CallToolResult{Content: text(string(b))}
	})
	add("resource", ro, func(map[string]any) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{
			URI: "doc://ficha", MIMEType: "text/plain", Text: "Ficha: responsável com CPF 529.982.247-25"}}}}
	})
	add("register", nil, func(map[string]any) *sdk.CallToolResult { return &sdk.CallToolResult{Content: text("registered")} })
	add("upsert", idem, func(map[string]any) *sdk.CallToolResult { return &sdk.CallToolResult{Content: text("upserted")} })
	add("slow", ro, func(map[string]any) *sdk.CallToolResult {
		time.Sleep(400 * time.Millisecond)
		return &sdk.CallToolResult{Content: text("late")}
	})
	srv.AddTool(&sdk.Tool{Name: "callback", Annotations: ro, InputSchema: obj}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		// An upstream asking the caller's side for something: refused.
		if _, err := req.Session.ListRoots(ctx, nil); err == nil {
			return &sdk.CallToolResult{Content: text("roots answered")}, nil
		}
		if _, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 1}); err == nil {
			return &sdk.CallToolResult{Content: text("sampling answered")}, nil
		}
		return &sdk.CallToolResult{Content: text("callbacks refused")}, nil
	})
	add("hidden", ro, func(map[string]any) *sdk.CallToolResult { return &sdk.CallToolResult{Content: text("hidden")} })
	mcpH := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &msg)
		u.mu.Lock()
		u.bodies = append(u.bodies, body)
		u.auth = append(u.auth, r.Header.Get("Authorization"))
		tool := ""
		if msg.Method == "tools/call" {
			tool = msg.Params.Name
			u.calls[tool]++
		}
		fail := tool != "" && u.fail503[tool] > 0
		if fail {
			u.fail503[tool]--
		}
		cut := tool != "" && u.cut[tool]
		drop := tool != "" && u.drop[tool] > 0
		if drop {
			u.drop[tool]--
		}
		u.mu.Unlock()
		switch {
		case fail:
			http.Error(w, "try later", http.StatusServiceUnavailable)
		case drop:
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		case cut:
			// Headers and part of the body, then the connection closes.
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":")
			buf.Flush()
			conn.Close()
		default:
			mcpH.ServeHTTP(w, r)
		}
	})
	u.ln = listen(t)
	hs := &httptest.Server{Listener: u.ln, Config: &http.Server{Handler: h}}
	hs.Start()
	t.Cleanup(hs.Close)
	u.URL = "http://" + u.ln.Addr().String() + "/mcp"
	return u
}

func (u *goUpstream) called(tool string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls[tool]
}

// received reports whether any request body contained s.
func (u *goUpstream) received(s string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, b := range u.bodies {
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

// events records audit events.
type events struct {
	mu sync.Mutex
	ev []upstream.Event
}

func (e *events) Record(_ context.Context, ev upstream.Event) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ev = append(e.ev, ev)
	return nil
}

func (e *events) last(t *testing.T) upstream.Event {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.ev) == 0 {
		t.Fatal("no audit event")
	}
	return e.ev[len(e.ev)-1]
}

func (e *events) len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.ev)
}
