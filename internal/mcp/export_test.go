package mcp

import (
	"net/http"
	"net/url"
)

// FastAnswered is how many requests h answered without the engine (fastpath.go): h is a
// *Handler, or a mux serving one at /mcp.
func FastAnswered(h http.Handler) int64 {
	if x, ok := h.(*Handler); ok {
		if x.fast == nil {
			return 0
		}
		return x.fast.answered.Load()
	}
	if m, ok := h.(*http.ServeMux); ok {
		x, _ := m.Handler(&http.Request{Method: http.MethodPost, Host: "127.0.0.1", URL: &url.URL{Path: "/mcp"}})
		if x != nil && x != h {
			return FastAnswered(x)
		}
	}
	return 0
}
