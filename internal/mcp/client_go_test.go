package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearerTransport adds the token and records what went over the wire.
type bearerTransport struct {
	token string
	mu    sync.Mutex
	seen  []string // "METHOD status mcp-method"
}

func (b *bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		b.mu.Lock()
		b.seen = append(b.seen, r.Method+" "+resp.Status+" "+r.Header.Get("Mcp-Method"))
		b.mu.Unlock()
		if resp.Header.Get("Mcp-Session-Id") != "" {
			resp.Body.Close()
			panic("server issued an Mcp-Session-Id")
		}
	}
	return resp, err
}

// The real go-sdk client, pinned to each era, lists, calls and reads against the runtime with a
// bearer token.
func TestGoSDKClientBothEras(t *testing.T) {
	srv := newTestServer(t)
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			rt := &bearerTransport{token: tokAdmin}
			client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-test", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: rt}},
				&sdk.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()

			tools, err := cs.ListTools(ctx, nil)
			if err != nil || len(tools.Tools) != 2 {
				t.Fatalf("tools/list: %v %v", tools, err)
			}
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "neemias_checkin_register", Arguments: map[string]any{"child_id": childA}})
			if err != nil || res.IsError {
				t.Fatalf("tools/call: %+v %v", res, err)
			}
			sc, _ := json.Marshal(res.StructuredContent)
			if !strings.Contains(string(sc), childA) {
				t.Errorf("structuredContent = %s", sc)
			}
			bad, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "neemias_checkin_register", Arguments: map[string]any{"child_id": "x"}})
			if err != nil || !bad.IsError {
				t.Errorf("invalid args: %+v %v", bad, err)
			}
			rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "neemias://roster/children/" + childA})
			if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, childA) {
				t.Fatalf("resources/read: %+v %v", rr, err)
			}
			if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "neemias://roster/children/.."}); err == nil {
				t.Errorf("reading .. succeeded")
			}
			tpl, err := cs.ListResourceTemplates(ctx, nil)
			if err != nil || len(tpl.ResourceTemplates) != 2 {
				t.Errorf("templates: %v %v", tpl, err)
			}
			rt.mu.Lock()
			defer rt.mu.Unlock()
			joined := strings.Join(rt.seen, "\n")
			if version == "2026-07-28" && strings.Contains(joined, "initialize") {
				t.Errorf("the 2026-07-28 client sent initialize:\n%s", joined)
			}
		})
	}
}
