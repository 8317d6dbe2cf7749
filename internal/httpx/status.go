package httpx

import "net/http"

// StatusRecorder remembers the status a handler answered with, for the layers that report on
// it after the fact (metrics, tracing). It passes Flush through (SSE) and unwraps for
// http.ResponseController. One recorder serves every layer of a request: RecordStatus reuses
// the one an outer layer made.
type StatusRecorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

// RecordStatus returns w's recorder: w itself when an outer layer already wrapped it, else a
// new one.
func RecordStatus(w http.ResponseWriter) *StatusRecorder {
	if r, ok := w.(*StatusRecorder); ok {
		return r
	}
	return &StatusRecorder{ResponseWriter: w, status: http.StatusOK}
}

// Status is the status written, 200 when the handler wrote a body without one (as net/http
// does) or wrote nothing yet.
func (w *StatusRecorder) Status() int { return w.status }

func (w *StatusRecorder) WriteHeader(code int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *StatusRecorder) Write(b []byte) (int, error) {
	w.wroteHeader = true
	return w.ResponseWriter.Write(b)
}

// Flush supports SSE streaming.
func (w *StatusRecorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *StatusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }
