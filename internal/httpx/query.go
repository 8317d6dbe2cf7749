package httpx

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// QueryError is a query string (or form body) the edge refuses: Param is the parameter it is
// about, by name (never its value), Reason says what is wrong in words a client can act on,
// Kind which rule it broke (for pages that say it in Portuguese too).
type QueryError struct {
	Param, Reason string
	Kind          QueryErrorKind
}

// QueryErrorKind is the rule a refused query broke.
type QueryErrorKind int

// The rules of CheckQuery.
const (
	QuerySemicolon QueryErrorKind = iota + 1
	QueryRepeated
	QueryMalformed
)

func (e *QueryError) Error() string { return fmt.Sprintf("parameter %q: %s", e.Param, e.Reason) }

// CheckQuery refuses a query string that Go's readers would read otherwise than it was
// written, so that no layer acts on a value another never checked:
//
//   - a ";" between pairs: net/url no longer splits on it, and r.URL.Query() silently drops the
//     whole pair ("date=2026-01-04;class_id=x" reached the handler as no date at all); a ";"
//     inside a value must be percent-encoded (%3B);
//   - a parameter given twice (decoded names compared, so "a" and "%61" are one): Get takes
//     the first, another reader the last (RFC 6749 §3.1: OAuth parameters MUST NOT be included
//     more than once). repeatable names the parameters that may repeat (RFC 8707's resource);
//   - a malformed percent-escape.
//
// raw is r.URL.RawQuery, or an application/x-www-form-urlencoded body. Names in errors are
// decoded, %q-quoted and cut to 40 bytes: they are the client's text.
func CheckQuery(raw string, repeatable ...string) *QueryError {
	seen := map[string]bool{}
	for pair := range strings.SplitSeq(raw, "&") {
		if pair == "" {
			continue
		}
		if before, _, semi := strings.Cut(pair, ";"); semi {
			rawName, _, _ := strings.Cut(before, "=")
			return &QueryError{Param: paramName(rawName), Kind: QuerySemicolon, Reason: `";" does not separate parameters: use "&" (a ";" inside a value is percent-encoded, %3B)`}
		}
		rawName, value, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(rawName)
		if err != nil {
			return &QueryError{Param: paramName(rawName), Kind: QueryMalformed, Reason: "malformed percent-encoding in the name"}
		}
		if _, err := url.QueryUnescape(value); err != nil {
			return &QueryError{Param: paramName(rawName), Kind: QueryMalformed, Reason: "malformed percent-encoding in the value"}
		}
		if seen[name] && !slices.Contains(repeatable, name) {
			return &QueryError{Param: paramName(rawName), Kind: QueryRepeated, Reason: "must be given at most once"}
		}
		seen[name] = true
	}
	return nil
}

// paramName is a raw parameter name as errors show it: decoded when it can be, cut to 40 bytes.
func paramName(raw string) string {
	if n, err := url.QueryUnescape(raw); err == nil {
		raw = n
	}
	return truncate(raw, 40)
}

// QueryCheck applies CheckQuery to every request's query string before next reads it. A
// refusal is answered by Refuse (a 400 naming the parameter, in the transport's error format).
type QueryCheck struct {
	Refuse func(w http.ResponseWriter, qe *QueryError)
	// Repeatable names the parameters that may be given more than once.
	Repeatable []string
}

// Wrap returns next behind the check.
func (q QueryCheck) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if qe := CheckQuery(r.URL.RawQuery, q.Repeatable...); qe != nil {
			q.Refuse(w, qe)
			return
		}
		next.ServeHTTP(w, r)
	})
}
