package tokens_test

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/internal/authn"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
	"github.com/neemias/neemias-mcp/internal/tokens"
)

const (
	issuer   = "http://127.0.0.1:8080"
	resource = "http://127.0.0.1:8080/mcp"
)

var (
	keyOnce sync.Once
	key     tokens.Key
)

func testKey(t *testing.T) tokens.Key {
	t.Helper()
	keyOnce.Do(func() {
		var err error
		if key, err = tokens.GenerateKey(); err != nil {
			t.Fatal(err)
		}
	})
	return key
}

func verifier(t *testing.T, now time.Time) *tokens.Verifier {
	k := testKey(t)
	return &tokens.Verifier{
		Issuer: issuer, Audiences: []string{resource, resource + "/"},
		Keys: func(_ context.Context, kid string) (*rsa.PublicKey, error) {
			if kid == k.ID {
				return &k.Private.PublicKey, nil
			}
			return nil, nil
		},
		Now: func() time.Time { return now },
	}
}

func caller() principal.Principal {
	return principal.Principal{
		UserID: uuid.MustParse("11111111-1111-4111-8111-111111111111"), ChurchID: uuid.MustParse("22222222-2222-4222-8222-222222222222"),
		Role: "VOLUNTARIO", Scopes: capability.NewScopeSet("roster:read", "checkins:read"), ClientID: "cli",
	}
}

func TestMintAndVerify(t *testing.T) {
	now := time.Date(2026, 6, 7, 9, 0, 0, 0, time.UTC)
	m := tokens.Minter{Issuer: issuer, Audience: resource, Key: testKey(t), Now: func() time.Time { return now }}
	p := caller()
	p.Scopes = capability.NewScopeSet("roster:read", "checkins:read", "guardians:read") // guardians:read is not VOLUNTARIO's
	tok, err := m.Mint(p, 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	got, err := verifier(t, now.Add(time.Minute)).Verify(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	if got.UserID != p.UserID || got.ChurchID != p.ChurchID || got.Role != "VOLUNTARIO" || got.ClientID != "cli" {
		t.Errorf("principal = %+v", got)
	}
	if got.Scopes.String() != "checkins:read roster:read" {
		t.Errorf("scopes = %q: minting must intersect with the role's scopes", got.Scopes)
	}
}

// signRaw signs arbitrary claims with arbitrary headers, for attack cases.
func signRaw(t *testing.T, alg jose.SignatureAlgorithm, k any, kid, typ string, claims any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType(jose.ContentType(typ))
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: k, KeyID: kid}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func claims(now time.Time, mut func(*tokens.Claims)) tokens.Claims {
	c := tokens.Claims{
		Claims: jwt.Claims{Issuer: issuer, Subject: caller().UserID.String(), Audience: jwt.Audience{resource},
			IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(5 * time.Minute))},
		ChurchID: caller().ChurchID.String(), Role: "VOLUNTARIO", Scope: "roster:read",
	}
	if mut != nil {
		mut(&c)
	}
	return c
}

func TestVerifyRejects(t *testing.T) {
	now := time.Date(2026, 6, 7, 9, 0, 0, 0, time.UTC)
	k := testKey(t)
	other, err := tokens.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	pubDER, _ := x509.MarshalPKIXPublicKey(&k.Private.PublicKey)
	good := signRaw(t, jose.RS256, k.Private, k.ID, "at+jwt", claims(now, nil))
	parts := strings.Split(good, ".")
	noneToken := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"at+jwt","kid":"`+k.ID+`"}`)) + "." + parts[1] + "."
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"`+issuer+`","sub":"`+caller().UserID.String()+`","aud":["`+resource+`"],"exp":9999999999,"church_id":"`+caller().ChurchID.String()+`","role":"ADMIN","scope":"children:read"}`)) + "." + parts[2]

	tests := []struct {
		name, token string
	}{
		{"wrong audience", signRaw(t, jose.RS256, k.Private, k.ID, "at+jwt", claims(now, func(c *tokens.Claims) { c.Audience = jwt.Audience{"https://other.example/mcp"} }))},
		{"no audience", signRaw(t, jose.RS256, k.Private, k.ID, "at+jwt", claims(now, func(c *tokens.Claims) { c.Audience = nil }))},
		{"foreign issuer", signRaw(t, jose.RS256, k.Private, k.ID, "at+jwt", claims(now, func(c *tokens.Claims) { c.Issuer = "https://evil.example" }))},
		{"expired", signRaw(t, jose.RS256, k.Private, k.ID, "at+jwt", claims(now.Add(-time.Hour), nil))},
		{"not yet valid", signRaw(t, jose.RS256, k.Private, k.ID, "at+jwt", claims(now.Add(time.Hour), nil))},
		{"no expiry", signRaw(t, jose.RS256, k.Private, k.ID, "at+jwt", claims(now, func(c *tokens.Claims) { c.Expiry = nil }))},
		{"ID token used as access token", signRaw(t, jose.RS256, k.Private, k.ID, "JWT", claims(now, nil))},
		{"signed by an unknown key", signRaw(t, jose.RS256, other.Private, other.ID, "at+jwt", claims(now, nil))},
		{"right kid, wrong key", signRaw(t, jose.RS256, other.Private, k.ID, "at+jwt", claims(now, nil))},
		{"alg none", noneToken},
		{"HS256 with the public key as secret (algorithm confusion)", signRaw(t, jose.HS256, pubDER, k.ID, "at+jwt", claims(now, nil))},
		{"tampered payload", tampered},
		{"scope beyond the role", signRaw(t, jose.RS256, k.Private, k.ID, "at+jwt", claims(now, func(c *tokens.Claims) { c.Scope = "roster:read children:write" }))},
		{"unknown role", signRaw(t, jose.RS256, k.Private, k.ID, "at+jwt", claims(now, func(c *tokens.Claims) { c.Role = "ROOT" }))},
		{"subject not a user id", signRaw(t, jose.RS256, k.Private, k.ID, "at+jwt", claims(now, func(c *tokens.Claims) { c.Subject = "admin" }))},
		{"garbage", "not.a.jwt"},
		{"empty", ""},
	}
	v := verifier(t, now)
	if _, err := v.Verify(context.Background(), good); err != nil {
		t.Fatalf("the control token must verify: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := v.Verify(context.Background(), tt.token)
			if !errors.Is(err, authn.ErrInvalidToken) {
				t.Fatalf("err = %v, want ErrInvalidToken", err)
			}
		})
	}
}

