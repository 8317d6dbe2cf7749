package httpx

import (
	"bytes"
	"encoding/json"
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
// folding ("method"/"Method", "params"/"paramſ"). Such keys are how CVE-2026-27896 made one
// layer authorize a request and another execute a different one; rejecting them means every
// layer sees the same message.
func CheckJSON(data []byte, maxDepth int) error {
	if !utf8.Valid(data) {
		return &JSONError{CodeParseError, "request body is not valid UTF-8"}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		object bool
		keys   map[string]struct{}
		expect bool // in an object: next string token is a key
	}
	var stack []frame
	values := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if len(stack) > 0 {
				return &JSONError{CodeParseError, "request body is not valid JSON (truncated)"}
			}
			break
		}
		if err != nil {
			return &JSONError{CodeParseError, "request body is not valid JSON"}
		}
		if len(stack) == 0 {
			values++
			if values > 1 {
				return &JSONError{CodeParseError, "request body holds more than one JSON value"}
			}
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].expect = true
				}
				if len(stack) >= maxDepth {
					return &JSONError{CodeInvalidRequest, fmt.Sprintf("JSON nesting deeper than %d levels", maxDepth)}
				}
				stack = append(stack, frame{object: d == '{', expect: d == '{'})
			case '}', ']':
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].expect = true
				}
			}
			continue
		}
		if len(stack) == 0 {
			continue
		}
		top := &stack[len(stack)-1]
		if !top.object {
			continue
		}
		if top.expect { // tok is a key
			key, _ := tok.(string)
			folded := strings.ToLower(foldKey(key))
			if top.keys == nil {
				top.keys = make(map[string]struct{})
			}
			if _, dup := top.keys[folded]; dup {
				return &JSONError{CodeInvalidRequest, fmt.Sprintf("duplicate or case-variant object key %q", truncate(key, 40))}
			}
			top.keys[folded] = struct{}{}
			top.expect = false
		} else {
			top.expect = true
		}
	}
	if values == 0 {
		return &JSONError{CodeParseError, "request body is empty"}
	}
	return nil
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

// bodyReader hands a body that was read whole to the next handler.
func bodyReader(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }
