package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/server"
	"github.com/neemias/neemias-mcp/internal/upstream"
)

// TestUpstreamAuditName pins issue 26: every audit row of a call of an upstream tool carries
// the upstream's capability name (upstream:docs/echo), the pipeline's refusals included: a
// RESPONSAVEL's call refused for its scope was audited as neemias_docs_echo / call.forbidden,
// so a filter on upstream:% missed refused attempts. The upstream is go-sdk's server on
// loopback (no node needed); it also checks that a CPF written with spaces never reaches it.
func TestUpstreamAuditName(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PostgreSQL")
	}
	t.Parallel()
	url, saw := echoUpstream(t)
	a := newAppWith(t, server.Config{Upstreams: upstream.Config{Enabled: true, Upstreams: []upstream.Upstream{{ID: "docs", URL: url}}}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const tool = "neemias_docs_echo"

	cs, _ := a.connect(t, ctx, eras[0], a.token(t, admin))
	if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"message": "ensaio do coral"}}); err != nil || res.IsError {
		t.Fatalf("allowed call: %v %+v", err, res)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"message": "cpf 529 982 247 25"}})
	if err != nil || !res.IsError {
		t.Errorf("a CPF written with spaces: %v %+v; want a tool error", err, res)
	}
	if saw("529 982") {
		t.Error("the CPF written with spaces reached the upstream")
	}
	// RESPONSAVEL's role has no roster:read: refused by the pipeline's scope check.
	rs, _ := a.connect(t, ctx, eras[0], a.token(t, responsavel))
	if res, err := rs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"message": "oi"}}); err == nil && !res.IsError {
		t.Errorf("RESPONSAVEL's call allowed: %+v", res)
	}

	// Arguments that are not an object never reach the client, and are audited too.
	if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: []any{"x"}}); err == nil && !res.IsError {
		t.Errorf("array arguments allowed: %+v", res)
	}

	if got := a.query(t, `SELECT action FROM audit_log WHERE capability = $1`, tool); len(got) != 0 {
		t.Errorf("audit rows under the Neemias tool name %s: %v; want them under upstream:docs/echo", tool, got)
	}
	got := a.query(t, `SELECT action || ' ' || outcome FROM audit_log WHERE capability LIKE 'upstream:%' ORDER BY id`)
	for _, want := range []string{"call allowed", "call.pii_detected.request.cpf denied", "call.forbidden denied", "call.invalid error"} {
		if !slices.Contains(got, want) {
			t.Errorf("audit rows of upstream:%% = %v; want %q among them", got, want)
		}
	}
	if n := a.one(t, `SELECT count(*)::text FROM audit_log WHERE capability = 'upstream:docs/echo' AND action = 'call.forbidden' AND user_id = $1`, responsavel.id); n != "1" {
		t.Errorf("RESPONSAVEL's refusal rows under upstream:docs/echo = %s, want 1", n)
	}
}

// echoUpstream serves go-sdk's MCP server with one read-only tool, echo, on loopback; saw
// reports whether a request body that reached it held s.
func echoUpstream(t *testing.T) (url string, saw func(s string) bool) {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "echo-upstream", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "echo", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}, InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	var mu sync.Mutex
	var bodies [][]byte
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp", func(s string) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, b := range bodies {
			var v any
			// the body as sent, and decoded (a JSON escape must not hide the value)
			if bytes.Contains(b, []byte(s)) || json.Unmarshal(b, &v) == nil && strings.Contains(jsonText(v), s) {
				return true
			}
		}
		return false
	}
}

// jsonText is every string of a decoded JSON value, joined.
func jsonText(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x + "\n")
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return b.String()
}
