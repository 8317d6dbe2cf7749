package httpx

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"
)

// DefaultMaxBodyBytes is the request-body limit used when none is configured: MCP requests are
// small, and the go-sdk's own 4 MiB default is far more than a tool call needs.
const DefaultMaxBodyBytes = 256 << 10

// DefaultMaxJSONDepth bounds nesting of objects and arrays in a request body.
const DefaultMaxJSONDepth = 32

// ErrBodyTooLarge is returned by ReadBody when the body exceeds the limit.
var ErrBodyTooLarge = errors.New("request body too large")

// ReadBody reads the whole request body, stopping at limit bytes whatever the framing
// (Content-Length, chunked, HTTP/2). It returns ErrBodyTooLarge past the limit.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, ErrBodyTooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, ErrBodyTooLarge
		}
		return nil, fmt.Errorf("reading request body: %w", err)
	}
	return body, nil
}

// JSONError is a failed strict JSON check: Code is the JSON-RPC code to answer with
// (-32700 for text that is not JSON, -32600 for JSON the server refuses to process).
type JSONError struct {
	Code   int64
	Reason string
}

func (e *JSONError) Error() string { return e.Reason }

// CheckJSON verifies that data is one well-formed JSON value of valid UTF-8, nested at most
// maxDepth deep, with no object holding two keys that are equal or equal under Unicode case
// folding. Every request body passes through it, so it is a single pass over the bytes
// (jsonChecker) rather than encoding/json's Decoder.Token, which builds and throws away an
// error value after every value; it refuses exactly what the Token reader did, with the same
// codes and reasons (FuzzCheckJSONMatchesTokens keeps that reader as the oracle).
func CheckJSON(data []byte, maxDepth int) error {
	if !utf8.Valid(data) {
		return &JSONError{CodeParseError, "request body is not valid UTF-8"}
	}
	c := jsonChecker{data: data, maxDepth: maxDepth}
	return c.run()
}

// foldKey maps every rune to the smallest rune of its Unicode case-folding orbit, so keys equal
// under strings.EqualFold (including ſ/s and K/k) collide.
func foldKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(minFold(r))
	}
	return b.String()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// SetBody hands a body that was read whole (and maybe rewritten) to the next handler.
func SetBody(r *http.Request, b []byte) {
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
}
