package external_test

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/internal/authn"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/oauth/external"
	"github.com/neemias/neemias-mcp/internal/oauth/external/oidctest"
	"github.com/neemias/neemias-mcp/internal/principal"
)

const resource = "https://mcp.example-church.org/mcp"

var (
	church      = uuid.MustParse("0b7c8a52-7d4e-4a53-9f3e-2f4f5b8c9d01")
	otherChurch = uuid.MustParse("5e0f3f0a-1c1b-4f2e-8e7d-6a5b4c3d2e1f")
	volunteer   = external.User{ID: uuid.MustParse("6f1c0b0e-2d0f-4a8e-9d57-0c4f7b9f1a11"), ChurchID: church, Role: "VOLUNTARIO"}
	admin       = external.User{ID: uuid.MustParse("a3d2c1b0-0000-4000-8000-000000000001"), ChurchID: church, Role: "ADMIN"}
	homeless    = external.User{ID: uuid.MustParse("a3d2c1b0-0000-4000-8000-000000000002"), Role: "CADASTRO"}
)

// clock is real time plus a settable offset, so tokens signed with real timestamps stay
// valid while the key set's refresh interval is stepped over.
type clock struct{ off atomic.Int64 }

func (c *clock) now() time.Time          { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *clock) advance(d time.Duration) { c.off.Add(int64(d)) }

type env struct {
	idp    *oidctest.Issuer
	v      *external.Verifier
	clk    *clock
	mu     sync.Mutex
	lookup []string // "iss sub" of every lookup
}

func (e *env) lookups() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.lookup...)
}

// setup starts a test issuer and a verifier for it; edit may adjust the config.
func setup(t *testing.T, edit func(*external.Config)) *env {
	t.Helper()
	e := &env{idp: oidctest.New(t), clk: &clock{}}
	users := map[string]external.User{"user-volunteer": volunteer, "user-admin": admin, "user-homeless": homeless}
	cfg := external.Config{
		Issuer:   e.idp.URL,
		Audience: resource,
		RootCAs:  e.idp.CertPool(),
		Now:      e.clk.now,
		Lookup: func(_ context.Context, iss, sub string) (external.User, error) {
			e.mu.Lock()
			e.lookup = append(e.lookup, iss+" "+sub)
			e.mu.Unlock()
			if sub == "db-down" {
				return external.User{}, errors.New("connection refused")
			}
			u, ok := users[sub]
			if !ok {
				return external.User{}, external.ErrUnknownSubject
			}
			return u, nil
		},
	}
	if edit != nil {
		edit(&cfg)
	}
	v, err := external.NewVerifier(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.v = v
	return e
}

func (e *env) claims(sub string) map[string]any {
	c := e.idp.Claims(sub, resource)
	c["scope"] = "openid roster:read children:read guardians:read"
	return c
}

func (e *env) verify(t *testing.T, tok string) (principal.Principal, error) {
	t.Helper()
	return e.v.Verify(context.Background(), tok)
}

// wantDenied: a valid token of an account that may not use the server (403, issue 25).
func wantDenied(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, authn.ErrAccessDenied) || errors.Is(err, authn.ErrInvalidToken) {
		t.Errorf("%s: err = %v, want ErrAccessDenied", what, err)
	}
}

func wantInvalid(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, authn.ErrInvalidToken) {
		t.Errorf("%s: err = %v, want ErrInvalidToken", what, err)
	}
}

func TestVerifyValid(t *testing.T) {
	e := setup(t, nil)
	p, err := e.verify(t, e.idp.Sign(t, e.claims("user-volunteer"), oidctest.SignOpts{}))
	if err != nil {
		t.Fatal(err)
	}
	want := principal.Principal{
		UserID: volunteer.ID, ChurchID: church, Role: "VOLUNTARIO",
		// children:read, guardians:read and openid are not VOLUNTARIO scopes: the grant is
		// token ∩ role.
		Scopes:   capability.NewScopeSet("roster:read"),
		ClientID: "test-client",
	}
	if diff := cmp.Diff(want, p, cmp.AllowUnexported(capability.ScopeSet{})); diff != "" {
		t.Errorf("principal (-want +got):\n%s", diff)
	}
	if got := e.lookups(); len(got) != 1 || got[0] != e.idp.URL+" user-volunteer" {
		t.Errorf("lookups = %v, want issuer+subject", got)
	}

	// ES256, the trailing-slash audience, an audience array, a plain-JWT typ, no typ.
	c := e.claims("user-admin")
	if _, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{Key: e.idp.DefaultECKey()})); err != nil {
		t.Errorf("ES256: %v", err)
	}
	c["aud"] = resource + "/"
	if _, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{})); err != nil {
		t.Errorf("trailing-slash audience: %v", err)
	}
	c["aud"] = []string{"https://api.example.com", resource}
	if _, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{Typ: "JWT"})); err != nil {
		t.Errorf("audience array, typ JWT: %v", err)
	}
	if _, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{Typ: "-"})); err != nil {
		t.Errorf("no typ: %v", err)
	}
	if e.idp.JWKSHits() != 1 {
		t.Errorf("JWKS fetched %d times, want 1 (cached)", e.idp.JWKSHits())
	}
}

// TestVerifyAudience is checklist A03.
func TestVerifyAudience(t *testing.T) {
	e := setup(t, nil)
	for name, aud := range map[string]any{
		"another MCP server":          "https://other-church.example.org/mcp",
		"the client id (ID token)":    "test-client",
		"prefix, not a path boundary": resource + "-evil",
		"sub-path":                    resource + "/x",
		"other scheme":                "http://mcp.example-church.org/mcp",
		"other port":                  "https://mcp.example-church.org:8443/mcp",
		"other host":                  "https://mcp.example-church.org.evil.example/mcp",
		"upper case":                  strings.ToUpper(resource),
		"array without us":            []string{"https://a.example.com", "test-client"},
		"empty":                       "",
		"empty array":                 []string{},
	} {
		c := e.claims("user-admin")
		c["aud"] = aud
		_, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{}))
		wantInvalid(t, err, name)
	}
	c := e.claims("user-admin")
	delete(c, "aud")
	_, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{}))
	wantInvalid(t, err, "missing aud")
	if n := len(e.lookups()); n != 0 {
		t.Errorf("rejected tokens reached the user lookup %d times", n)
	}
}