func TestVerifyAllowsClockSkew(t *testing.T) {
	now := time.Date(2026, 6, 7, 9, 0, 0, 0, time.UTC)
	k := testKey(t)
	tok := signRaw(t, jose.RS256, k.Private, k.ID, "at+jwt", claims(now, nil))
	if _, err := verifier(t, now.Add(5*time.Minute+20*time.Second)).Verify(context.Background(), tok); err != nil {
		t.Errorf("20 s past expiry is within the skew: %v", err)
	}
	if _, err := verifier(t, now.Add(-20*time.Second)).Verify(context.Background(), tok); err != nil {
		t.Errorf("20 s before nbf is within the skew: %v", err)
	}
}

func TestKeyStoreSharedAcrossReplicas(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	keys := make([]tokens.Key, 4)
	errs := make([]error, 4)
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keys[i], errs[i] = (&tokens.KeyStore{Pool: st.Pool()}).Active(ctx)
		}()
	}
	wg.Wait()
	for i := range keys {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if keys[i].ID != keys[0].ID {
			t.Fatalf("replicas got different active keys: %s vs %s", keys[i].ID, keys[0].ID)
		}
	}
	ks := &tokens.KeyStore{Pool: st.Pool()}
	m := tokens.Minter{Issuer: issuer, Audience: resource, Key: keys[0]}
	tok, err := m.Mint(caller(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	v := &tokens.Verifier{Issuer: issuer, Audiences: []string{resource}, Keys: ks.Public}
	if _, err := v.Verify(ctx, tok); err != nil {
		t.Fatalf("a token minted with the stored key must verify through the store: %v", err)
	}
	if k, err := ks.Public(ctx, "0000000000000000"); err != nil || k != nil {
		t.Errorf("unknown kid: key %v err %v, want nil nil", k, err)
	}
}

func BenchmarkVerify(b *testing.B) {
	k, err := tokens.GenerateKey()
	if err != nil {
		b.Fatal(err)
	}
	m := tokens.Minter{Issuer: issuer, Audience: resource, Key: k}
	tok, err := m.Mint(caller(), time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	v := &tokens.Verifier{Issuer: issuer, Audiences: []string{resource}, Keys: func(context.Context, string) (*rsa.PublicKey, error) { return &k.Private.PublicKey, nil }}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(context.Background(), tok); err != nil {
			b.Fatal(err)
		}
	}
}

func TestCacheNeverOutlivesTheTokenAndStillRunsCheck(t *testing.T) {
	now := time.Date(2026, 6, 7, 9, 0, 0, 0, time.UTC)
	k := testKey(t)
	m := tokens.Minter{Issuer: issuer, Audience: resource, Key: k, Now: func() time.Time { return now }}
	tok, err := m.Mint(caller(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	v := verifier(t, now)
	v.Cache = &tokens.Cache{}
	checks, revoked := 0, false
	v.Check = func(context.Context, *tokens.Claims) error {
		checks++
		if revoked {
			return fmt.Errorf("%w: grant revoked", authn.ErrInvalidToken)
		}
		return nil
	}
	for range 3 {
		if _, err := v.Verify(context.Background(), tok); err != nil {
			t.Fatal(err)
		}
	}
	if v.Cache.Len() != 1 || checks != 3 {
		t.Fatalf("cache %d entries, %d checks; want 1 and 3 (Check runs on every hit)", v.Cache.Len(), checks)
	}
	revoked = true
	if _, err := v.Verify(context.Background(), tok); !errors.Is(err, authn.ErrInvalidToken) {
		t.Fatalf("a revoked token must fail even when cached: %v", err)
	}
	revoked = false
	// Past expiry (even within the skew) a cached entry is gone and the full check refuses it
	// once the skew is over.
	v.Now = func() time.Time { return now.Add(time.Minute + time.Second) }
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("within the skew the full check still accepts: %v", err)
	}
	v.Now = func() time.Time { return now.Add(2 * time.Minute) }
	if _, err := v.Verify(context.Background(), tok); !errors.Is(err, authn.ErrInvalidToken) {
		t.Fatalf("an expired token must fail: %v", err)
	}
}

func TestCacheIsBounded(t *testing.T) {
	now := time.Date(2026, 6, 7, 9, 0, 0, 0, time.UTC)
	m := tokens.Minter{Issuer: issuer, Audience: resource, Key: testKey(t), Now: func() time.Time { return now }}
	v := verifier(t, now)
	v.Cache = &tokens.Cache{MaxEntries: 20}
	for range 100 {
		tok, err := m.Mint(caller(), time.Minute) // a fresh jti each time: a distinct token
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Verify(context.Background(), tok); err != nil {
			t.Fatal(err)
		}
	}
	if n := v.Cache.Len(); n > 20 {
		t.Fatalf("%d cached tokens, want at most 20", n)
	}
}

func BenchmarkVerifyCached(b *testing.B) {
	k, err := tokens.GenerateKey()
	if err != nil {
		b.Fatal(err)
	}
	m := tokens.Minter{Issuer: issuer, Audience: resource, Key: k}
	tok, err := m.Mint(caller(), time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	v := &tokens.Verifier{Issuer: issuer, Audiences: []string{resource}, Cache: &tokens.Cache{},
		Keys: func(context.Context, string) (*rsa.PublicKey, error) { return &k.Private.PublicKey, nil }}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(context.Background(), tok); err != nil {
			b.Fatal(err)
		}
	}
}
