package server_test

import (
	"context"
	"encoding/json"
	"github.com/neemias/neemias-mcp/gen/capapi"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/server"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
	"github.com/neemias/neemias-mcp/internal/testsupport"
)

// app is the real assembled server (server.New over a seeded PostgreSQL database) listening
// on 127.0.0.1, with its log captured.
type app struct {
	srv  *server.Server
	http *httptest.Server
	st   *store.Store
	logs *testsupport.Buffer
	// base is http://127.0.0.1:port (the server's PublicURL); mcp is base+"/mcp".
	base, mcp string
}

// demoUser is one of the seeded demo accounts.
type demoUser struct {
	id   uuid.UUID
	role string
}

var (
	admin       = demoUser{seed.DemoAdminID, "ADMIN"}
	cadastro    = demoUser{seed.DemoCadastroID, "CADASTRO"}
	voluntario  = demoUser{seed.DemoVoluntarioID, "VOLUNTARIO"}
	responsavel = demoUser{seed.DemoResponsavelID, "RESPONSAVEL"}
)

// newApp seeds a database of its own (the demo church: 80 children, two months of services up
// to today) and serves server.New over it on a loopback listener. Logs go to a.logs at debug
// level, as JSON lines.
func newApp(t *testing.T) *app {
	t.Helper()
	return newAppWith(t, server.Config{})
}

// newAppWith is newApp with cfg; an empty PublicURL means the listener's
// http://127.0.0.1:port. Logger and Version are always the test's.
func newAppWith(t *testing.T, cfg server.Config) *app {
	t.Helper()
	return newAppOn(t, storetest.NewSeeded(t, seed.Options{ChildrenPerChurch: 80, Months: 2}), cfg)
}

// newAppOn is newAppWith over st.
func newAppOn(t *testing.T, st *store.Store, cfg server.Config) *app {
	t.Helper()
	logs := &testsupport.Buffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if cfg.PublicURL == "" {
		cfg.PublicURL = base
	}
	cfg.Logger, cfg.Version = logger, "0.1.0-test"
	srv, err := server.New(ctx, cfg, st)
	if err != nil {
		ln.Close()
		t.Fatalf("server.New: %v", err)
	}
	hs := httptest.NewUnstartedServer(srv.Handler)
	hs.Listener.Close()
	hs.Listener = ln
	hs.Start()
	t.Cleanup(hs.Close)
	return &app{srv: srv, http: hs, st: st, logs: logs, base: base, mcp: base + "/mcp"}
}

// token mints an access token for u with every scope of its role, or with the given scopes
// (which must be within the role's).
func (a *app) token(t *testing.T, u demoUser, only ...string) string {
	t.Helper()
	granted, ok := scopes.RoleScopes(u.role)
	if !ok {
		t.Fatalf("unknown role %s", u.role)
	}
	if only != nil {
		granted = scopes.Grant(u.role, capability.NewScopeSet(only...))
	}
	tok, err := a.srv.Minter.Mint(principal.Principal{
		UserID: u.id, ChurchID: seed.DemoChurchID, Role: u.role, Scopes: granted, ClientID: "server-test",
	}, time.Hour)
	if err != nil {
		t.Fatalf("mint: %v", err)
	}
	return tok
}

// query runs sql in the maintenance context (no row-level security) and scans one column of
// every row into strings.
func (a *app) query(t *testing.T, sql string, args ...any) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []string
	err := a.st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				return err
			}
			out = append(out, s)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatalf("query %q: %v", sql, err)
	}
	return out
}

// one is query that must return at least one row; it returns the first.
func (a *app) one(t *testing.T, sql string, args ...any) string {
	t.Helper()
	rows := a.query(t, sql, args...)
	if len(rows) == 0 {
		t.Fatalf("query %q returned no rows", sql)
	}
	return rows[0]
}