// TestVerifyIssuer is checklist A04.
func TestVerifyIssuer(t *testing.T) {
	e := setup(t, nil)
	c := e.claims("user-admin")
	for _, iss := range []string{"https://evil.example.com", e.idp.URL + "/", strings.Replace(e.idp.URL, "https", "http", 1), ""} {
		c["iss"] = iss
		_, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{}))
		wantInvalid(t, err, "iss "+iss)
	}
	// Right iss, but signed by a key not in the JWKS: with a published kid (signature fails)
	// and with its own kid (unknown after a refresh).
	rogue := e.idp.AddKey(t, jose.RS256, false)
	c = e.claims("user-admin")
	published := e.idp.DefaultKey().ID
	_, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{Key: rogue, KeyID: &published}))
	wantInvalid(t, err, "rogue key with a published kid")
	_, err = e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{Key: rogue}))
	if !errors.Is(err, external.ErrKeyNotYetFetched) {
		t.Errorf("rogue key with its own kid within the refresh interval: %v, want retry later (never accepted)", err)
	}
	e.clk.advance(11 * time.Second)
	_, err = e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{Key: rogue}))
	wantInvalid(t, err, "rogue key with its own kid, after a refresh")
	// A genuine token of another issuer (another tenant of the same software).
	other := oidctest.New(t)
	_, err = e.verify(t, other.Sign(t, other.Claims("user-admin", resource), oidctest.SignOpts{}))
	wantInvalid(t, err, "token of another issuer")
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// TestVerifyAlgorithms is checklist A07 and A11.
func TestVerifyAlgorithms(t *testing.T) {
	e := setup(t, nil)
	c := e.claims("user-admin")
	c["note"] = "~~~~~~" // encodes to base64url with '-', so the standard-alphabet case differs
	payload, _ := json.Marshal(c)
	good := e.idp.Sign(t, c, oidctest.SignOpts{})
	parts := strings.Split(good, ".")

	noneHeader := b64(`{"alg":"none","typ":"at+jwt","kid":"` + e.idp.DefaultKey().ID + `"}`)
	wantInvalidTok := map[string]string{
		"alg none, empty signature": noneHeader + "." + b64(string(payload)) + ".",
		"alg none, with signature":  noneHeader + "." + b64(string(payload)) + "." + parts[2],
		"alg None":                  b64(`{"alg":"None"}`) + "." + b64(string(payload)) + ".",
		"bit flipped in payload":    parts[0] + "." + b64(strings.Replace(string(payload), "ADMIN", "ADMIM", 1)+" ") + "." + parts[2],
		"scope changed":             parts[0] + "." + b64(strings.Replace(string(payload), "openid", "openid children:write", 1)) + "." + parts[2],
		"padded base64":             parts[0] + "." + parts[1] + "=." + parts[2],
		"standard base64 alphabet":  parts[0] + "." + strings.NewReplacer("-", "+", "_", "/").Replace(parts[1]) + "." + parts[2],
		"truncated signature":       parts[0] + "." + parts[1] + "." + parts[2][:20],
		"two segments":              parts[0] + "." + parts[1],
		"JWS JSON serialization":    `{"payload":"` + parts[1] + `","signatures":[{"protected":"` + parts[0] + `","signature":"` + parts[2] + `"}]}`,
		"garbage":                   "not-a-token",
		"empty":                     "",
		"oversized":                 strings.Repeat("a", 20<<10),
	}
	if strings.NewReplacer("-", "+", "_", "/").Replace(parts[1]) == parts[1] {
		t.Fatal("standard-alphabet case is identical to the token")
	}
	for name, tok := range wantInvalidTok {
		_, err := e.verify(t, tok)
		wantInvalid(t, err, name)
	}

	// HS256 signed with the provider's RSA public key (PEM and DER) as the HMAC secret.
	pub := e.idp.DefaultKey().Private.Public()
	der, _ := x509.MarshalPKIXPublicKey(pub)
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	for name, secret := range map[string][]byte{"PEM": pemBytes, "DER": der} {
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: jose.JSONWebKey{Key: secret, KeyID: e.idp.DefaultKey().ID}},
			(&jose.SignerOptions{}).WithType("at+jwt"))
		if err != nil {
			t.Fatal(err)
		}
		jws, _ := signer.Sign(payload)
		tok, _ := jws.CompactSerialize()
		_, err = e.verify(t, tok)
		wantInvalid(t, err, "HS256 with the public key as secret ("+name+")")
	}

	// An algorithm outside the allowlist, even with a genuine key of the provider.
	es := setup(t, func(c *external.Config) { c.Algorithms = []jose.SignatureAlgorithm{jose.RS256} })
	_, err := es.verify(t, es.idp.Sign(t, es.claims("user-admin"), oidctest.SignOpts{Key: es.idp.DefaultECKey()}))
	wantInvalid(t, err, "ES256 not in the allowlist")

	// An unknown critical header.
	_, err = e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{Headers: map[string]any{"crit": []string{"urn:example:unknown"}, "urn:example:unknown": true}}))
	wantInvalid(t, err, "unknown crit header")

	// The allowlist is configurable and only to asymmetric algorithms.
	e2 := setup(t, func(c *external.Config) { c.Algorithms = []jose.SignatureAlgorithm{jose.PS256} })
	e2.idp.Publish(e2.idp.AddKey(t, jose.PS256, true), true)
	if _, err := e2.verify(t, e2.idp.Sign(t, e2.claims("user-admin"), oidctest.SignOpts{Key: e2.idp.DefaultKey()})); err == nil {
		t.Error("RS256 accepted with Algorithms = [PS256]")
	}
}

// TestVerifyKeySelection is checklist A08: keys come only from the provider's JWKS.
func TestVerifyKeySelection(t *testing.T) {
	e := setup(t, nil)
	c := e.claims("user-admin")
	attacker := e.idp.AddKey(t, jose.RS256, false)
	jwk := attacker.PublicJWK()
	for name, h := range map[string]map[string]any{
		"embedded jwk": {"jwk": jwk},
		"jku":          {"jku": e.idp.URL + "/canary-jwks"},
		"x5u":          {"x5u": e.idp.URL + "/canary-jwks"},
	} {
		_, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{Key: attacker, Headers: h}))
		wantInvalid(t, err, name)
	}
	for _, kid := range []string{"../../dev/null", "' OR 1=1 --", "\x00"} {
		e.clk.advance(11 * time.Second) // each looked for by a refresh, then refused
		_, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{Key: attacker, KeyID: &kid}))
		wantInvalid(t, err, "kid "+kid)
	}
	if e.idp.CanaryHits() != 0 {
		t.Error("a jku/x5u URL was fetched")
	}
	// No kid at all: the published key that fits the algorithm is used.
	empty := ""
	if _, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{KeyID: &empty})); err != nil {
		t.Errorf("token without kid: %v", err)
	}
}

