package httpx

import (
	"errors"
	"fmt"
	"net/http"
)

// ErrorWriter writes a refusal of the edge in a transport's own error format. code is a stable
// machine name ("unauthorized", "forbidden", "invalid_input", "rate_limited", "too_large",
// "unavailable"); message is for people and never quotes the request. The MCP endpoint leaves
// the writers nil (JSON-RPC errors, and RFC 6750 OAuth errors for bearer challenges); REST sets
// one that writes its documented Error object.
type ErrorWriter func(w http.ResponseWriter, status int, code, message string)

// Edge codes an ErrorWriter receives.
const (
	EdgeUnauthorized = "unauthorized"
	EdgeForbidden    = "forbidden"
	EdgeInvalidInput = "invalid_input"
	EdgeRateLimited  = "rate_limited"
	EdgeTooLarge     = "too_large"
	EdgeUnavailable  = "unavailable"
)

// BodyCheck applies the body rules of the edge to a request that has a body (REST; the MCP
// endpoint applies the same functions itself, because it answers in JSON-RPC): at most
// MaxBytes (413), one well-formed JSON value of valid UTF-8, at most MaxDepth deep, without
// duplicate or case-variant keys (400). The body is read once and handed on in memory.
type BodyCheck struct {
	MaxBytes int64
	MaxDepth int
	Errors   ErrorWriter
}

// Wrap returns next behind the check.
func (b BodyCheck) Wrap(next http.Handler) http.Handler {
	limit, depth := b.MaxBytes, b.MaxDepth
	if limit <= 0 {
		limit = DefaultMaxBodyBytes
	}
	if depth <= 0 {
		depth = DefaultMaxJSONDepth
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || (r.ContentLength == 0 && r.Method == http.MethodGet) {
			next.ServeHTTP(w, r)
			return
		}
		body, err := ReadBody(w, r, limit)
		if err != nil {
			if errors.Is(err, ErrBodyTooLarge) {
				b.Errors(w, http.StatusRequestEntityTooLarge, EdgeTooLarge, fmt.Sprintf("request body exceeds %d bytes", limit))
				return
			}
			b.Errors(w, http.StatusBadRequest, EdgeInvalidInput, "could not read the request body")
			return
		}
		if len(body) > 0 {
			if err := CheckJSON(body, depth); err != nil {
				var je *JSONError
				errors.As(err, &je)
				b.Errors(w, http.StatusBadRequest, EdgeInvalidInput, je.Reason)
				return
			}
		}
		r.Body = bodyReader(body)
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}