// freeChildren returns n children of the demo church placed in a class and not checked in
// today (Brasília), optionally only from the classes of the demo volunteer.
func (a *app) freeChildren(t *testing.T, n int, volunteerClasses bool) []string {
	t.Helper()
	filter := ""
	if volunteerClasses {
		filter = " AND c.class_id IN (SELECT class_id FROM volunteer_assignments WHERE user_id = '" + seed.DemoVoluntarioID.String() + "')"
	}
	ids := a.query(t, `SELECT c.id::text FROM children c
		WHERE c.church_id = $1 AND c.class_id IS NOT NULL AND c.archived_at IS NULL
		  AND NOT EXISTS (SELECT 1 FROM checkins k WHERE k.child_id = c.id
		                  AND k.service_date = (now() AT TIME ZONE 'America/Sao_Paulo')::date)`+filter+`
		  AND NOT EXISTS (SELECT 1 FROM guardian_children gc JOIN guardians g ON g.id = gc.guardian_id
		                  WHERE gc.child_id = c.id AND g.user_id IS NOT NULL)
		ORDER BY c.id`, seed.DemoChurchID)
	if len(ids) < n {
		t.Fatalf("want %d free children, have %d", n, len(ids))
	}
	return ids[:n]
}

// bearer is an http.RoundTripper that adds the token, records every exchange and fails the
// test if the server ever issues an Mcp-Session-Id other than the UI one on a legacy initialize.
type bearer struct {
	t     *testing.T
	token string

	mu   sync.Mutex
	seen []exchangeRecord
}

type exchangeRecord struct {
	method    string // the JSON-RPC method (Mcp-Method header) or the HTTP method
	status    int
	challenge string // WWW-Authenticate
}

func (b *bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	// The one session id the server issues is the UI session id, on a 2025-era initialize
	// declaring MCP Apps (internal/mcp/uisession.go).
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && !strings.HasPrefix(sid, "neemias-ui1-") {
		b.t.Errorf("the server issued Mcp-Session-Id %q on %s %s", sid, r.Method, r.Header.Get("Mcp-Method"))
	}
	m := rpcMethod(r)
	b.mu.Lock()
	b.seen = append(b.seen, exchangeRecord{method: m, status: resp.StatusCode, challenge: resp.Header.Get("WWW-Authenticate")})
	b.mu.Unlock()
	return resp, nil
}

// rpcMethod is the JSON-RPC method of r: its Mcp-Method header (2026-07-28), else the body's
// "method", else the HTTP method.
func rpcMethod(r *http.Request) string {
	if m := r.Header.Get("Mcp-Method"); m != "" {
		return m
	}
	if r.GetBody != nil {
		if body, err := r.GetBody(); err == nil {
			defer body.Close()
			var msg struct{ Method string }
			if json.NewDecoder(body).Decode(&msg) == nil && msg.Method != "" {
				return msg.Method
			}
		}
	}
	return r.Method
}

func (b *bearer) records() []exchangeRecord {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]exchangeRecord(nil), b.seen...)
}

// roleTemplates is what resources/templates/list shows a role, derived from the registry: the
// URI templates of the resources whose scope the role can hold, sorted.
func roleTemplates(role string) []string {
	held, _ := scopes.RoleScopes(role)
	var out []string
	for _, c := range capapi.Capabilities() {
		if c.Kind == capability.KindResourceTemplate && held.Has(c.Scope) {
			out = append(out, c.URITemplate)
		}
	}
	slices.Sort(out)
	return out
}

// roleTools is what tools/list shows a role, derived from the registry: the tools whose scope
// the role can hold, and the read tool of each such resource (capapi.ToolPrefix + id), sorted.
func roleTools(role string) []string {
	held, _ := scopes.RoleScopes(role)
	var out []string
	for _, c := range capapi.Capabilities() {
		if !held.Has(c.Scope) {
			continue
		}
		if c.Kind == capability.KindTool {
			out = append(out, c.Name)
		} else if !c.NoReadTool {
			out = append(out, capapi.ToolPrefix+c.ID)
		}
	}
	slices.Sort(out)
	return out
}
