package tracing_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/trace/noop"

	"github.com/neemias/neemias-mcp/internal/tracing"
)

// TestSetup: without an endpoint tracing is the no-op provider; with one, spans reach an
// OTLP/HTTP receiver at /v1/traces when the provider is shut down (flushed).
func TestSetup(t *testing.T) {
	tp, stop, err := tracing.Setup(context.Background(), "", false, "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tp.(noop.TracerProvider); !ok {
		t.Errorf("no endpoint: %T, want the no-op provider", tp)
	}
	_ = stop(context.Background())

	var mu sync.Mutex
	var got []string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
		mu.Unlock()
		if len(b) == 0 {
			t.Errorf("an empty export")
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer recv.Close()
	for _, endpoint := range []string{recv.URL, recv.Listener.Addr().String()} {
		got = nil
		tp, stop, err := tracing.Setup(context.Background(), endpoint, true, "test")
		if err != nil {
			t.Fatal(err)
		}
		_, span := tp.Tracer("t").Start(context.Background(), "one")
		span.End()
		if err := stop(context.Background()); err != nil {
			t.Fatalf("%s: shutdown: %v", endpoint, err)
		}
		mu.Lock()
		if len(got) != 1 || got[0] != "POST /v1/traces application/x-protobuf" {
			t.Errorf("%s: the receiver saw %v", endpoint, got)
		}
		mu.Unlock()
	}
}
