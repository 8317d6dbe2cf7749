package httpx

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/internal/principal"
)

func TestRateLimiterPerCaller(t *testing.T) {
	l := &RateLimiter{PerSecond: 0.001, Burst: 3}
	h := l.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
	call := func(p *principal.Principal) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		if p != nil {
			r = r.WithContext(principal.With(r.Context(), *p))
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	a := principal.Principal{UserID: uuid.New(), ChurchID: uuid.New(), ClientID: "a"}
	b := a
	b.ClientID = "b"
	for i := range 3 {
		if got := call(&a).Code; got != http.StatusOK {
			t.Fatalf("request %d: %d", i, got)
		}
	}
	w := call(&a)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "rate limit exceeded") {
		t.Fatalf("4th request: %d %q %s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	if got := call(&b).Code; got != http.StatusOK {
		t.Errorf("another client of the same user has its own bucket: %d", got)
	}
	if got := call(nil).Code; got != http.StatusOK {
		t.Errorf("unauthenticated requests are not limited here: %d", got)
	}
}

func TestRateLimiterBoundsMemory(t *testing.T) {
	l := &RateLimiter{PerSecond: 1000, Burst: 1, MaxKeys: 100}
	h := l.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for range 1000 {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r = r.WithContext(principal.With(r.Context(), principal.Principal{UserID: uuid.New()}))
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	if n := l.mem.Len(); n > 100 {
		t.Errorf("%d buckets kept, want at most 100", n)
	}
}
