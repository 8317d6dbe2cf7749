package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/mcp"
	"github.com/neemias/neemias-mcp/internal/metrics"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/server"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// BenchmarkMCPEdgeShare splits what one MCP request costs between our code and go-sdk's, all
// over real HTTP on loopback, one request at a time:
//
//   - net/http: a handler that writes the very bytes our server answers (the HTTP floor);
//
//   - go-sdk: a bare sdk.Server with the same tools (names, descriptions, schemas as our
//     tools/list shows them) and the same resource templates, behind sdk.StreamableHTTPHandler
//     (stateless, SSE, as ours); its resources/read handler returns a canned answer of the
//     size of ours, so it does no database work;
//
//   - ours: the whole server (edge, bearer token with its cached check, metrics as `serve`
//     turns them on, the pipeline; the resources/read reads PostgreSQL and writes its audit row),
//     and the same read over REST.
//
//     go test ./internal/server -run '^$' -bench MCPEdgeShare -benchmem
func BenchmarkMCPEdgeShare(b *testing.B) {
	st := storetest.NewSeeded(b, seed.Options{ChildrenPerChurch: 10, Months: 0})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ids []string
	for _, c := range capapi.Capabilities() {
		ids = append(ids, c.ID)
	}
	srv, err := server.New(ctx, server.Config{
		PublicURL: "http://127.0.0.1:8080", Version: "bench", RateLimitOff: true, TokenCheckCache: time.Second,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: metrics.New(ids, capapi.CapCheckinRegister),
	}, st)
	if err != nil {
		b.Fatal(err)
	}
	all, _ := scopes.RoleScopes("ADMIN")
	tok, err := srv.Minter.Mint(principal.Principal{UserID: seed.DemoAdminID, ChurchID: seed.DemoChurchID, Role: "ADMIN", Scopes: all, ClientID: "bench"}, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	ours := httptest.NewServer(hostAs("127.0.0.1:8080", srv.Handler))
	defer ours.Close()

	var child string
	if err := st.Pool().QueryRow(ctx, `SELECT c.id::text FROM children c JOIN guardian_children g ON g.child_id = c.id WHERE c.church_id = $1 ORDER BY c.id LIMIT 1`, seed.DemoChurchID).Scan(&child); err != nil {
		b.Fatal(err)
	}
	ops := []struct{ name, method, mcpName, params string }{
		{"tools_list", "tools/list", "", `{}`},
		{"read_one_row", "resources/read", "neemias://roster/children/" + child, `{"uri":"neemias://roster/children/` + child + `"}`},
	}
	body := func(method, params string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + strings.TrimSuffix(params, "}") +
			map[bool]string{true: "", false: ","}[params == "{}"] + `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	post := func(tb testing.TB, url, method, name, body string, auth bool) []byte {
		r, _ := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if strings.Contains(body, `"_meta"`) {
			r.Header.Set("Mcp-Protocol-Version", "2026-07-28")
			r.Header.Set("Mcp-Method", method)
			if name != "" {
				r.Header.Set("Mcp-Name", name)
			}
		} else {
			r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		if auth {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := client.Do(r)
		if err != nil {
			tb.Fatal(err)
		}
		out, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || !bytes.Contains(out, []byte(`"result"`)) {
			tb.Fatalf("%s: %d %v %.300s", method, resp.StatusCode, err, out)
		}
		return out
	}

	// What ours answers, to copy into the floors.
	answers := map[string][]byte{}
	for _, op := range ops {
		answers[op.name] = post(b, ours.URL, op.method, op.mcpName, body(op.method, op.params), true)
	}
	var listed struct {
		Result struct {
			Tools []*sdk.Tool `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(sseData(b, answers["tools_list"]), &listed); err != nil || len(listed.Result.Tools) == 0 {
		b.Fatalf("tools/list: %v %d", err, len(listed.Result.Tools))
	}
	var read struct {
		Result struct {
			Contents []*sdk.ResourceContents `json:"contents"`
		} `json:"result"`
	}
	if err := json.Unmarshal(sseData(b, answers[ops[1].name]), &read); err != nil || len(read.Result.Contents) != 1 {
		b.Fatalf("resources/read: %v", err)
	}

	bare := sdk.NewServer(&sdk.Implementation{Name: "bare", Version: "bench"}, &sdk.ServerOptions{SupportedProtocolVersions: mcp.SupportedVersions})
	for _, t := range listed.Result.Tools {
		bare.AddTool(t, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
	}
	for _, c := range capapi.Capabilities() {
		if c.Kind != capability.KindResourceTemplate {
			continue
		}
		bare.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: c.URITemplate, Name: c.ID, MIMEType: "application/json"},
			func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				rc := *read.Result.Contents[0]
				rc.URI = req.Params.URI
				return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{&rc}}, nil
			})
	}
	sdkSrv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return bare },
		&sdk.StreamableHTTPOptions{Stateless: true, DisableLocalhostProtection: true}))
	defer sdkSrv.Close()

	for _, op := range ops {
		answer := answers[op.name]
		floor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write(answer)
		}))
		req := body(op.method, op.params)
		for _, target := range []struct {
			name string
			url  string
			auth bool
		}{{"net-http", floor.URL, false}, {"go-sdk", sdkSrv.URL, false}, {"mcp-ours", ours.URL, true}} {
			b.Run(op.name+"/"+target.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					post(b, target.url, op.method, op.mcpName, req, target.auth)
				}
			})
		}
		floor.Close()
	}
	// The same reads in the 2025 era (no _meta, no routing headers): issue 23 wants both eras
	// within 10% of each other.
	for _, op := range ops {
		legacy := `{"jsonrpc":"2.0","id":1,"method":"` + op.method + `","params":` + op.params + `}`
		b.Run(op.name+"/mcp-ours-2025-11-25", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				post(b, ours.URL, op.method, op.mcpName, legacy, true)
			}
		})
	}
	// The same one-row read over REST: what the capability costs without MCP (query, audit
	// row, edge, token), so ours over MCP minus this is MCP's share, go-sdk's and our glue's.
	b.Run("read_one_row/rest-ours", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r, _ := http.NewRequest(http.MethodGet, ours.URL+"/api/v1/roster/children/"+child, nil)
			r.Header.Set("Authorization", "Bearer "+tok)
			resp, err := client.Do(r)
			if err != nil {
				b.Fatal(err)
			}
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Fatalf("%d %.300s", resp.StatusCode, out)
			}
		}
	})
}

// hostAs serves h as if every request came for host (the server's public URL).
func hostAs(host string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Host = host
		h.ServeHTTP(w, r)
	})
}

// sseData is the last data: line of an SSE answer, or the answer itself if it is plain JSON.
func sseData(tb testing.TB, b []byte) []byte {
	var last []byte
	for _, line := range bytes.Split(b, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			last = d
		}
	}
	if last == nil {
		return b
	}
	return last
}