// TestVerifyTime is checklist A05/A06 (30 s default skew).
func TestVerifyTime(t *testing.T) {
	e := setup(t, nil)
	now := time.Now()
	cases := []struct {
		name string
		edit func(map[string]any)
		ok   bool
	}{
		{"expired", func(c map[string]any) { c["exp"] = now.Add(-time.Minute).Unix() }, false},
		{"expired within skew", func(c map[string]any) { c["exp"] = now.Add(-10 * time.Second).Unix() }, true},
		{"no exp", func(c map[string]any) { delete(c, "exp") }, false},
		{"nbf in the future", func(c map[string]any) { c["nbf"] = now.Add(time.Minute).Unix() }, false},
		{"nbf within skew", func(c map[string]any) { c["nbf"] = now.Add(10 * time.Second).Unix() }, true},
		{"iat in the future", func(c map[string]any) { c["iat"] = now.Add(time.Hour).Unix() }, false},
		{"exp not a number", func(c map[string]any) { c["exp"] = "tomorrow" }, false},
	}
	for _, tc := range cases {
		c := e.claims("user-admin")
		tc.edit(c)
		_, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{}))
		if tc.ok && err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if !tc.ok {
			wantInvalid(t, err, tc.name)
		}
	}
}

// TestVerifyTokenType is checklist A09.
func TestVerifyTokenType(t *testing.T) {
	e := setup(t, nil)
	c := e.claims("user-admin")
	for _, typ := range []string{"logout+jwt", "dpop+jwt", "secevent+jwt", "JOSE"} {
		_, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{Typ: typ}))
		wantInvalid(t, err, "typ "+typ)
	}
	strict := setup(t, func(c *external.Config) {
		c.RequireAccessTokenType = true
		c.RequiredClaims = map[string]string{"token_use": "access"}
	})
	c = strict.claims("user-admin")
	c["token_use"] = "access"
	for _, typ := range []string{"JWT", "-"} {
		_, err := strict.verify(t, strict.idp.Sign(t, c, oidctest.SignOpts{Typ: typ}))
		wantInvalid(t, err, "required at+jwt, typ "+typ)
	}
	for _, typ := range []string{"at+jwt", "application/at+jwt", "AT+JWT"} {
		if _, err := strict.verify(t, strict.idp.Sign(t, c, oidctest.SignOpts{Typ: typ})); err != nil {
			t.Errorf("typ %s: %v", typ, err)
		}
	}
	c["token_use"] = "id"
	_, err := strict.verify(t, strict.idp.Sign(t, c, oidctest.SignOpts{}))
	wantInvalid(t, err, "token_use id")
	delete(c, "token_use")
	_, err = strict.verify(t, strict.idp.Sign(t, c, oidctest.SignOpts{}))
	wantInvalid(t, err, "token_use missing")
}

