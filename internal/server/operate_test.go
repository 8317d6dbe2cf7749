package server_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
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
	a := newAppWith(t, server.Config{Metrics: newMetrics(), MetricsOnMain: true})
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
	get("")
	// The refusals are counted by reason.
	_, _, text := restCall(t, "GET", a.base+"/metrics", "", "")
	for _, want := range []string{
		`neemias_auth_failures_total{reason="lifetime",surface="rest"} 1`,
		`neemias_auth_failures_total{reason="disabled",surface="rest"} 1`,
		`neemias_auth_failures_total{reason="missing",surface="rest"} 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestHostRouting: with --mcp-host and --api-host, the MCP host serves only MCP, OAuth and
// metadata, the API host only REST; health answers on both; another host nothing. The MCP
// endpoint's aliases /mcp/ and /sse answer on the MCP host as /mcp does (issue 24: /mcp/ was
// 404 there, as the host router did not count it as MCP) and, like /mcp, not on the API host.
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
		{"mcp.example", "POST", "/mcp/", 200},
		{"mcp.example", "POST", "/sse", 200},
		{"mcp.example", "GET", "/.well-known/oauth-protected-resource/mcp/", 200},
		{"mcp.example", "GET", "/api/v1/roster/children", 404},
		{"api.example", "GET", "/api/v1/roster/children", 200},
		{"api.example", "POST", "/mcp", 404},
		{"api.example", "POST", "/mcp/", 404},
		{"api.example", "POST", "/sse", 404},
		{"api.example", "GET", "/.well-known/oauth-authorization-server", 404},
		{"api.example", "GET", "/authorize", 404},
		{"api.example", "GET", "/healthz", 200},
		{"mcp.example", "GET", "/healthz", 200},
		{"other.example", "GET", "/api/v1/roster/children", 404},
	} {
		body := ""
		h := http.Header{"Authorization": {"Bearer " + tok}}
		if tc.method == "POST" {
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

// checkMetrics scrapes /metrics after the canary run: no personal data, no pick-up code, every
// label value from its fixed list, and the run's figures present (an internal error, a
// refusal, a bad input, check-ins, REST and MCP, the pool).
func checkMetrics(t *testing.T, base string, secrets []string) {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(b)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d", resp.StatusCode)
	}
	if frag, ok := leaks(text, append(append(append([]string{}, nameFragments...), phoneFragments...), secrets...)); ok {
		t.Errorf("/metrics carries %q", frag)
	}
	allowed := map[string][]string{
		"surface":    {"mcp", "rest", "oauth", "metadata", "health", "other"},
		"outcome":    {"ok", "internal", "invalid", "not_found", "unauthenticated", "forbidden", "conflict", "not_implemented", "rate_limited", "unavailable"},
		"method":     {"initialize", "ping", "tools/list", "tools/call", "resources/list", "resources/read", "resources/templates/list", "completion/complete", "logging/setLevel", "prompts/list", "prompts/get", "server/discover", "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "unknown"},
		"capability": {"none", "unknown"},
		"reason":     {"missing", "expired", "revoked", "disabled", "audience", "signature", "lifetime", "invalid", "unavailable"},
	}
	for _, c := range capapi.Capabilities() {
		allowed["capability"] = append(allowed["capability"], c.ID)
	}
	label := regexp.MustCompile(`(\w+)="([^"]*)"`)
	series := 0
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "neemias_") {
			continue
		}
		series++
		for _, m := range label.FindAllStringSubmatch(line, -1) {
			if m[1] == "le" {
				continue
			}
			if vals, ok := allowed[m[1]]; !ok || !slices.Contains(vals, m[2]) {
				t.Errorf("label %s=%q is not from its fixed list: %s", m[1], m[2], line)
			}
		}
	}
	for _, want := range []string{
		`neemias_requests_total{capability="neemias_checkin_register",method="tools/call",outcome="internal",surface="mcp"}`,
		`neemias_requests_total{capability="neemias_child_enroll",method="tools/call",outcome="forbidden",surface="mcp"}`,
		`neemias_requests_total{capability="neemias_child_enroll",method="POST",outcome="invalid",surface="rest"}`,
		`neemias_requests_total{capability="roster_child",method="GET",outcome="ok",surface="rest"}`,
		`neemias_request_duration_seconds_bucket{capability="roster_child",method="resources/read",surface="mcp",le="+Inf"}`,
		`neemias_checkins_registered_total `, `neemias_db_pool_total_conns `, `neemias_db_pool_acquires_total `,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	t.Logf("/metrics: %d neemias series, all labels bounded", series)
}
