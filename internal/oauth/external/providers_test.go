package external_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/neemias/neemias-mcp/internal/authn"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/oauth/external"
	"github.com/neemias/neemias-mcp/internal/oauth/external/oidctest"
)

// The providers churches run (issue 25): audiences as they write them, Dex's http dev issuer,
// refusals that explain themselves, every asymmetric algorithm, keys rotated in and dropped,
// and scopes for tokens that carry none.

// TestAudienceAsProvidersWriteIt: a Dex client id, an Entra GUID or api:// Application ID URI
// is accepted as --oauth-audience and matched exactly; URLs keep their trailing-slash twin.
func TestAudienceAsProvidersWriteIt(t *testing.T) {
	for _, aud := range []string{"neemias-mcp", "7f3c1a52-9d4e-4a53-9f3e-2f4f5b8c9d01", "api://7f3c1a52-9d4e-4a53-9f3e-2f4f5b8c9d01", "http://mcp.example-church.org/mcp"} {
		e := setup(t, func(c *external.Config) { c.Audience = aud })
		c := e.claims("user-admin")
		c["aud"] = aud
		if _, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{})); err != nil {
			t.Errorf("audience %q: %v", aud, err)
		}
		c["aud"] = []string{"other", aud}
		if _, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{})); err != nil {
			t.Errorf("audience %q among others: %v", aud, err)
		}
		for _, near := range []string{strings.ToUpper(aud), aud + "x", " " + aud, resource} {
			c["aud"] = near
			_, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{}))
			wantInvalid(t, err, "audience "+near+" for configured "+aud)
		}
	}
	idp := oidctest.New(t)
	for _, bad := range []string{"", "two words", "tab\there", strings.Repeat("a", 2000)} {
		_, err := external.NewVerifier(context.Background(), external.Config{Issuer: idp.URL, Audience: bad, RootCAs: idp.CertPool(),
			Lookup: func(context.Context, string, string) (external.User, error) { return external.User{}, nil }})
		if err == nil {
			t.Errorf("audience %q accepted", bad)
		}
	}
}

// TestLoopbackHTTPIssuer: an http issuer is allowed on loopback only (Dex's dev issuer
// http://127.0.0.1:5556/dex); elsewhere https is required.
func TestLoopbackHTTPIssuer(t *testing.T) {
	idp := oidctest.NewPlain(t)
	lookup := func(context.Context, string, string) (external.User, error) { return admin, nil }
	v, err := external.NewVerifier(context.Background(), external.Config{Issuer: idp.URL, Audience: resource, Lookup: lookup})
	if err != nil {
		t.Fatalf("http issuer on 127.0.0.1: %v", err)
	}
	c := idp.Claims("user-admin", resource)
	c["scope"] = "roster:read"
	if _, err := v.Verify(context.Background(), idp.Sign(t, c, oidctest.SignOpts{})); err != nil {
		t.Errorf("token of the loopback http issuer: %v", err)
	}
	for _, iss := range []string{"http://idp.example-church.org", "http://10.0.0.1:5556/dex", "http://user:pw@127.0.0.1:1/dex", "ftp://127.0.0.1/"} {
		if _, err := external.NewVerifier(context.Background(), external.Config{Issuer: iss, Audience: resource, Lookup: lookup}); err == nil {
			t.Errorf("issuer %s accepted", iss)
		}
	}
}

// TestRefusalsExplainThemselves: a valid token of an unlinked subject, of a disabled user, or
// whose groups map to two roles is denied (403 with a description), not called invalid (401).
func TestRefusalsExplainThemselves(t *testing.T) {
	e := setup(t, func(c *external.Config) {
		c.Claims.Role, c.Claims.Roles = "groups", map[string]string{"admins": "ADMIN", "volunteers": "VOLUNTARIO"}
		inner := c.Lookup
		c.Lookup = func(ctx context.Context, iss, sub string) (external.User, error) {
			if sub == "user-disabled" {
				return external.User{ID: volunteer.ID}, external.ErrDisabledUser
			}
			return inner(ctx, iss, sub)
		}
	})
	for sub, want := range map[string]string{"stranger": "not linked", "user-disabled": "disabled"} {
		_, err := e.verify(t, e.idp.Sign(t, e.claims(sub), oidctest.SignOpts{}))
		var d *authn.DeniedError
		if !errors.As(err, &d) || !errors.Is(err, authn.ErrAccessDenied) || errors.Is(err, authn.ErrInvalidToken) || !strings.Contains(d.Description, want) {
			t.Errorf("%s: %v, want a denial saying %q", sub, err, want)
		}
	}
	c := e.claims("user-volunteer")
	c["groups"] = []string{"admins", "volunteers"}
	_, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{}))
	var d *authn.DeniedError
	if !errors.As(err, &d) || !strings.Contains(d.Description, "more than one Neemias role") {
		t.Errorf("two roles: %v, want a denial saying so", err)
	}
	// An invalid token is still invalid, whoever it names.
	c = e.claims("stranger")
	c["exp"] = time.Now().Add(-time.Hour).Unix()
	_, err = e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{}))
	wantInvalid(t, err, "expired token of a stranger")
}