// TestVerifyUnknownKid: an unknown kid refreshes the JWKS once, then is rejected; more
// unknown kids within RefreshInterval cause no more fetches; a key rotated in is picked up
// after the interval.
func TestVerifyUnknownKid(t *testing.T) {
	e := setup(t, func(c *external.Config) { c.RefreshInterval = 30 * time.Second })
	c := e.claims("user-admin")
	if _, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{})); err != nil {
		t.Fatal(err)
	}
	if e.idp.JWKSHits() != 1 {
		t.Fatalf("JWKS hits = %d", e.idp.JWKSHits())
	}
	e.clk.advance(31 * time.Second)
	rotated := e.idp.AddKey(t, jose.RS256, false)
	_, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{Key: rotated}))
	wantInvalid(t, err, "unpublished kid")
	if e.idp.JWKSHits() != 2 {
		t.Errorf("JWKS hits = %d, want 2 (one refresh for the unknown kid)", e.idp.JWKSHits())
	}
	// A flood of made-up kids, concurrently: no more fetches within the interval.
	var wg sync.WaitGroup
	for i := range 50 {
		kid := "made-up-" + string(rune('a'+i%26))
		wg.Go(func() {
			_, err := e.v.Verify(context.Background(), e.idp.Sign(t, c, oidctest.SignOpts{Key: rotated, KeyID: &kid}))
			// never looked for by a refresh: retry later (503), never accepted
			if !errors.Is(err, external.ErrKeyNotYetFetched) {
				t.Errorf("made-up kid: %v", err)
			}
		})
	}
	wg.Wait()
	e.idp.Publish(rotated, true)
	_, err = e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{Key: rotated}))
	wantInvalid(t, err, "rotated key within the interval, already looked for in vain")
	if e.idp.JWKSHits() != 2 {
		t.Errorf("JWKS hits = %d, want 2 (rate-limited)", e.idp.JWKSHits())
	}
	e.clk.advance(31 * time.Second)
	if _, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{Key: rotated})); err != nil {
		t.Errorf("rotated key after the interval: %v", err)
	}
	if e.idp.JWKSHits() != 3 {
		t.Errorf("JWKS hits = %d, want 3", e.idp.JWKSHits())
	}
}

// TestVerifyJWKSFailures is checklist A16: cached keys keep working while the provider is
// down; with no usable key the error is not ErrInvalidToken (503, fail closed); fetches are
// bounded in time and size and do not follow redirects.
func TestVerifyJWKSFailures(t *testing.T) {
	t.Run("down after caching", func(t *testing.T) {
		e := setup(t, func(c *external.Config) { c.KeysMaxAge = time.Minute })
		tok := e.idp.Sign(t, e.claims("user-admin"), oidctest.SignOpts{})
		if _, err := e.verify(t, tok); err != nil {
			t.Fatal(err)
		}
		e.idp.SetJWKSMode(oidctest.JWKSDown)
		e.clk.advance(2 * time.Minute) // the cached set is stale: a refresh is attempted and fails
		if _, err := e.verify(t, tok); err != nil {
			t.Errorf("cached key stopped working while the provider is down: %v", err)
		}
		if e.idp.JWKSHits() != 2 {
			t.Errorf("JWKS hits = %d, want 2", e.idp.JWKSHits())
		}
		e.clk.advance(time.Minute)
		other := e.idp.AddKey(t, jose.RS256, true)
		_, err := e.verify(t, e.idp.Sign(t, e.claims("user-admin"), oidctest.SignOpts{Key: other}))
		if !errors.Is(err, external.ErrKeysUnavailable) || errors.Is(err, authn.ErrInvalidToken) {
			t.Errorf("unknown kid while the provider is down: %v, want ErrKeysUnavailable", err)
		}
	})
	modes := map[string]struct {
		mode oidctest.JWKSMode
		want string
	}{
		"down":      {oidctest.JWKSDown, "status 503"},
		"oversized": {oidctest.JWKSOversize, "larger than"},
		"redirect":  {oidctest.JWKSRedirect, "redirect (status 302) not followed"},
		"slow":      {oidctest.JWKSSlow, "timed out"},
		"empty":     {oidctest.JWKSEmpty, "no usable key"},
		"garbage":   {oidctest.JWKSGarbage, "malformed key set"},
	}
	for name, m := range modes {
		t.Run(name, func(t *testing.T) {
			e := setup(t, func(c *external.Config) { c.FetchTimeout = 300 * time.Millisecond })
			e.idp.SetJWKSMode(m.mode)
			start := time.Now()
			_, err := e.verify(t, e.idp.Sign(t, e.claims("user-admin"), oidctest.SignOpts{}))
			if !errors.Is(err, external.ErrKeysUnavailable) || errors.Is(err, authn.ErrInvalidToken) {
				t.Fatalf("err = %v, want ErrKeysUnavailable (not invalid token)", err)
			}
			if !strings.Contains(err.Error(), m.want) {
				t.Errorf("err = %v, want it to say %q", err, m.want)
			}
			if strings.Contains(err.Error(), "upstream unavailable") || strings.Contains(err.Error(), "AAAA") {
				t.Errorf("error echoes the response body: %v", err)
			}
			if el := time.Since(start); el > 3*time.Second {
				t.Errorf("took %v", el)
			}
			if e.idp.CanaryHits() != 0 {
				t.Error("redirect followed")
			}
			// Within the refresh interval the failure is not retried.
			e.verify(t, e.idp.Sign(t, e.claims("user-admin"), oidctest.SignOpts{}))
			if e.idp.JWKSHits() != 1 {
				t.Errorf("JWKS hits = %d, want 1", e.idp.JWKSHits())
			}
		})
	}
}

