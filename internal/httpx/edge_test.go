package httpx

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/internal/authn"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/ratelimit"
)

// edgeFixture is one Edge in front of two surfaces shaped as MCP's and REST's are: MCP with
// JSON-RPC errors, POST only and the request's id; REST with its own error writer, the query
// check, an extra host and API keys.
type edgeFixture struct {
	edge      *Edge
	mcp, rest http.Handler
	keyLooks  int // lookups of API keys
}

const (
	edgeUserTok = "tok-user"
	edgeKeyGood = "key-good"
)

var edgeUser = principal.Principal{UserID: uuid.New(), ChurchID: uuid.New(), ClientID: "c"}

func newEdgeFixture(t *testing.T, burst int) *edgeFixture {
	t.Helper()
	f := &edgeFixture{}
	oauth := authn.VerifierFunc(func(_ context.Context, tok string) (principal.Principal, error) {
		if tok == edgeUserTok {
			return edgeUser, nil
		}
		return principal.Principal{}, fmt.Errorf("%w: unknown", authn.ErrInvalidToken)
	})
	keys := authn.VerifierFunc(func(_ context.Context, tok string) (principal.Principal, error) {
		f.keyLooks++
		if tok == edgeKeyGood {
			return edgeUser, nil
		}
		return principal.Principal{}, fmt.Errorf("%w: no such key", authn.ErrInvalidToken)
	})
	f.edge = &Edge{
		Hosts: []string{"mcp.example.org"}, Origins: []string{"https://app.example.org"},
		Verifier: oauth, ResourceMetadataURL: "https://mcp.example.org/.well-known/oauth-protected-resource/mcp",
		EndpointMetadataURL: func(r *http.Request) string {
			return "https://mcp.example.org/.well-known/oauth-protected-resource" + r.URL.Path
		},
		ChallengeScope: "roster:read",
		RateLimit:      &RateLimiter{PerSecond: 0.001, Burst: burst},
		Lookups:        &LookupLimit{Store: &ratelimit.Memory{}, Limit: ratelimit.Limit{PerSecond: 0.001, Burst: 2}},
	}
	if err := f.edge.Check(); err != nil {
		t.Fatal(err)
	}
	served := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := principal.From(r.Context())
		w.Header().Set("X-Metadata", f.edge.MetadataURL(r.Context()))
		w.Header().Set("X-Client", p.ClientID)
		w.WriteHeader(http.StatusNoContent)
	})
	f.mcp = f.edge.Wrap(served, SurfaceRules{
		Method: http.MethodPost,
		RPCID:  func(*http.Request) json.RawMessage { return json.RawMessage(`7`) },
	})
	f.rest = f.edge.Wrap(served, SurfaceRules{
		Errors: func(w http.ResponseWriter, status int, code, message string) {
			w.Header().Set("X-Edge-Code", code)
			w.WriteHeader(status)
			_, _ = w.Write([]byte(message))
		},
		Query: &QueryCheck{Refuse: func(w http.ResponseWriter, qe *QueryError) {
			w.Header().Set("X-Edge-Code", "query:"+qe.Param)
			w.WriteHeader(http.StatusBadRequest)
		}},
		Hosts: []string{"api.example.org"},
		Keys:  &Keys{Is: func(tok string) bool { return strings.HasPrefix(tok, "key-") }, Verifier: keys},
	})
	return f
}

type edgeReq struct {
	method, target, host, origin, token string
}

