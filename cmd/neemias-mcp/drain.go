package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/neemias/neemias-mcp/internal/server"
)

// notifyShutdown is signal.NotifyContext for SIGINT and SIGTERM that also tells which came:
// SIGTERM (an orchestrator) drains, SIGINT (Ctrl-C) does not.
func notifyShutdown(parent context.Context) (ctx context.Context, got func() os.Signal, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	var mu sync.Mutex
	var sig os.Signal
	go func() {
		select {
		case s := <-ch:
			mu.Lock()
			sig = s
			mu.Unlock()
			cancel()
		case <-ctx.Done():
		}
	}()
	got = func() os.Signal {
		mu.Lock()
		defer mu.Unlock()
		return sig
	}
	return ctx, got, func() { signal.Stop(ch); cancel() }
}

// drainThenShutdown is serve's answer to SIGTERM: /readyz turns 503 at once and for the drain
// period (none after Ctrl-C) everything else is still served (a load balancer takes that long to stop sending
// requests: a Kubernetes endpoint update, a readiness probe period), then the listener closes
// and the requests in flight finish (at most grace, --shutdown-timeout) before the process exits.
func drainThenShutdown(log *slog.Logger, srv *server.Server, hs *http.Server, drain, grace time.Duration) {
	srv.Drain()
	log.Info("draining: readiness is 503", "drain", drain)
	time.Sleep(drain)
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := hs.Shutdown(ctx); err != nil {
		log.Warn("graceful shutdown cut requests short", "error", err)
		return
	}
	log.Info("shut down: every request finished")
}
