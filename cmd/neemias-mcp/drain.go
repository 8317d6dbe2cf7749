package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/neemias/neemias-mcp/internal/server"
)

// shutdownGrace bounds how long the graceful shutdown waits for requests in flight.
const shutdownGrace = 30 * time.Second

// drainThenShutdown is serve's answer to SIGTERM: /readyz turns 503 at once and for the drain
// period everything else is still served (a load balancer takes that long to stop sending
// requests: a Kubernetes endpoint update, a readiness probe period), then the listener closes
// and the requests in flight finish (at most shutdownGrace) before the process exits.
func drainThenShutdown(log *slog.Logger, srv *server.Server, hs *http.Server, drain time.Duration) {
	srv.Drain()
	log.Info("draining: readiness is 503", "drain", drain)
	time.Sleep(drain)
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(ctx); err != nil {
		log.Warn("graceful shutdown cut requests short", "error", err)
		return
	}
	log.Info("shut down: every request finished")
}
