package mcp

import (
	"net/http"
	"strings"
)

// responseWriter fixes headers on every response just before they are written: no caching
// anywhere (answers hold children's data and depend on the caller), no session id but the UI one (uisession.go), and
// no proxy buffering of SSE streams.
type responseWriter struct {
	http.ResponseWriter
	wroteHeader bool
	sessionID   string // the UI session id to issue (uisession.go), or ""
}

func newResponseWriter(w http.ResponseWriter) *responseWriter {
	return &responseWriter{ResponseWriter: w}
}

func (w *responseWriter) WriteHeader(status int) {
	if !w.wroteHeader {
		w.wroteHeader = true
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Del("Mcp-Session-Id")
		if w.sessionID != "" {
			h.Set("Mcp-Session-Id", w.sessionID)
		}
		if strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
			h.Set("X-Accel-Buffering", "no")
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *responseWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Flush supports SSE streaming.
func (w *responseWriter) Flush() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