func TestNewVerifierRefuses(t *testing.T) {
	idp := oidctest.New(t)
	base := func() external.Config {
		return external.Config{
			Issuer: idp.URL, Audience: resource, RootCAs: idp.CertPool(),
			Lookup: func(context.Context, string, string) (external.User, error) { return external.User{}, nil },
		}
	}
	cases := map[string]func(*external.Config){
		"no audience":      func(c *external.Config) { c.Audience = "" },
		"spaced audience":  func(c *external.Config) { c.Audience = "mcp server" },
		"http issuer":      func(c *external.Config) { c.Issuer = strings.Replace(idp.URL, "https", "http", 1) },
		"no lookup":        func(c *external.Config) { c.Lookup = nil },
		"HS256":            func(c *external.Config) { c.Algorithms = []jose.SignatureAlgorithm{jose.HS256} },
		"none":             func(c *external.Config) { c.Algorithms = []jose.SignatureAlgorithm{"none"} },
		"skew too large":   func(c *external.Config) { c.Skew = time.Hour },
		"role without map": func(c *external.Config) { c.Claims.Role = "groups" },
		"map to unknown role": func(c *external.Config) {
			c.Claims.Role, c.Claims.Roles = "groups", map[string]string{"admins": "SUPERUSER"}
		},
		"untrusted TLS":    func(c *external.Config) { c.RootCAs = nil },
		"issuer with path": func(c *external.Config) { c.Issuer = idp.URL + "/tenant" }, // discovery 404
	}
	for name, edit := range cases {
		cfg := base()
		edit(&cfg)
		if _, err := external.NewVerifier(context.Background(), cfg); err == nil {
			t.Errorf("%s: NewVerifier succeeded", name)
		}
	}
	idp.SetDiscoveryIssuer("https://evil.example.com")
	if _, err := external.NewVerifier(context.Background(), base()); err == nil || !strings.Contains(err.Error(), "different issuer") {
		t.Errorf("discovery naming another issuer: %v", err)
	}
	idp.SetDiscoveryIssuer("")
	cfg := base()
	cfg.Audience = "http://127.0.0.1:8080/mcp" // a local run
	if _, err := external.NewVerifier(context.Background(), cfg); err != nil {
		t.Errorf("loopback http audience: %v", err)
	}
}

