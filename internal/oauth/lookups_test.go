package oauth_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/internal/httpx"
	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
)

// TestUnauthenticatedLookupsLimited (issue 24): what costs a database lookup before anyone is
// authenticated is limited per client address. /revoke (RFC 7009: the token and the client
// looked up for anyone who asks) was not limited at all; it now has the token endpoint's limit
// in buckets of its own. The login and consent pages look up the authorization request their
// id names: a browser without the binding cookie costs no lookup, and wrong ids are counted
// (httpx.LookupLimit), an address over its budget refused with 429 and Retry-After.
func TestUnauthenticatedLookupsLimited(t *testing.T) {
	t.Parallel()
	e := newEnv(t, oauth.Options{TokenBurst: 4, TokenPerMinute: 0.01})

	answered, limited := 0, 0
	for range 9 {
		resp, err := http.Post(e.base+"/revoke", "application/x-www-form-urlencoded",
			strings.NewReader(url.Values{"token": {"nope-" + uuid.NewString()}, "client_id": {"nope"}}.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") != "":
			limited++
		case resp.StatusCode < 500:
			answered++
		default:
			t.Fatalf("revoke: %d", resp.StatusCode)
		}
	}
	if answered != 4 || limited != 5 {
		t.Errorf("/revoke: %d answered, %d limited; want 4 and 5", answered, limited)
	}
	// /token keeps its own budget.
	if r := oauthtest.Token(t, e.base, url.Values{"grant_type": {"authorization_code"}, "code": {"nope"}}, "nope", ""); r.Status == http.StatusTooManyRequests {
		t.Errorf("/token limited by /revoke's requests")
	}

	// No cookie for the id: the same error page, and nothing counted.
	b := oauthtest.NewBrowser(t)
	for range httpx.DefaultLookupLimit.Burst + 5 {
		if p := b.Get(e.base + "/consent?id=" + uuid.NewString()); p.Status != http.StatusBadRequest {
			t.Fatalf("consent without a binding cookie: %d, want 400", p.Status)
		}
	}
	// A cookie named for a random id: each is a lookup, and a wrong one.
	wrong := func(path string) oauthtest.Page {
		id := uuid.New()
		req, _ := http.NewRequest(http.MethodGet, e.base+path+"?id="+id.String(), nil)
		req.AddCookie(&http.Cookie{Name: "neemias_authz_" + strings.ReplaceAll(id.String(), "-", "")[:16], Value: "guess"})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return oauthtest.Page{Status: resp.StatusCode, Header: resp.Header, Body: string(body)}
	}
	for i := range httpx.DefaultLookupLimit.Burst {
		path := []string{"/consent", "/login"}[i%2]
		if p := wrong(path); p.Status != http.StatusBadRequest {
			t.Fatalf("wrong lookup %d on %s: %d, want 400", i, path, p.Status)
		}
	}
	for _, path := range []string{"/consent", "/login"} {
		if p := wrong(path); p.Status != http.StatusTooManyRequests || p.Header.Get("Retry-After") == "" {
			t.Errorf("%s over the budget: %d (Retry-After %q), want 429", path, p.Status, p.Header.Get("Retry-After"))
		}
	}
}