func (f *edgeFixture) do(h http.Handler, q edgeReq) *httptest.ResponseRecorder {
	if q.method == "" {
		q.method = http.MethodPost
	}
	if q.host == "" {
		q.host = "mcp.example.org"
	}
	r := httptest.NewRequest(q.method, q.target, strings.NewReader(`{}`))
	r.Host = q.host
	r.RemoteAddr = "192.0.2.1:4000"
	if q.origin != "" {
		r.Header.Set("Origin", q.origin)
	}
	if q.token != "" {
		r.Header.Set("Authorization", "Bearer "+q.token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestEdgeOrder: the layers answer in the Edge's one order on both surfaces, each in the
// surface's error format: Host/Origin before the surface's own rules, those before the
// credential, the credential before the rate limit.
func TestEdgeOrder(t *testing.T) {
	f := newEdgeFixture(t, 100)
	tests := []struct {
		name       string
		surface    string
		req        edgeReq
		wantStatus int
		wantIn     string // in the body, or the X-Edge-Code / Allow / WWW-Authenticate header
	}{
		{"foreign Host before the method", "mcp", edgeReq{method: "GET", target: "/mcp", host: "evil.example"}, 403, "Host header is not allowed"},
		{"foreign Origin before the credential", "mcp", edgeReq{target: "/mcp", origin: "https://evil.example"}, 403, "Origin is not allowed"},
		{"the method before the credential", "mcp", edgeReq{method: "GET", target: "/mcp"}, 405, "Allow: POST"},
		{"no credential", "mcp", edgeReq{target: "/sse"}, 401, `resource_metadata="https://mcp.example.org/.well-known/oauth-protected-resource/sse"`},
		{"a good token", "mcp", edgeReq{target: "/mcp", token: edgeUserTok}, 204, "X-Metadata: https://mcp.example.org/.well-known/oauth-protected-resource/mcp"},
		{"MCP takes no API keys", "mcp", edgeReq{target: "/mcp", token: edgeKeyGood}, 401, `error="invalid_token"`},
		{"REST's extra host is REST's", "mcp", edgeReq{target: "/mcp", host: "api.example.org", token: edgeUserTok}, 403, "Host header is not allowed"},

		{"foreign Host before the query", "rest", edgeReq{method: "GET", target: "/api/v1/x?a=1;b=2", host: "evil.example"}, 403, "X-Edge-Code: forbidden"},
		{"the query before the credential", "rest", edgeReq{method: "GET", target: "/api/v1/x?a=1&a=2"}, 400, "X-Edge-Code: query:a"},
		{"no credential, REST's body", "rest", edgeReq{method: "GET", target: "/api/v1/x"}, 401, "X-Edge-Code: unauthorized"},
		{"REST takes any method to its handler", "rest", edgeReq{method: "DELETE", target: "/api/v1/x", token: edgeUserTok}, 204, "X-Client: c"},
		{"REST's extra host", "rest", edgeReq{method: "GET", target: "/api/v1/x", host: "api.example.org", token: edgeUserTok}, 204, "X-Client: c"},
		{"an API key", "rest", edgeReq{method: "GET", target: "/api/v1/x", token: edgeKeyGood}, 204, "X-Client: c"},
	}
	for _, tt := range tests {
		t.Run(tt.surface+"/"+tt.name, func(t *testing.T) {
			h := f.mcp
			if tt.surface == "rest" {
				h = f.rest
			}
			w := f.do(h, tt.req)
			var seen strings.Builder
			_ = w.Header().Write(&seen)
			seen.WriteString(w.Body.String())
			if w.Code != tt.wantStatus || !strings.Contains(seen.String(), tt.wantIn) {
				t.Errorf("got %d\n%s\nwant %d with %q", w.Code, seen.String(), tt.wantStatus, tt.wantIn)
			}
		})
	}
}

// TestEdgeOneBudget: one Edge is one rate limiter, keyed by the authenticated caller, across
// both surfaces; refusals of the credential spend nothing of it.
func TestEdgeOneBudget(t *testing.T) {
	f := newEdgeFixture(t, 2)
	for range 3 { // refused before the limiter
		if w := f.do(f.rest, edgeReq{method: "GET", target: "/api/v1/x", token: "wrong"}); w.Code != http.StatusUnauthorized {
			t.Fatalf("a wrong token: %d", w.Code)
		}
	}
	if w := f.do(f.mcp, edgeReq{target: "/mcp", token: edgeUserTok}); w.Code != http.StatusNoContent {
		t.Fatalf("first call (MCP): %d", w.Code)
	}
	if w := f.do(f.rest, edgeReq{method: "GET", target: "/api/v1/x", token: edgeKeyGood}); w.Code != http.StatusNoContent {
		t.Fatalf("second call (REST, the same user's API key): %d", w.Code)
	}
	w := f.do(f.mcp, edgeReq{target: "/mcp", token: edgeUserTok})
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), `"jsonrpc":"2.0"`) {
		t.Fatalf("third call (MCP): %d Retry-After=%q %s, want a JSON-RPC 429", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	w = f.do(f.rest, edgeReq{method: "GET", target: "/api/v1/x", token: edgeUserTok})
	if w.Code != http.StatusTooManyRequests || w.Header().Get("X-Edge-Code") != EdgeRateLimited {
		t.Fatalf("fourth call (REST): %d %q, want 429 in REST's format", w.Code, w.Header().Get("X-Edge-Code"))
	}
}

// TestEdgeLimitsWrongKeys: the wrong API keys of an address are counted against the Edge's
// lookup limit; over it, the next is refused without a lookup.
func TestEdgeLimitsWrongKeys(t *testing.T) {
	f := newEdgeFixture(t, 100)
	for i := range 2 {
		if w := f.do(f.rest, edgeReq{method: "GET", target: "/api/v1/x", token: fmt.Sprintf("key-wrong-%d", i)}); w.Code != http.StatusUnauthorized {
			t.Fatalf("wrong key %d: %d", i, w.Code)
		}
	}
	before := f.keyLooks
	w := f.do(f.rest, edgeReq{method: "GET", target: "/api/v1/x", token: "key-wrong-again"})
	if w.Code != http.StatusTooManyRequests || f.keyLooks != before {
		t.Errorf("over the budget: %d after %d lookups, want 429 and none", w.Code, f.keyLooks-before)
	}
	if w := f.do(f.rest, edgeReq{method: "GET", target: "/api/v1/x", token: edgeUserTok}); w.Code != http.StatusNoContent {
		t.Errorf("an OAuth token from the same address: %d", w.Code)
	}
}

// TestEdgeCheck: a transport refuses to be built on an Edge that could not authenticate.
func TestEdgeCheck(t *testing.T) {
	v := authn.VerifierFunc(func(context.Context, string) (principal.Principal, error) { return principal.Principal{}, nil })
	for _, tc := range []struct {
		edge *Edge
		want string
	}{
		{nil, "an edge is required"},
		{&Edge{ResourceMetadataURL: "u", Hosts: LoopbackHosts()}, "Verifier"},
		{&Edge{Verifier: v, Hosts: LoopbackHosts()}, "ResourceMetadataURL"},
		{&Edge{Verifier: v, ResourceMetadataURL: "u"}, "Hosts"},
		{&Edge{Verifier: v, ResourceMetadataURL: "u", Hosts: LoopbackHosts()}, ""},
	} {
		err := tc.edge.Check()
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check() = %v, want %q", err, tc.want)
		}
	}
}
