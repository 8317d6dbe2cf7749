package httpx

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/ratelimit"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// TestRateLimiterSharedByAUsersClientsAndReplicas (issue 24, finding 2): the per-caller budget
// of /mcp and REST is the user's, not the OAuth client's or the API key's, and it is one across
// replicas: two limiters (two servers) over two pools of one database, each sent requests of
// one user through two clients, allow the burst once between them.
func TestRateLimiterSharedByAUsersClientsAndReplicas(t *testing.T) {
	t.Parallel()
	dbURL := storetest.NewDatabase(t)
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	var replicas []http.Handler
	for range 2 {
		l := &RateLimiter{PerSecond: 0.001, Burst: 4, Store: &ratelimit.Postgres{Pool: storetest.Pool(t, dbURL)}}
		replicas = append(replicas, l.Wrap(ok))
	}
	user := principal.Principal{UserID: uuid.New(), ChurchID: uuid.New()}
	clients := []string{"https://claude.ai/oauth/client", "apikey:0b7c2a9e-5d1f-4c7e-9a51-3f0e8c2d7b64"}
	allowed := 0
	for i := range 16 {
		p := user
		p.ClientID = clients[(i/2)%2]
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r = r.WithContext(principal.With(r.Context(), p))
		w := httptest.NewRecorder()
		replicas[i%2].ServeHTTP(w, r)
		switch w.Code {
		case http.StatusOK:
			allowed++
		case http.StatusTooManyRequests:
		default:
			t.Fatalf("request %d: %d %s", i, w.Code, w.Body)
		}
	}
	if allowed != 4 {
		t.Errorf("%d requests allowed over 2 replicas × 2 clients of one user, want 4 (one budget)", allowed)
	}
}

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
	b.UserID = uuid.New()
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
		t.Errorf("another user of the church has a bucket of their own: %d", got)
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
