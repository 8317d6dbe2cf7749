// Package tokens mints and verifies Neemias MCP's access tokens: RFC 9068 JWT access tokens
// (typ "at+jwt", RS256) bound to this resource by `aud`, carrying the caller's subject, church,
// role and granted scopes. The built-in authorization server issues them; the dev-token command
// mints them for scripts; every request to /mcp and /api verifies them. Verification checks
// the signature against our key set, the algorithm (RS256 only: no "none", no HMAC confusion),
// the token type (an ID token is not an access token), issuer, audience, expiry and not-before
// with a small clock-skew allowance, and that the scopes do not exceed the role's.
package tokens

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/authn"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/principal"
)

// TokenType is the JOSE "typ" of access tokens (RFC 9068 §2.1).
const TokenType = "at+jwt"

// DefaultSkew is the clock-skew allowance for exp and nbf.
const DefaultSkew = 30 * time.Second

// Key is an RSA signing key with its key id.
type Key struct {
	ID      string
	Private *rsa.PrivateKey
}

// GenerateKey creates a fresh 2048-bit RSA key with a random key id.
func GenerateKey() (Key, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return Key{}, fmt.Errorf("generating signing key: %w", err)
	}
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return Key{}, fmt.Errorf("generating key id: %w", err)
	}
	return Key{ID: hex.EncodeToString(id[:]), Private: k}, nil
}

// Claims are the access token's claims.
type Claims struct {
	jwt.Claims
	ChurchID string `json:"church_id"`
	Role     string `json:"role"`
	Scope    string `json:"scope"`
	ClientID string `json:"client_id,omitempty"`
	// GrantID names the authorization server's grant (internal/oauth) the token was issued
	// from, so that revoking the grant (code replay, refresh-token reuse) also refuses its
	// access tokens. Dev tokens have none.
	GrantID string `json:"grant_id,omitempty"`
}

// Minter signs access tokens.
type Minter struct {
	Issuer   string
	Audience string
	Key      Key
	Now      func() time.Time
}

// Mint signs a token for p valid for ttl. p.Scopes are intersected with the role's scopes from
// the generated matrix, so a token can never carry more than the role allows.
func (m Minter) Mint(p principal.Principal, ttl time.Duration) (string, error) {
	return m.MintGrant(p, ttl, "")
}

// MintGrant is [Minter.Mint] for a token issued from the authorization server's grant
// grantID (the grant_id claim).
func (m Minter) MintGrant(p principal.Principal, ttl time.Duration, grantID string) (string, error) {
	if _, ok := scopes.RoleScopes(p.Role); !ok {
		return "", fmt.Errorf("minting token: unknown role %q", p.Role)
	}
	granted := scopes.Grant(p.Role, p.Scopes)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: m.Key.Private, KeyID: m.Key.ID}},
		(&jose.SignerOptions{}).WithType(TokenType))
	if err != nil {
		return "", fmt.Errorf("minting token: %w", err)
	}
	now := time.Now()
	if m.Now != nil {
		now = m.Now()
	}
	c := Claims{
		Claims: jwt.Claims{
			Issuer: m.Issuer, Subject: p.UserID.String(), Audience: jwt.Audience{m.Audience},
			IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(ttl)),
			ID: uuid.NewString(),
		},
		ChurchID: p.ChurchID.String(), Role: p.Role, Scope: granted.String(), ClientID: p.ClientID,
		GrantID: grantID,
	}
	tok, err := jwt.Signed(signer).Claims(c).Serialize()
	if err != nil {
		return "", fmt.Errorf("minting token: %w", err)
	}
	return tok, nil
}

// Verifier verifies access tokens; it implements authn.Verifier.
type Verifier struct {
	Issuer string
	// Audiences are the accepted `aud` values: this resource's canonical URL and its
	// equivalent forms (trailing slash).
	Audiences []string
	// Keys returns the public key for a key id (nil, nil when unknown).
	Keys func(ctx context.Context, kid string) (*rsa.PublicKey, error)
	Skew time.Duration
	Now  func() time.Time
	// Check, if set, runs last, on a token that passed every other check: the authorization
	// server's revocation check. It returns an error wrapping authn.ErrInvalidToken to refuse
	// the token; any other error is an infrastructure failure (the caller fails closed).
	Check func(ctx context.Context, c *Claims) error
	// Cache, if set, skips re-verifying a token seen before (Check still runs).
	Cache *Cache
	// Checked, if set, skips Check for a token that passed it within its TTL; nil checks
	// every request.
	Checked *CheckCache
}