// TestEveryAsymmetricAlgorithm: RS/PS/ES/EdDSA are accepted by default, as the docs say; the
// allowed set can be narrowed.
func TestEveryAsymmetricAlgorithm(t *testing.T) {
	e := setup(t, func(c *external.Config) { c.RefreshInterval = time.Second })
	for _, alg := range []jose.SignatureAlgorithm{jose.RS384, jose.PS256, jose.PS512, jose.ES384, jose.ES512, jose.EdDSA} {
		k := e.idp.AddKey(t, alg, true)
		e.clk.advance(2 * time.Second) // past the refresh interval: the new key is fetched
		if _, err := e.verify(t, e.idp.Sign(t, e.claims("user-admin"), oidctest.SignOpts{Key: k})); err != nil {
			t.Errorf("%s: %v", alg, err)
		}
	}
	narrow := setup(t, func(c *external.Config) { c.Algorithms = []jose.SignatureAlgorithm{jose.EdDSA} })
	ed := narrow.idp.AddKey(t, jose.EdDSA, true)
	if _, err := narrow.verify(t, narrow.idp.Sign(t, narrow.claims("user-admin"), oidctest.SignOpts{Key: ed})); err != nil {
		t.Errorf("EdDSA allowed alone: %v", err)
	}
	_, err := narrow.verify(t, narrow.idp.Sign(t, narrow.claims("user-admin"), oidctest.SignOpts{}))
	wantInvalid(t, err, "RS256 outside the allowed set")
}

// TestRotatedKeyIsRetriedNotRefused: a token signed with a key the cached set lacks triggers
// one refresh; when a refresh ran moments ago (rate limit), it gets "retry after" (503), not
// 401, so the client does not log in again; a kid a refresh already looked for is refused;
// the key is accepted once the next refresh may run.
func TestRotatedKeyIsRetriedNotRefused(t *testing.T) {
	e := setup(t, func(c *external.Config) { c.RefreshInterval = 30 * time.Second })
	c := e.claims("user-admin")
	if _, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{})); err != nil {
		t.Fatal(err)
	}
	e.clk.advance(10 * time.Second)
	rotated := e.idp.AddKey(t, jose.RS256, true)
	_, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{Key: rotated}))
	var ra interface{ RetryAfter() time.Duration }
	if !errors.Is(err, external.ErrKeyNotYetFetched) || errors.Is(err, authn.ErrInvalidToken) || !errors.As(err, &ra) ||
		ra.RetryAfter() < 19*time.Second || ra.RetryAfter() > 20*time.Second {
		t.Fatalf("new kid within the refresh interval: %v, want ErrKeyNotYetFetched retrying after 20 s", err)
	}
	if e.idp.JWKSHits() != 1 {
		t.Errorf("JWKS hits = %d, want 1 (rate-limited)", e.idp.JWKSHits())
	}
	e.clk.advance(21 * time.Second)
	if _, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{Key: rotated})); err != nil {
		t.Errorf("rotated key at the next refresh: %v", err)
	}
	// A made-up kid: one refresh looks for it, then it is refused at once, without fetching.
	e.clk.advance(31 * time.Second)
	kid := "made-up"
	for i := range 3 {
		_, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{Key: rotated, KeyID: &kid}))
		wantInvalid(t, err, "made-up kid, try "+string(rune('1'+i)))
	}
	if e.idp.JWKSHits() != 3 {
		t.Errorf("JWKS hits = %d, want 3", e.idp.JWKSHits())
	}
}

