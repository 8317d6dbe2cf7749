package external_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neemias/neemias-mcp/internal/authn"
	"github.com/neemias/neemias-mcp/internal/oauth/external"
	"github.com/neemias/neemias-mcp/internal/oauth/external/oidctest"
	"github.com/neemias/neemias-mcp/internal/principal"
)

// fakeIntrospection is an RFC 7662 endpoint answering what answer returns for a token; it
// demands HTTP Basic rs:s3cret and counts calls.
type fakeIntrospection struct {
	srv    *httptest.Server
	calls  atomic.Int64
	mu     sync.Mutex
	answer func(token string) (int, any)
}

func newFakeIntrospection(t *testing.T) *fakeIntrospection {
	f := &fakeIntrospection{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.calls.Add(1)
		if id, secret, ok := r.BasicAuth(); !ok || id != "rs" || secret != "s3cret" || r.Method != http.MethodPost {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		f.mu.Lock()
		answer := f.answer
		f.mu.Unlock()
		status, body := answer(r.PostFormValue("token"))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if s, ok := body.(string); ok {
			_, _ = w.Write([]byte(s))
			return
		}
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeIntrospection) set(answer func(string) (int, any)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answer = answer
}

func introspectionSetup(t *testing.T, edit func(*external.Config)) (*env, *fakeIntrospection) {
	t.Helper()
	f := newFakeIntrospection(t)
	e := setup(t, func(c *external.Config) {
		c.Introspection = &external.Introspection{Endpoint: f.srv.URL + "/introspect", ClientID: "rs", ClientSecret: "s3cret"}
		if edit != nil {
			edit(c)
		}
	})
	return e, f
}

// active is an introspection answer for an active access token of sub with the given extras.
func active(e *env, sub string, extra map[string]any) map[string]any {
	now := e.clk.now()
	m := map[string]any{
		"active": true, "iss": e.idp.URL, "sub": sub, "aud": []string{resource}, "client_id": "test-client",
		"scope": "roster:read children:read", "exp": now.Add(5 * time.Minute).Unix(), "iat": now.Unix(),
		"token_use": "access_token", "token_type": "Bearer",
	}
	for k, v := range extra {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return m
}

// TestIntrospection: an opaque token is decided by the provider's introspection answer, with
// the same audience, subject and claim rules as a JWT; an endpoint that fails is 503 material
// (not ErrInvalidToken), and its errors say what to fix without echoing the answer.
func TestIntrospection(t *testing.T) {
	e, f := introspectionSetup(t, nil)
	cases := []struct {
		name   string
		status int
		body   func() any
		want   string // "" ok; "invalid"; otherwise a substring of an unavailable error
	}{
		{"active", 200, func() any { return active(e, "user-volunteer", nil) }, ""},
		{"inactive", 200, func() any { return map[string]any{"active": false} }, "invalid"},
		{"no active member", 200, func() any { return active(e, "user-volunteer", map[string]any{"active": nil}) }, "invalid"},
		{"refresh token", 200, func() any { return active(e, "user-volunteer", map[string]any{"token_use": "refresh_token"}) }, "invalid"},
		{"Keycloak refresh typ", 200, func() any { return active(e, "user-volunteer", map[string]any{"typ": "Refresh"}) }, "invalid"},
		{"another issuer", 200, func() any { return active(e, "user-volunteer", map[string]any{"iss": "https://evil.example"}) }, "invalid"},
		{"expired", 200, func() any {
			return active(e, "user-volunteer", map[string]any{"exp": time.Now().Add(-time.Hour).Unix()})
		}, "invalid"},
		{"another resource", 200, func() any { return active(e, "user-volunteer", map[string]any{"aud": "https://other.example/mcp"}) }, "invalid"},
		{"no aud, no list", 200, func() any { return active(e, "user-volunteer", map[string]any{"aud": nil}) }, "invalid"},
		{"unknown subject", 200, func() any { return active(e, "stranger", nil) }, "denied"},
		{"no iss (optional)", 200, func() any { return active(e, "user-volunteer", map[string]any{"iss": nil}) }, ""},
		{"endpoint 500", 500, func() any { return `{"error":"server_error","error_description":"sub user-volunteer"}` }, "status 500"},
		{"malformed answer", 200, func() any { return `not json user-volunteer` }, "malformed answer"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f.set(func(string) (int, any) { return tc.status, tc.body() })
			p, err := e.v.Verify(context.Background(), "opaque-token-"+string(rune('a'+i)))
			switch {
			case tc.want == "":
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				if p.UserID != volunteer.ID || !p.Scopes.Has("roster:read") || p.ClientID != "test-client" {
					t.Errorf("principal %+v", p)
				}
			case tc.want == "invalid":
				wantInvalid(t, err, tc.name)
			case tc.want == "denied":
				wantDenied(t, err, tc.name)
			default:
				if !errors.Is(err, external.ErrIntrospectionUnavailable) || errors.Is(err, authn.ErrInvalidToken) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("err = %v, want ErrIntrospectionUnavailable saying %q", err, tc.want)
				}
				if strings.Contains(err.Error(), "user-volunteer") {
					t.Errorf("the error echoes the answer: %v", err)
				}
				var ra interface{ RetryAfter() time.Duration }
				if !errors.As(err, &ra) || ra.RetryAfter() < time.Second {
					t.Errorf("no Retry-After hint on %v", err)
				}
			}
		})
	}
	t.Run("wrong client credentials", func(t *testing.T) {
		e2, f2 := introspectionSetup(t, func(c *external.Config) { c.Introspection.ClientSecret = "wrong" })
		f2.set(func(string) (int, any) { return 200, active(e2, "user-volunteer", nil) })
		_, err := e2.v.Verify(context.Background(), "opaque")
		if !errors.Is(err, external.ErrIntrospectionUnavailable) || !strings.Contains(err.Error(), "client id and secret") {
			t.Errorf("err = %v, want an unavailable error naming the credentials", err)
		}
		if err := e2.v.Ready(context.Background()); err == nil || !strings.Contains(err.Error(), "client id and secret") {
			t.Errorf("Ready after a failed introspection: %v", err)
		}
	})
	t.Run("endpoint down", func(t *testing.T) {
		e3, f3 := introspectionSetup(t, nil)
		f3.srv.Close()
		_, err := e3.v.Verify(context.Background(), "opaque")
		if !errors.Is(err, external.ErrIntrospectionUnavailable) || !strings.Contains(err.Error(), "connection failed") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("JWTs still verified locally", func(t *testing.T) {
		before := f.calls.Load()
		if _, err := e.verify(t, e.idp.Sign(t, e.claims("user-volunteer"), oidctest.SignOpts{})); err != nil {
			t.Fatal(err)
		}
		if f.calls.Load() != before {
			t.Error("a JWT was introspected")
		}
	})
}

// TestIntrospectionCache: an active answer is reused until the token's exp or the cache TTL,
// whichever comes first; inactive answers are not cached; a revocation is seen once the TTL
// has passed.
func TestIntrospectionCache(t *testing.T) {
	e, f := introspectionSetup(t, func(c *external.Config) { c.Introspection.CacheTTL = 30 * time.Second })
	revoked := atomic.Bool{}
	var shortExp atomic.Int64 // 10 s after the short-lived token is first seen
	f.set(func(tok string) (int, any) {
		if revoked.Load() {
			return 200, map[string]any{"active": false}
		}
		if tok == "short" {
			shortExp.CompareAndSwap(0, e.clk.now().Add(10*time.Second).Unix())
			return 200, active(e, "user-volunteer", map[string]any{"exp": shortExp.Load()})
		}
		return 200, active(e, "user-volunteer", nil)
	})
	verify := func(tok string) error { _, err := e.v.Verify(context.Background(), tok); return err }
	steps := []struct {
		name      string
		advance   time.Duration
		token     string
		revoke    bool
		wantErr   bool
		wantCalls int64
	}{
		{"first use", 0, "long", false, false, 1},
		{"cached", 10 * time.Second, "long", false, false, 1},
		{"revoked, still cached", 0, "long", true, false, 1},
		{"TTL passed: revocation seen", 25 * time.Second, "long", true, true, 2},
		{"inactive not cached", 0, "long", true, true, 3},
		{"short-lived token", 0, "short", false, false, 4},
		{"short-lived token cached", 5 * time.Second, "short", false, false, 4},
		{"past its exp: asked again (within the clock-skew allowance)", 6 * time.Second, "short", false, false, 5},
		{"past exp and skew: expired", 30 * time.Second, "short", false, true, 6},
	}
	for _, s := range steps {
		e.clk.advance(s.advance)
		revoked.Store(s.revoke)
		err := verify(s.token)
		if (err != nil) != s.wantErr {
			t.Errorf("%s: err = %v, want error %v", s.name, err, s.wantErr)
		}
		if got := f.calls.Load(); got != s.wantCalls {
			t.Errorf("%s: %d introspection calls, want %d", s.name, got, s.wantCalls)
		}
	}
}

// BenchmarkIntrospectionCacheHit is the cost of an opaque token already in the cache (the
// lookup runs every time; here an in-memory map).
func BenchmarkIntrospectionCacheHit(b *testing.B) {
	f := &fakeIntrospection{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"active": true, "sub": "u", "aud": resource, "scope": "roster:read",
			"exp": time.Now().Add(time.Hour).Unix()})
	}))
	defer f.srv.Close()
	idp := oidctest.New(b)
	v, err := external.NewVerifier(context.Background(), external.Config{
		Issuer: idp.URL, Audience: resource, RootCAs: idp.CertPool(),
		Introspection: &external.Introspection{Endpoint: f.srv.URL, ClientID: "rs"},
		Lookup:        func(context.Context, string, string) (external.User, error) { return volunteer, nil },
	})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), "opaque"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(context.Background(), "opaque"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMissingAudience: a token without aud is refused unless its client is listed; a listed
// client's token must still carry one of our scopes, and every acceptance reaches the hook
// (the audit log), whose failure makes the request unavailable rather than unaudited.
func TestMissingAudience(t *testing.T) {
	var (
		mu       sync.Mutex
		recorded []principal.Principal
		hookErr  error
	)
	e := setup(t, func(c *external.Config) {
		c.AcceptMissingAudience = []string{"claude-desktop"}
		c.OnMissingAudience = func(_ context.Context, p principal.Principal) error {
			mu.Lock()
			defer mu.Unlock()
			recorded = append(recorded, p)
			return hookErr
		}
	})
	tok := func(edit map[string]any) string {
		c := e.claims("user-volunteer")
		delete(c, "aud")
		c["client_id"] = "claude-desktop"
		for k, v := range edit {
			if v == nil {
				delete(c, k)
			} else {
				c[k] = v
			}
		}
		return e.idp.Sign(t, c, oidctest.SignOpts{})
	}
	cases := []struct {
		name      string
		token     string
		wantOK    bool
		wantAudit int
	}{
		{"listed client_id", tok(nil), true, 1},
		{"listed azp", tok(map[string]any{"client_id": nil, "azp": "claude-desktop"}), true, 1},
		{"empty aud array", tok(map[string]any{"aud": []string{}}), true, 1},
		{"unlisted client", tok(map[string]any{"client_id": "other"}), false, 0},
		{"no client at all", tok(map[string]any{"client_id": nil}), false, 0},
		{"none of our scopes", tok(map[string]any{"scope": "openid profile"}), false, 0},
		{"another resource's aud", tok(map[string]any{"aud": "https://other.example/mcp"}), false, 0},
	}
	for _, tc := range cases {
		mu.Lock()
		recorded = nil
		mu.Unlock()
		p, err := e.verify(t, tc.token)
		if tc.wantOK && (err != nil || p.UserID != volunteer.ID) {
			t.Errorf("%s: %v", tc.name, err)
		}
		if !tc.wantOK {
			wantInvalid(t, err, tc.name)
		}
		mu.Lock()
		if len(recorded) != tc.wantAudit || tc.wantAudit == 1 && recorded[0].ClientID != "claude-desktop" {
			t.Errorf("%s: hook calls %+v, want %d", tc.name, recorded, tc.wantAudit)
		}
		mu.Unlock()
	}
	mu.Lock()
	hookErr = errors.New("database down")
	mu.Unlock()
	if _, err := e.verify(t, tok(nil)); err == nil || errors.Is(err, authn.ErrInvalidToken) {
		t.Errorf("audit failing: err = %v, want an infrastructure error (503)", err)
	}
	// Without a list (the default), the same token is refused.
	plain := setup(t, nil)
	c := plain.claims("user-volunteer")
	delete(c, "aud")
	c["client_id"] = "claude-desktop"
	_, err := plain.verify(t, plain.idp.Sign(t, c, oidctest.SignOpts{}))
	wantInvalid(t, err, "no aud, default")
}

// TestStartWithoutProvider: a provider that cannot be reached does not stop NewVerifier;
// tokens then fail as unavailable (503, with a retry hint) and Ready says why.
func TestStartWithoutProvider(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "https://" + ln.Addr().String()
	ln.Close()
	idp := oidctest.New(t) // only to sign a well-formed token
	v, err := external.NewVerifier(context.Background(), external.Config{
		Issuer: down, Audience: resource, FetchTimeout: time.Second,
		Lookup: func(context.Context, string, string) (external.User, error) { return volunteer, nil },
	})
	if err != nil {
		t.Fatalf("NewVerifier with the provider down: %v", err)
	}
	_, err = v.Verify(context.Background(), idp.Sign(t, idp.Claims("user-volunteer", resource), oidctest.SignOpts{}))
	var ra interface{ RetryAfter() time.Duration }
	if !errors.Is(err, external.ErrKeysUnavailable) || errors.Is(err, authn.ErrInvalidToken) || !errors.As(err, &ra) {
		t.Errorf("Verify with the provider down: %v, want ErrKeysUnavailable with a retry hint", err)
	}
	if err := v.Ready(context.Background()); err == nil || !strings.Contains(err.Error(), "connection failed") {
		t.Errorf("Ready: %v, want the provider unreachable", err)
	}
}

// TestAuthorizationServerMetadata: the proxied document is the provider's with "none" added
// to token_endpoint_auth_methods_supported (the RFC 8414 default client_secret_basic kept
// when the member is absent), nothing else changed, issuer included.
func TestAuthorizationServerMetadata(t *testing.T) {
	e := setup(t, nil)
	body, err := e.v.AuthorizationServerMetadata(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["issuer"] != e.idp.URL || doc["jwks_uri"] != e.idp.URL+"/jwks" || doc["authorization_endpoint"] != e.idp.URL+"/authorize" {
		t.Errorf("proxied metadata changed the provider's members: %v", doc)
	}
	if got := doc["token_endpoint_auth_methods_supported"]; !jsonEq(got, []string{"client_secret_basic", "none"}) {
		t.Errorf("token_endpoint_auth_methods_supported = %v", got)
	}
	if len(doc) != 9 {
		t.Errorf("%d members, want the provider's 8 plus token_endpoint_auth_methods_supported", len(doc))
	}
}

func jsonEq(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestRoleClaimShapes: the role claim may be a string, an array, or an object whose member
// names are the roles (Zitadel); another shape is refused.
func TestRoleClaimShapes(t *testing.T) {
	e := setup(t, func(c *external.Config) {
		c.Claims = external.ClaimMapping{Role: "urn:zitadel:iam:org:project:roles", Roles: map[string]string{"neemias-responsavel": "RESPONSAVEL"}}
	})
	cases := []struct {
		name  string
		value any
		want  string // the role, or "" for a refusal
	}{
		{"string", "neemias-responsavel", "RESPONSAVEL"},
		{"array", []string{"x", "neemias-responsavel"}, "RESPONSAVEL"},
		{"Zitadel object", map[string]any{"neemias-responsavel": map[string]string{"2791": "igreja.zitadel.cloud"}}, "RESPONSAVEL"},
		{"unmapped object: the user's role", map[string]any{"coral": map[string]string{}}, "VOLUNTARIO"},
		{"number", 7, ""},
	}
	for _, tc := range cases {
		c := e.claims("user-volunteer")
		c["urn:zitadel:iam:org:project:roles"] = tc.value
		p, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{}))
		if tc.want == "" {
			wantInvalid(t, err, tc.name)
			continue
		}
		if err != nil || p.Role != tc.want {
			t.Errorf("%s: role %q, %v; want %s", tc.name, p.Role, err, tc.want)
		}
	}
}