// TestVerifyClaimMapping is checklist A15: identity is iss+sub, never e-mail; unknown
// subjects get nothing; IdP roles count only when mapped.
func TestVerifyClaimMapping(t *testing.T) {
	e := setup(t, nil)
	c := e.claims("someone-else")
	c["email"] = "admin@igreja.example" // the ADMIN's address; identity is the subject
	_, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{}))
	wantDenied(t, err, "unknown subject with an admin's e-mail")
	c = e.claims("")
	_, err = e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{}))
	wantInvalid(t, err, "empty subject")
	_, err = e.verify(t, e.idp.Sign(t, e.claims("db-down"), oidctest.SignOpts{}))
	if err == nil || errors.Is(err, authn.ErrInvalidToken) {
		t.Errorf("lookup failure: %v, want an infrastructure error", err)
	}

	// Without a mapping, the IdP's role claim is ignored.
	c = e.claims("user-volunteer")
	c["role"], c["scope"] = "ADMIN", "children:write guardians:read roster:read"
	p, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{}))
	if err != nil || p.Role != "VOLUNTARIO" || p.Scopes.String() != "roster:read" {
		t.Errorf("unmapped role claim: %+v, %v", p, err)
	}
	// A user without a church and no church mapping is refused.
	_, err = e.verify(t, e.idp.Sign(t, e.claims("user-homeless"), oidctest.SignOpts{}))
	wantInvalid(t, err, "user without a church")

	m := setup(t, func(c *external.Config) {
		c.Claims = external.ClaimMapping{
			Scope: "scp", Church: "https://neemias.example/church", Role: "realm_access.roles",
			Roles:    map[string]string{"kids-admin": "ADMIN", "kids-volunteer": "VOLUNTARIO"},
			ClientID: "azp",
		}
	})
	base := func(sub string) map[string]any {
		c := m.idp.Claims(sub, resource)
		c["scp"] = []string{"roster:read", "checkins:write", "children:write"}
		c["azp"] = "claude-desktop"
		return c
	}
	c = base("user-volunteer")
	c["realm_access"] = map[string]any{"roles": []string{"offline_access", "kids-admin"}}
	c["https://neemias.example/church"] = church.String()
	p, err = m.verify(t, m.idp.Sign(t, c, oidctest.SignOpts{}))
	if err != nil {
		t.Fatal(err)
	}
	if p.Role != "ADMIN" || p.Scopes.String() != capability.NewScopeSet("roster:read", "checkins:write", "children:write").String() || p.ClientID != "claude-desktop" || p.ChurchID != church {
		t.Errorf("mapped: %+v", p)
	}
	c["realm_access"] = map[string]any{"roles": []string{"kids-admin", "kids-volunteer"}}
	_, err = m.verify(t, m.idp.Sign(t, c, oidctest.SignOpts{}))
	wantDenied(t, err, "two mapped roles")
	c["realm_access"] = map[string]any{"roles": "kids-volunteer"}
	if p, err = m.verify(t, m.idp.Sign(t, c, oidctest.SignOpts{})); err != nil || p.Role != "VOLUNTARIO" || p.Scopes.String() != capability.NewScopeSet("roster:read", "checkins:write").String() {
		t.Errorf("string role claim: %+v, %v", p, err)
	}
	c["realm_access"] = map[string]any{"roles": 7}
	_, err = m.verify(t, m.idp.Sign(t, c, oidctest.SignOpts{}))
	wantInvalid(t, err, "role claim of the wrong type")
	delete(c, "realm_access") // no mapped role: the local user's role applies
	if p, err = m.verify(t, m.idp.Sign(t, c, oidctest.SignOpts{})); err != nil || p.Role != "VOLUNTARIO" {
		t.Errorf("no role claim: %+v, %v", p, err)
	}
	c["https://neemias.example/church"] = otherChurch.String()
	_, err = m.verify(t, m.idp.Sign(t, c, oidctest.SignOpts{}))
	wantInvalid(t, err, "church claim disagreeing with the user")
	c["https://neemias.example/church"] = "not-a-uuid"
	_, err = m.verify(t, m.idp.Sign(t, c, oidctest.SignOpts{}))
	wantInvalid(t, err, "malformed church claim")
	// A user with no church takes the mapped claim.
	c = base("user-homeless")
	c["https://neemias.example/church"] = otherChurch.String()
	if p, err = m.verify(t, m.idp.Sign(t, c, oidctest.SignOpts{})); err != nil || p.ChurchID != otherChurch || p.Role != "CADASTRO" {
		t.Errorf("church from claim: %+v, %v", p, err)
	}
	c["scp"] = "roster:read children:write"
	if p, err = m.verify(t, m.idp.Sign(t, c, oidctest.SignOpts{})); err != nil || p.Scopes.String() != capability.NewScopeSet("roster:read", "children:write").String() {
		t.Errorf("scp as a string: %+v, %v", p, err)
	}
	c["scp"] = map[string]any{"x": 1}
	_, err = m.verify(t, m.idp.Sign(t, c, oidctest.SignOpts{}))
	wantInvalid(t, err, "scp of the wrong type")
}

func BenchmarkVerify(b *testing.B) {
	idp := oidctest.New(b)
	v, err := external.NewVerifier(context.Background(), external.Config{
		Issuer: idp.URL, Audience: resource, RootCAs: idp.CertPool(),
		Lookup: func(context.Context, string, string) (external.User, error) { return admin, nil },
	})
	if err != nil {
		b.Fatal(err)
	}
	c := idp.Claims("user-admin", resource)
	c["scope"] = "roster:read children:read"
	for name, k := range map[string]*oidctest.Key{"RS256": idp.DefaultKey(), "ES256": idp.DefaultECKey()} {
		tok := idp.Sign(b, c, oidctest.SignOpts{Key: k})
		if _, err := v.Verify(context.Background(), tok); err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := v.Verify(context.Background(), tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
