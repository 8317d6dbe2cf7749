package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/server"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// roundTrips records what a pool sends: each query (one round trip) and each batch (one).
type roundTrips struct {
	mu   sync.Mutex
	sent []string
}

func (r *roundTrips) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, s)
}

func (r *roundTrips) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sent
	r.sent = nil
	return s
}

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	sql := strings.TrimSpace(d.SQL)
	if name, ok := strings.CutPrefix(sql, "-- name: "); ok {
		sql, _, _ = strings.Cut(name, " ")
	} else if len(sql) > 40 {
		sql = sql[:40]
	}
	r.add(sql)
	return ctx
}

func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	r.add("batch")
	return ctx
}

func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// TestReadRoundTrips: a child-data read makes the same round trips over REST and over MCP,
// three of them: BEGIN with the caller context, the query, and the audit row with COMMIT.
func TestReadRoundTrips(t *testing.T) {
	t.Parallel()
	dbURL := storetest.NewDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := seed.Run(ctx, storetest.Pool(t, dbURL), seed.Options{ChildrenPerChurch: 10, Months: 0}); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	rt := &roundTrips{}
	cfg.ConnConfig.Tracer = rt
	st, err := store.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	srv, err := server.New(ctx, server.Config{PublicURL: "http://127.0.0.1:8080", Version: "test", RateLimitOff: true,
		TokenCheckCache: time.Minute, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, st)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := scopes.RoleScopes("ADMIN")
	tok, err := srv.Minter.Mint(principal.Principal{UserID: seed.DemoAdminID, ChurchID: seed.DemoChurchID, Role: "ADMIN", Scopes: all, ClientID: "test"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var child string
	if err := st.Pool().QueryRow(ctx, `SELECT id::text FROM children WHERE church_id = $1 ORDER BY id LIMIT 1`, seed.DemoChurchID).Scan(&child); err != nil {
		t.Fatal(err)
	}
	do := func(r *http.Request) {
		t.Helper()
		r.Host = "127.0.0.1:8080"
		r.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		srv.Handler.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Fatalf("%s %s: %d %.300s", r.Method, r.URL, w.Code, w.Body.String())
		}
	}
	rest := func() {
		do(httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8080/api/v1/roster/children/"+child, nil))
	}
	mcp := func() {
		uri := "neemias://roster/children/" + child
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"`+uri+`","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		r.Header.Set("Mcp-Method", "resources/read")
		r.Header.Set("Mcp-Name", uri)
		do(r)
	}
	for name, read := range map[string]func(){"rest": rest, "mcp": mcp} {
		read() // the token check's first lookup
		rt.take()
		read()
		got := strings.Join(rt.take(), " | ")
		if want := "BEGIN ISOLATION LEVEL READ COMMITTED; SE | RosterChild | batch"; got != want {
			t.Errorf("%s: sent %s; want %s", name, got, want)
		}
	}
}
