package server_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/metrics"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/server"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/tracing"
)

// exec runs sql as the database owner.
func (a *app) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := a.st.Pool().Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("exec %q: %v", sql, err)
	}
}

func newMetrics() *metrics.Metrics {
	var ids []string
	for _, c := range capapi.Capabilities() {
		ids = append(ids, c.ID)
	}
	return metrics.New(ids, capapi.CapCheckinRegister)
}

func modernHeader(tok, method, name string) http.Header {
	h := http.Header{"Authorization": {"Bearer " + tok}, "Content-Type": {"application/json"},
		"Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {method}}
	if name != "" {
		h.Set("Mcp-Name", name)
	}
	return h
}

// TestTraces: one 2026-07-28 resources/read whose _meta carries a traceparent makes an HTTP
// span, an MCP method span continuing the client's trace (its parent is the client's span), a
// capability span below it and SQL spans below that (otelpgx), all in the client's trace; no
// span name or attribute carries the caller's input.
func TestTraces(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := tracing.NewProvider(rec, "test")
	seeded := newApp(t) // the seeded database, read through a second, traced pool
	pcfg := seeded.st.Pool().Config().Copy()
	tracing.PoolTracer(pcfg, tp)
	pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	a := serveOver(t, store.FromPool(pool), server.Config{Tracer: tp})

	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	body := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"neemias://roster/children","_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"traceparent":"00-` + traceID + `-` + parentID + `-01"}}}`
	status, _, got := edgeCall(t, "POST", a.mcp, modernHeader(a.token(t, admin), "resources/read", "neemias://roster/children"), body)
	if status != http.StatusOK {
		t.Fatalf("resources/read: %d %s", status, got)
	}
	_ = tp.ForceFlush(context.Background())
	spans := rec.Ended()
	byName := map[string]int{}
	var httpSpan, mcpSpan, capSpan int = -1, -1, -1
	sql := 0
	for i, s := range spans {
		byName[s.Name()]++
		switch {
		case s.Name() == "POST /mcp":
			httpSpan = i
		case s.Name() == "mcp resources/read":
			mcpSpan = i
		case s.Name() == "capability roster_children":
			capSpan = i
		}
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.Emit(), "Bearer") {
				t.Errorf("span %s carries the credential", s.Name())
			}
		}
	}
	if httpSpan < 0 || mcpSpan < 0 || capSpan < 0 {
		t.Fatalf("spans: %v", byName)
	}
	m, c := spans[mcpSpan], spans[capSpan]
	if m.SpanContext().TraceID().String() != traceID || m.Parent().SpanID().String() != parentID {
		t.Errorf("MCP span in trace %s under %s; want the _meta traceparent's %s/%s", m.SpanContext().TraceID(), m.Parent().SpanID(), traceID, parentID)
	}
	if len(m.Links()) != 1 || m.Links()[0].SpanContext.SpanID() != spans[httpSpan].SpanContext().SpanID() {
		t.Errorf("the MCP span does not link the HTTP span")
	}
	if c.Parent().SpanID() != m.SpanContext().SpanID() {
		t.Errorf("the capability span is not the MCP span's child")
	}
	for _, s := range spans {
		if s.Parent().SpanID() == c.SpanContext().SpanID() && s.SpanContext().TraceID().String() == traceID {
			sql++
		}
	}
	if sql == 0 {
		t.Errorf("no SQL span below the capability span: %v", byName)
	}
	t.Logf("spans: %v (%d SQL below the capability)", byName, sql)
}

// serveOver serves server.New(cfg) over st on a loopback listener (no seeding: st's).
func serveOver(t *testing.T, st *store.Store, cfg server.Config) *app {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	if cfg.PublicURL == "" {
		cfg.PublicURL = base
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := server.New(ctx, cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(srv.Handler)
	hs.Listener.Close()
	hs.Listener = ln
	hs.Start()
	t.Cleanup(hs.Close)
	return &app{srv: srv, http: hs, st: st, base: base, mcp: base + "/mcp"}
}

// TestDevTokens: development tokens are bounded to 12 h and refused once the user is
// disabled, on every request (the verifier's cache notwithstanding).
func TestDevTokens(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	mint := func(ttl time.Duration) string {
		all, _ := scopes.RoleScopes("VOLUNTARIO")
		tok, err := a.srv.Minter.Mint(principal.Principal{UserID: seed.DemoVoluntarioID, ChurchID: seed.DemoChurchID, Role: "VOLUNTARIO",
			Scopes: all, ClientID: server.DevTokenClient}, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	get := func(tok string) int {
		status, _, _ := restCall(t, "GET", a.base+"/api/v1/roster/children", tok, "")
		return status
	}
	ok, long := mint(12*time.Hour), mint(13*time.Hour)
	if s := get(ok); s != http.StatusOK {
		t.Fatalf("a 12-hour dev token: %d", s)
	}
	if s := get(long); s != http.StatusUnauthorized {
		t.Errorf("a 13-hour dev token: %d, want 401", s)
	}
	a.exec(t, `UPDATE users SET disabled_at = now() WHERE id = $1`, seed.DemoVoluntarioID)
	if s := get(ok); s != http.StatusUnauthorized {
		t.Errorf("a dev token of a disabled user: %d, want 401", s)
	}
}

// TestHostRouting: with --mcp-host and --api-host, the MCP host serves only MCP, OAuth and
// metadata, the API host only REST; health answers on both; another host nothing.
func TestHostRouting(t *testing.T) {
	t.Parallel()
	a := newAppWith(t, server.Config{PublicURL: "http://mcp.example", MCPHost: "mcp.example", APIHost: "api.example"})
	tok := a.token(t, admin)
	listener := "http://" + a.http.Listener.Addr().String()
	for _, tc := range []struct {
		host, method, path string
		want               int
	}{
		{"mcp.example", "GET", "/.well-known/oauth-protected-resource/mcp", 200},
		{"mcp.example", "GET", "/.well-known/oauth-authorization-server", 200},
		{"mcp.example", "POST", "/mcp", 200},
		{"mcp.example", "GET", "/api/v1/roster/children", 404},
		{"api.example", "GET", "/api/v1/roster/children", 200},
		{"api.example", "POST", "/mcp", 404},
		{"api.example", "GET", "/.well-known/oauth-authorization-server", 404},
		{"api.example", "GET", "/authorize", 404},
		{"api.example", "GET", "/healthz", 200},
		{"mcp.example", "GET", "/healthz", 200},
		{"other.example", "GET", "/api/v1/roster/children", 404},
	} {
		body := ""
		h := http.Header{"Authorization": {"Bearer " + tok}}
		if tc.path == "/mcp" {
			h = modernHeader(tok, "tools/list", "")
			body = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		}
		req, _ := http.NewRequest(tc.method, listener+tc.path, strings.NewReader(body))
		req.Host = tc.host
		for k, v := range h {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s%s: %d, want %d", tc.method, tc.host, tc.path, resp.StatusCode, tc.want)
		}
	}
}
