package main

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace/noop"

	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// TestServeStoreHasUUIDCodec: the pool `serve` runs requests on gets the store's connection
// settings. It once did not (openStore built its pool by hand), so the served binary encoded
// and scanned every uuid through pgx's text fallback while the bench's floors, which call
// store.ConfigurePool, did not: a third of the CPU of a busiest-day read.
func TestServeStoreHasUUIDCodec(t *testing.T) {
	t.Parallel()
	url := storetest.NewDatabase(t)
	for _, tracing := range []bool{false, true} {
		o := &obs{tracing: tracing}
		if tracing {
			o.tracer = noop.NewTracerProvider()
		}
		st, err := o.openStore(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		c, err := st.Pool().Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !store.UUIDCodecRegistered(c.Conn().TypeMap()) {
			t.Errorf("tracing=%v: the serve pool's connections lack the store's uuid codec", tracing)
		}
		c.Release()
		st.Close()
	}
}
