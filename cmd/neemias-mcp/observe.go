package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/trace"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/config"
	"github.com/neemias/neemias-mcp/internal/logging"
	"github.com/neemias/neemias-mcp/internal/metrics"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/tracing"
)

// obs is serve's instrumentation: the Prometheus metrics and the tracer provider (no-op
// unless --otlp-endpoint is set).
type obs struct {
	metrics  *metrics.Metrics
	tracer   trace.TracerProvider
	tracing  bool
	shutdown func()
}

func observability(ctx context.Context, cfg config.Serve, version string) (*obs, error) {
	o := &obs{shutdown: func() {}}
	if cfg.MetricsServed() {
		var ids []string
		for _, c := range capapi.Capabilities() {
			ids = append(ids, c.ID)
		}
		o.metrics = metrics.New(ids, capapi.CapCheckinRegister)
	}
	if cfg.OTLPEndpoint != "" {
		tp, stop, err := tracing.Setup(ctx, cfg.OTLPEndpoint, cfg.OTLPInsecure, version)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", config.Setting("otlp-endpoint"), err)
		}
		o.tracer, o.tracing = tp, true
		o.shutdown = func() {
			c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = stop(c)
		}
	}
	return o, nil
}

// openStore opens the store over url with the pool traced when tracing is on (server.New
// exports the pool's figures).
func (o *obs) openStore(ctx context.Context, url string) (*store.Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, errors.New("store: invalid database URL") // the parse error can quote the password
	}
	if o.tracing {
		tracing.PoolTracer(cfg, o.tracer)
	}
	// store.Open, not pgxpool directly: it registers the uuid codec (store.ConfigurePool),
	// without which every uuid of a request went through pgx's text fallback.
	return store.Open(ctx, cfg)
}

// serveMetrics serves /metrics on its own listener (--metrics-addr) until ctx ends.
func (o *obs) serveMetrics(ctx context.Context, addr string, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s: listening on %s: %w", config.Setting("metrics-addr"), addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", o.metrics.Handler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: logging.StdLogger(log, slog.LevelWarn)}
	go func() {
		<-ctx.Done()
		_ = hs.Close()
	}()
	go func() { _ = hs.Serve(ln) }()
	log.Info("serving metrics", "addr", ln.Addr().String())
	return nil
}
