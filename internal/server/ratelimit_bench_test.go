package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/ratelimit"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/server"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// BenchmarkRateLimitPerRequest is what the rate limiter adds to one /mcp request (resources/templates/list
// with a dev token: no other database work), by store:
//
//	go test ./internal/server -run '^$' -bench RateLimitPerRequest
func BenchmarkRateLimitPerRequest(b *testing.B) {
	st := storetest.NewSeeded(b, seed.Options{ChildrenPerChurch: 10, Months: 0})
	for _, tc := range []struct {
		name string
		cfg  server.Config
	}{
		{"off", server.Config{RateLimitOff: true}},
		{"memory", server.Config{RateStore: &ratelimit.Memory{}, RatePerSecond: 1e9, RateBurst: 1 << 30}},
		{"postgres", server.Config{RatePerSecond: 1e9, RateBurst: 1 << 30}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cfg := tc.cfg
			cfg.PublicURL, cfg.Version = "http://127.0.0.1:8080", "bench"
			cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			srv, err := server.New(ctx, cfg, st)
			if err != nil {
				b.Fatal(err)
			}
			all, _ := scopes.RoleScopes("ADMIN")
			tok, err := srv.Minter.Mint(principal.Principal{UserID: seed.DemoAdminID, ChurchID: seed.DemoChurchID, Role: "ADMIN", Scopes: all, ClientID: "bench"}, time.Hour)
			if err != nil {
				b.Fatal(err)
			}
			const body = `{"jsonrpc":"2.0","id":1,"method":"resources/templates/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
			b.ResetTimer()
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", strings.NewReader(body))
				r.Header.Set("Authorization", "Bearer "+tok)
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Accept", "application/json, text/event-stream")
				r.Header.Set("Mcp-Protocol-Version", "2026-07-28")
				r.Header.Set("Mcp-Method", "resources/templates/list")
				w := httptest.NewRecorder()
				srv.Handler.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
		})
	}
}