var _ authn.Verifier = (*Verifier)(nil)

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", authn.ErrInvalidToken, fmt.Sprintf(format, args...))
}

// Verify checks token and returns its caller.
func (v *Verifier) Verify(ctx context.Context, token string) (principal.Principal, error) {
	now := time.Now()
	if v.Now != nil {
		now = v.Now()
	}
	k := tokenKey(token)
	if hit, ok := v.Cache.get(k, now); ok {
		if v.Check != nil {
			c := hit.claims
			if err := v.Checked.check(ctx, k, &c, v.Check); err != nil {
				return principal.Principal{}, err
			}
		}
		return hit.p, nil
	}
	p, c, err := v.verify(ctx, token, now)
	if err != nil {
		return principal.Principal{}, err
	}
	if v.Check != nil {
		if err := v.Checked.check(ctx, k, &c, v.Check); err != nil {
			return principal.Principal{}, err
		}
	}
	// Cached until expiry, not expiry + skew: a cache hit never extends a token's life.
	v.Cache.put(k, cached{p: p, claims: c, exp: c.Expiry.Time()}, now)
	return p, nil
}

// verify does every check but Check.
func (v *Verifier) verify(ctx context.Context, token string, now time.Time) (principal.Principal, Claims, error) {
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return principal.Principal{}, Claims{}, invalid("unparsable or disallowed algorithm: %v", err)
	}
	if len(tok.Headers) != 1 {
		return principal.Principal{}, Claims{}, invalid("want exactly one signature")
	}
	h := tok.Headers[0]
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); !strings.EqualFold(typ, TokenType) && !strings.EqualFold(typ, "application/"+TokenType) {
		return principal.Principal{}, Claims{}, invalid("token type %q is not an access token", typ)
	}
	key, err := v.Keys(ctx, h.KeyID)
	if err != nil {
		return principal.Principal{}, Claims{}, fmt.Errorf("loading verification key: %w", err)
	}
	if key == nil {
		return principal.Principal{}, Claims{}, invalid("unknown key id")
	}
	var c Claims
	if err := tok.Claims(key, &c); err != nil {
		return principal.Principal{}, Claims{}, invalid("bad signature: %v", err)
	}
	skew := v.Skew
	if skew == 0 {
		skew = DefaultSkew
	}
	if c.Expiry == nil {
		return principal.Principal{}, Claims{}, invalid("no expiry")
	}
	if err := c.Claims.ValidateWithLeeway(jwt.Expected{Issuer: v.Issuer, Time: now}, skew); err != nil {
		return principal.Principal{}, Claims{}, invalid("%v", err)
	}
	if !slices.ContainsFunc(v.Audiences, func(a string) bool { return c.Audience.Contains(a) }) {
		return principal.Principal{}, Claims{}, invalid("audience %v is not this resource", []string(c.Audience))
	}
	user, err := uuid.Parse(c.Subject)
	if err != nil {
		return principal.Principal{}, Claims{}, invalid("subject is not a user id")
	}
	church, err := uuid.Parse(c.ChurchID)
	if err != nil {
		return principal.Principal{}, Claims{}, invalid("church_id missing or malformed")
	}
	if _, ok := scopes.RoleScopes(c.Role); !ok {
		return principal.Principal{}, Claims{}, invalid("unknown role")
	}
	granted := capability.ParseScopeSet(c.Scope)
	if capped := scopes.Grant(c.Role, granted); capped.String() != granted.String() {
		return principal.Principal{}, Claims{}, invalid("scopes exceed the role's")
	}
	return principal.Principal{UserID: user, ChurchID: church, Role: c.Role, Scopes: granted, ClientID: c.ClientID}, c, nil
}

// ErrNoKey is returned by key stores that have no active key.
var ErrNoKey = errors.New("no signing key")
