package server

import (
	"net/http"
	"sync/atomic"
)

// drainState is the server's shutdown hook: once Drain is called, /readyz answers 503 so
// load balancers stop sending new requests, while every other route keeps serving the
// requests that still arrive (in flight, or sent before the balancer noticed).
type drainState struct{ on atomic.Bool }

// Drain flips readiness to 503 ("draining") for good; `serve` calls it on SIGTERM, before its
// drain period and the graceful shutdown.
func (s *Server) Drain() { s.drain.on.Store(true) }

// readyUnlessDraining answers /readyz with 503 while draining, else asks next.
func (d *drainState) readyUnlessDraining(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d.on.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "no-store")
			w.Header().Set("Retry-After", "5")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"status":"draining"}` + "\n"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// retryAfterOn503 gives every 503 a Retry-After (1 s) unless its writer set one: a 503 is
// always "retry shortly" here (the database restarting, a provider unreachable, draining).
func retryAfterOn503(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&retryAfterWriter{ResponseWriter: w}, r)
	})
}

type retryAfterWriter struct{ http.ResponseWriter }

func (w *retryAfterWriter) WriteHeader(status int) {
	if status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "1")
	}
	w.ResponseWriter.WriteHeader(status)
}

// Unwrap lets http.ResponseController reach the connection (flushes of SSE responses).
func (w *retryAfterWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush passes SSE flushes through.
func (w *retryAfterWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
