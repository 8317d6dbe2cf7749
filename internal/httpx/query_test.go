package httpx

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCheckQuery (issue 24): a ";"-separated pair (which r.URL.Query() silently drops) and a
// parameter given twice (Get takes the first, another reader the last) are refused, naming the
// parameter; everything url.ParseQuery reads as written passes.
func TestCheckQuery(t *testing.T) {
	for _, tc := range []struct {
		raw, param, reason string // param "" when the query passes
		repeatable         []string
	}{
		{raw: ""},
		{raw: "from=2026-01-04&to=2026-01-31"},
		{raw: "q=a%3Bb"},  // an encoded ";" is a value's
		{raw: "a=1&&b=2"}, // empty pairs are nothing
		{raw: "a"},        // a name without a value
		{raw: "name=Ana+Maria&x=%C3%A7"},
		{raw: "resource=a&resource=b", repeatable: []string{"resource"}},
		{raw: "from=2026-01-04;class_id=x", param: "from", reason: `";"`},
		{raw: "class_id;from=2026-01-04", param: "class_id", reason: `";"`},
		{raw: "a=1&b=2;", param: "b", reason: `";"`},
		{raw: "%66rom=1;x", param: "from", reason: `";"`},
		{raw: "from=1&from=2", param: "from", reason: "at most once"},
		{raw: "from=1&%66rom=2", param: "from", reason: "at most once"},
		{raw: "from&from=", param: "from", reason: "at most once"},
		{raw: "resource=a&resource=b", param: "resource", reason: "at most once"},
		{raw: "scope=a&resource=a&scope=b", param: "scope", reason: "at most once", repeatable: []string{"resource"}},
		{raw: "a%zz=1", param: "a%zz", reason: "malformed"},
		{raw: "a=%zz", param: "a", reason: "malformed"},
		{raw: strings.Repeat("n", 100) + "=1&" + strings.Repeat("n", 100) + "=2", param: strings.Repeat("n", 40) + "…", reason: "at most once"},
	} {
		err := CheckQuery(tc.raw, tc.repeatable...)
		switch {
		case tc.param == "" && err != nil:
			t.Errorf("%q: refused (%v), want it accepted", tc.raw, err)
		case tc.param != "" && err == nil:
			t.Errorf("%q: accepted, want %q refused", tc.raw, tc.param)
		case err != nil && (err.Param != tc.param || !strings.Contains(err.Reason, tc.reason)):
			t.Errorf("%q: %v, want parameter %q refused for %s", tc.raw, err, tc.param, tc.reason)
		}
	}
}

func TestQueryCheckAnswers400(t *testing.T) {
	var got string
	h := QueryCheck{Refuse: func(w http.ResponseWriter, qe *QueryError) {
		got = qe.Error()
		w.WriteHeader(http.StatusBadRequest)
	}}.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/x?date=2026-01-04;class_id=1", nil))
	if rec.Code != http.StatusBadRequest || got != `parameter "date": ";" does not separate parameters: use "&" (a ";" inside a value is percent-encoded, %3B)` {
		t.Errorf("%d %q", rec.Code, got)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/x?date=2026-01-04", nil))
	if rec.Code != http.StatusNoContent {
		t.Errorf("a clean query: %d", rec.Code)
	}
}
