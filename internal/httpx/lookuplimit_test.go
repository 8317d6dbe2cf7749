package httpx

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/authn"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/ratelimit"
)

// TestBearerLimitsWrongLookups (issue 24): the tokens that cost a lookup before authentication
// (LookedUp) are limited per client address: the wrong ones are counted, and once an address
// has spent its budget its tokens are refused with 429 and Retry-After without reaching the
// verifier; another address, and tokens that cost no lookup, are not affected.
func TestBearerLimitsWrongLookups(t *testing.T) {
	lookups := 0
	v := authn.VerifierFunc(func(_ context.Context, tok string) (principal.Principal, error) {
		if strings.HasPrefix(tok, "key-") {
			lookups++
		}
		if tok == "key-good" || tok == "jwt-good" {
			return principal.Principal{ClientID: "c"}, nil
		}
		return principal.Principal{}, fmt.Errorf("%w: no", authn.ErrInvalidToken)
	})
	lim := ratelimit.Limit{PerSecond: 0.001, Burst: 3}
	h := Bearer{Verifier: v, ResourceMetadataURL: "https://x.example/.well-known/oauth-protected-resource",
		Lookups: &LookupLimit{Store: &ratelimit.Memory{}, Limit: lim}, LookedUp: func(tok string) bool { return strings.HasPrefix(tok, "key-") }}.
		Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	call := func(addr, tok string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "/api/v1/x", nil)
		req.RemoteAddr = addr
		req.Header.Set("Authorization", "Bearer "+tok)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	if rec := call("192.0.2.1:1000", "key-good"); rec.Code != http.StatusNoContent {
		t.Fatalf("a good key: %d", rec.Code)
	}
	for i := range 3 {
		if rec := call(fmt.Sprintf("192.0.2.1:%d", 2000+i), fmt.Sprintf("key-wrong-%d", i)); rec.Code != http.StatusUnauthorized {
			t.Fatalf("wrong key %d: %d, want 401", i, rec.Code)
		}
	}
	before := lookups
	rec := call("192.0.2.1:3000", "key-wrong-again")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" || lookups != before {
		t.Errorf("over the budget: %d (Retry-After %q, %d lookups), want 429 without a lookup", rec.Code, rec.Header().Get("Retry-After"), lookups-before)
	}
	if rec := call("192.0.2.1:3001", "jwt-good"); rec.Code != http.StatusNoContent {
		t.Errorf("a token that costs no lookup, same address: %d", rec.Code)
	}
	if rec := call("192.0.2.2:1000", "key-good"); rec.Code != http.StatusNoContent {
		t.Errorf("another address: %d", rec.Code)
	}
}
