package server_test

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"testing"

	"github.com/neemias/neemias-mcp/internal/httpx"
)

// TestRandomAPIKeysLimitedPerAddress (issue 24): a well-formed API key with a random id costs
// a database lookup before anyone is authenticated, and REST answered every one. Wrong keys
// are now counted per client address (in the shared rate_limits table); once an address has
// spent its budget, its API keys get 429 with Retry-After before any lookup. OAuth tokens,
// verified by signature first, are not affected.
func TestRandomAPIKeysLimitedPerAddress(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	api := a.base + "/api/v1/roster/children"
	randomKey := func() string {
		id, secret := make([]byte, 16), make([]byte, 32)
		_, _ = rand.Read(id)
		_, _ = rand.Read(secret)
		return "nmk_" + hex.EncodeToString(id) + "_" + base64.RawURLEncoding.EncodeToString(secret)
	}
	for i := range httpx.DefaultLookupLimit.Burst {
		if status, _, body := restCall(t, "GET", api, randomKey(), ""); status != http.StatusUnauthorized {
			t.Fatalf("random key %d: %d %s, want 401", i, status, body)
		}
	}
	status, h, body := restCall(t, "GET", api, randomKey(), "")
	if v := decodeObject(t, "429", body); status != http.StatusTooManyRequests || h.Get("Retry-After") == "" || v["code"] != "rate_limited" {
		t.Errorf("a random key over the budget: %d (Retry-After %q) %s, want 429 rate_limited", status, h.Get("Retry-After"), body)
	}
	// No request was authenticated yet: the one bucket is the address's, in the shared table.
	if n := a.one(t, `SELECT count(*) FROM rate_limits`); n != "1" {
		t.Errorf("rate_limits holds %s rows, want the address's one bucket", n)
	}
	if status, _, body := restCall(t, "GET", api, a.token(t, admin), ""); status != http.StatusOK {
		t.Errorf("an OAuth token from the same address: %d %s", status, body)
	}
}