// TestDroppedKeyStopsAtNextRefresh: a key the provider removed from its set is refused once
// the set is fetched again: at the next refresh on an unknown kid, or when the cached set is
// older than KeysMaxAge (default 5 minutes, was an hour).
func TestDroppedKeyStopsAtNextRefresh(t *testing.T) {
	e := setup(t, func(c *external.Config) { c.RefreshInterval = 30 * time.Second })
	old := e.idp.DefaultKey()
	tok := e.idp.Sign(t, e.claims("user-admin"), oidctest.SignOpts{})
	if _, err := e.verify(t, tok); err != nil {
		t.Fatal(err)
	}
	e.idp.Publish(old, false)
	if _, err := e.verify(t, tok); err != nil {
		t.Errorf("dropped key before any refresh: %v (cached)", err)
	}
	e.clk.advance(31 * time.Second)
	fresh := e.idp.AddKey(t, jose.RS256, true)
	if _, err := e.verify(t, e.idp.Sign(t, e.claims("user-admin"), oidctest.SignOpts{Key: fresh})); err != nil {
		t.Fatal(err)
	}
	_, err := e.verify(t, tok)
	wantInvalid(t, err, "dropped key after a refresh")

	// By age alone: no unknown kid comes, the set is refetched after 5 minutes.
	e2 := setup(t, nil)
	tok2 := e2.idp.Sign(t, e2.claims("user-admin"), oidctest.SignOpts{Key: e2.idp.DefaultECKey()})
	if _, err := e2.verify(t, tok2); err != nil {
		t.Fatal(err)
	}
	e2.idp.Publish(e2.idp.DefaultECKey(), false)
	e2.clk.advance(4 * time.Minute)
	if _, err := e2.verify(t, tok2); err != nil {
		t.Errorf("within KeysMaxAge: %v", err)
	}
	e2.clk.advance(2 * time.Minute)
	_, err = e2.verify(t, tok2)
	wantInvalid(t, err, "dropped key after KeysMaxAge")
}

// TestScopesFromRole: off by default, a token without our scopes gets none; with
// ScopesFromRole it gets the role's non-sensitive scopes, and sensitive ones only through
// ScopeGrants (narrowed to the role's); a token that names our scopes keeps its own.
func TestScopesFromRole(t *testing.T) {
	noScope := func(e *env, sub string, groups ...string) capability.ScopeSet {
		t.Helper()
		c := e.claims(sub)
		c["scope"] = "openid profile groups"
		if groups != nil {
			c["groups"] = groups
		}
		p, err := e.verify(t, e.idp.Sign(t, c, oidctest.SignOpts{}))
		if err != nil {
			t.Fatal(err)
		}
		return p.Scopes
	}
	off := setup(t, nil)
	if got := noScope(off, "user-admin"); len(got.List()) != 0 {
		t.Errorf("default: %v, want no scope", got.List())
	}
	on := setup(t, func(c *external.Config) {
		c.ScopesFromRole = true
		c.Claims.ScopeGrants = map[string][]string{"secretaria": {"children:read", "guardians:read"}, "saude": {"health:read"}}
	})
	want := []string{"attendance:read", "checkins:read", "checkins:write", "roster:read"}
	if got := noScope(on, "user-admin").List(); !equalSorted(got, want) {
		t.Errorf("ADMIN without groups: %v, want the non-sensitive %v", got, want)
	}
	if got := noScope(on, "user-admin", "secretaria").List(); !equalSorted(got, append(want, "children:read", "guardians:read")) {
		t.Errorf("ADMIN in secretaria: %v", got)
	}
	// VOLUNTARIO's role has no guardians:read: a mapping cannot widen the role.
	if got := noScope(on, "user-volunteer", "secretaria"); got.Has("guardians:read") || !got.Has("roster:read") {
		t.Errorf("VOLUNTARIO in secretaria: %v", got.List())
	}
	c := on.claims("user-admin")
	c["scope"] = "roster:read"
	if p, err := on.verify(t, on.idp.Sign(t, c, oidctest.SignOpts{})); err != nil || !equalSorted(p.Scopes.List(), []string{"roster:read"}) {
		t.Errorf("token with our scopes: %v %v, want its own", p.Scopes.List(), err)
	}
	idp := oidctest.New(t)
	if _, err := external.NewVerifier(context.Background(), external.Config{Issuer: idp.URL, Audience: resource, RootCAs: idp.CertPool(),
		Lookup: func(context.Context, string, string) (external.User, error) { return admin, nil },
		Claims: external.ClaimMapping{ScopeGrants: map[string][]string{"g": {"health:read"}}}}); err == nil {
		t.Error("ScopeGrants without ScopesFromRole accepted")
	}
}

func equalSorted(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	seen := map[string]bool{}
	for _, s := range got {
		seen[s] = true
	}
	for _, s := range want {
		if !seen[s] {
			return false
		}
	}
	return true
}
