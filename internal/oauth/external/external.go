package external

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
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
	"github.com/neemias/neemias-mcp/internal/tokens"
)

// Defaults and bounds for Config.
const (
	DefaultFetchTimeout    = 5 * time.Second
	DefaultMaxBytes        = 256 << 10
	DefaultRefreshInterval = 10 * time.Second
	DefaultKeysMaxAge      = time.Hour
	MaxSkew                = 5 * time.Minute
	maxTokenBytes          = 16 << 10
	maxSubjectLen          = 255
)

// User is the local account a provider subject maps to. ChurchID and Role may be left zero
// when a claim mapping supplies them.
type User struct {
	ID       uuid.UUID
	ChurchID uuid.UUID
	Role     string
}

// LookupFunc maps a provider identity (issuer and subject, never e-mail) to a local user. It
// returns ErrUnknownSubject when there is none; any other error is an infrastructure failure.
// It runs on every request, so a disabled user loses access at once.
type LookupFunc func(ctx context.Context, issuer, subject string) (User, error)

// ErrUnknownSubject is returned by a LookupFunc for a subject with no local user. Verify
// turns it into authn.ErrInvalidToken: a valid token of a stranger gets nothing.
var ErrUnknownSubject = errors.New("external: no local user for this subject")

// ClaimMapping says where the provider puts what Neemias needs. A claim name is first looked up
// as a top-level member; if absent, a dotted name walks nested objects ("realm_access.roles").
type ClaimMapping struct {
	// Scope names the scope claim: a space-delimited string or an array of strings. Empty
	// means "scope", then "scp".
	Scope string
	// Church names a claim holding the church id (a UUID). Empty: the church comes from the
	// local user only. When both exist they must agree.
	Church string
	// Role names a claim holding the provider's role or groups (a string or an array), and
	// Roles maps provider values to local roles (ADMIN, CADASTRO, VOLUNTARIO, RESPONSAVEL).
	// Unmapped values are ignored; more than one distinct mapped role is rejected. With no
	// mapped value the local user's role applies. Empty Role: provider roles are ignored.
	Role  string
	Roles map[string]string
	// ClientID names the claim holding the OAuth client, for the audit log. Empty means
	// "client_id", then "azp".
	ClientID string
}

// Config configures a Verifier.
type Config struct {
	// Issuer is the provider's issuer identifier, exactly as its tokens carry it (https).
	Issuer string
	// Audience is this resource's canonical URL (the MCP endpoint); tokens must name it (or
	// its trailing-slash form) in aud. Required.
	Audience string
	// Algorithms allowed in tokens; default RS256 and ES256. Symmetric algorithms and "none"
	// are refused.
	Algorithms []jose.SignatureAlgorithm
	// Skew is the clock-skew allowance for exp, nbf and iat (default 30 s, at most 5 min).
	Skew time.Duration
	// RequireAccessTokenType demands the RFC 9068 JOSE typ "at+jwt". Without it, a token may
	// carry typ at+jwt, JWT or none (many providers sign access tokens as plain JWT); the
	// audience check is then what keeps ID tokens out, since their aud is the client id.
	RequireAccessTokenType bool
	// RequiredClaims are string claims that must have exactly these values, e.g. a
	// provider's own token-type marker ({"token_use": "access"}, {"typ": "Bearer"}).
	RequiredClaims map[string]string
	// Claims maps provider claims; Lookup maps subjects to local users (required).
	Claims ClaimMapping
	Lookup LookupFunc
	// FetchTimeout, MaxBytes bound each discovery and JWKS fetch (defaults 5 s, 256 KiB).
	FetchTimeout time.Duration
	MaxBytes     int64
	// RefreshInterval is the least time between two JWKS fetches (default 10 s); KeysMaxAge
	// is how old the cached set may grow before a token triggers a refresh (default 1 h).
	RefreshInterval, KeysMaxAge time.Duration
	// RootCAs replaces the system trust roots for the provider (a private CA, or tests).
	RootCAs *x509.CertPool
	// Now is the clock (tests).
	Now func() time.Time
}

// Verifier verifies the provider's access tokens; it implements authn.Verifier.
type Verifier struct {
	issuer     string
	audiences  []string
	algs       []jose.SignatureAlgorithm
	skew       time.Duration
	requireTyp bool
	required   map[string]string
	claims     ClaimMapping
	lookup     LookupFunc
	keys       *keySet
	now        func() time.Time
}

var _ authn.Verifier = (*Verifier)(nil)

// NewVerifier validates cfg and discovers the provider. It fails when the provider's metadata
// cannot be fetched or names another issuer; keys are fetched on first use.
func NewVerifier(ctx context.Context, cfg Config) (*Verifier, error) {
	if err := checkHTTPSURL(cfg.Issuer); err != nil {
		return nil, fmt.Errorf("external: Issuer: %w", err)
	}
	if err := checkHTTPSURL(cfg.Audience); err != nil && !isLoopbackHTTP(cfg.Audience) {
		return nil, fmt.Errorf("external: Audience: %w", err)
	}
	if cfg.Lookup == nil {
		return nil, errors.New("external: Lookup is required")
	}
	if cfg.Skew < 0 || cfg.Skew > MaxSkew {
		return nil, fmt.Errorf("external: Skew must be between 0 and %v", MaxSkew)
	}
	algs := cfg.Algorithms
	if len(algs) == 0 {
		algs = []jose.SignatureAlgorithm{jose.RS256, jose.ES256}
	}
	for _, a := range algs {
		switch a {
		case jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
			jose.ES256, jose.ES384, jose.ES512, jose.EdDSA:
		default:
			return nil, fmt.Errorf("external: algorithm %q is not an allowed asymmetric signature algorithm", a)
		}
	}
	if cfg.Claims.Role != "" && len(cfg.Claims.Roles) == 0 {
		return nil, errors.New("external: Claims.Role needs Claims.Roles")
	}
	for from, to := range cfg.Claims.Roles {
		if _, ok := scopes.RoleScopes(to); !ok {
			return nil, fmt.Errorf("external: Claims.Roles maps %q to unknown role %q", from, to)
		}
	}
	v := &Verifier{
		issuer:     cfg.Issuer,
		audiences:  audiences(cfg.Audience),
		algs:       slices.Clone(algs),
		skew:       cfg.Skew,
		requireTyp: cfg.RequireAccessTokenType,
		required:   cfg.RequiredClaims,
		claims:     cfg.Claims,
		lookup:     cfg.Lookup,
		now:        cfg.Now,
	}
	if v.skew == 0 {
		v.skew = tokens.DefaultSkew
	}
	if v.now == nil {
		v.now = time.Now
	}
	timeout := cfg.FetchTimeout
	if timeout <= 0 {
		timeout = DefaultFetchTimeout
	}
	maxBytes := cfg.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	g := newGetter(cfg.RootCAs, timeout, maxBytes)
	d, err := g.discover(ctx, cfg.Issuer)
	if err != nil {
		return nil, err
	}
	v.keys = &keySet{
		url:         d.JWKSURI,
		get:         g.get,
		minInterval: orDefault(cfg.RefreshInterval, DefaultRefreshInterval),
		maxAge:      orDefault(cfg.KeysMaxAge, DefaultKeysMaxAge),
		now:         v.now,
	}
	return v, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// audiences is the canonical resource URL and its trailing-slash twin.
func audiences(aud string) []string {
	if t := strings.TrimSuffix(aud, "/"); t != aud {
		return []string{aud, t}
	}
	return []string{aud, aud + "/"}
}

func checkHTTPSURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" || u.RawQuery != "" {
		return errors.New("must be an absolute https URL without userinfo, query or fragment")
	}
	return nil
}

// isLoopbackHTTP admits http://127.0.0.1… and http://localhost… resource URLs (local runs).
func isLoopbackHTTP(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" {
		return false
	}
	switch u.Hostname() {
	case "127.0.0.1", "::1", "localhost":
		return true
	}
	return false
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", authn.ErrInvalidToken, fmt.Sprintf(format, args...))
}

// Verify checks token and returns its caller. Rejections wrap authn.ErrInvalidToken; a key set
// that cannot be obtained (ErrKeysUnavailable) or a failing Lookup is returned unwrapped, so
// the middleware answers 503.
func (v *Verifier) Verify(ctx context.Context, token string) (principal.Principal, error) {
	if len(token) > maxTokenBytes {
		return principal.Principal{}, invalid("token larger than %d bytes", maxTokenBytes)
	}
	tok, err := jwt.ParseSigned(token, v.algs)
	if err != nil {
		return principal.Principal{}, invalid("unparsable or disallowed algorithm: %v", err)
	}
	if len(tok.Headers) != 1 {
		return principal.Principal{}, invalid("want exactly one signature")
	}
	h := tok.Headers[0]
	if err := v.checkType(h); err != nil {
		return principal.Principal{}, err
	}
	keys, err := v.keys.candidates(ctx, h.KeyID, jose.SignatureAlgorithm(h.Algorithm))
	if err != nil {
		return principal.Principal{}, err
	}
	if len(keys) == 0 {
		return principal.Principal{}, invalid("no key of the provider matches kid and alg")
	}
	var (
		c   jwt.Claims
		raw map[string]json.RawMessage
		ok  bool
	)
	for _, k := range keys {
		c, raw = jwt.Claims{}, nil
		if err := tok.Claims(k.Key, &c, &raw); err == nil {
			ok = true
			break
		}
	}
	if !ok {
		return principal.Principal{}, invalid("bad signature")
	}
	if c.Expiry == nil {
		return principal.Principal{}, invalid("no expiry")
	}
	if err := c.ValidateWithLeeway(jwt.Expected{Issuer: v.issuer, Time: v.now()}, v.skew); err != nil {
		return principal.Principal{}, invalid("%v", err)
	}
	if !slices.ContainsFunc(v.audiences, c.Audience.Contains) {
		return principal.Principal{}, invalid("audience is not this resource")
	}
	for name, want := range v.required {
		if got, _ := stringClaim(raw, name); got != want {
			return principal.Principal{}, invalid("claim %q does not have the required value", name)
		}
	}
	if c.Subject == "" || len(c.Subject) > maxSubjectLen {
		return principal.Principal{}, invalid("subject missing or too long")
	}
	user, err := v.lookup(ctx, c.Issuer, c.Subject)
	if errors.Is(err, ErrUnknownSubject) {
		return principal.Principal{}, invalid("no local user for this subject")
	}
	if err != nil {
		return principal.Principal{}, fmt.Errorf("external: looking up the token's subject: %w", err)
	}
	if user.ID == uuid.Nil {
		return principal.Principal{}, invalid("lookup returned no user id")
	}
	church, err := v.church(raw, user)
	if err != nil {
		return principal.Principal{}, err
	}
	role, err := v.role(raw, user)
	if err != nil {
		return principal.Principal{}, err
	}
	requested, err := v.scopes(raw)
	if err != nil {
		return principal.Principal{}, err
	}
	return principal.Principal{
		UserID:   user.ID,
		ChurchID: church,
		Role:     role,
		Scopes:   scopes.Grant(role, requested),
		ClientID: v.clientID(raw),
	}, nil
}

func (v *Verifier) checkType(h jose.Header) error {
	typ, _ := h.ExtraHeaders[jose.HeaderType].(string)
	isAT := strings.EqualFold(typ, tokens.TokenType) || strings.EqualFold(typ, "application/"+tokens.TokenType)
	if v.requireTyp && !isAT {
		return invalid("token type %q is not an access token", typ)
	}
	if !isAT && typ != "" && !strings.EqualFold(typ, "JWT") {
		return invalid("token type %q is not an access token", typ)
	}
	return nil
}

func (v *Verifier) church(raw map[string]json.RawMessage, u User) (uuid.UUID, error) {
	if v.claims.Church == "" {
		if u.ChurchID == uuid.Nil {
			return uuid.Nil, invalid("user has no church")
		}
		return u.ChurchID, nil
	}
	s, present := stringClaim(raw, v.claims.Church)
	if !present {
		if u.ChurchID == uuid.Nil {
			return uuid.Nil, invalid("no church claim and the user has no church")
		}
		return u.ChurchID, nil
	}
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, invalid("church claim is not a church id")
	}
	if u.ChurchID != uuid.Nil && u.ChurchID != id {
		return uuid.Nil, invalid("church claim disagrees with the user's church")
	}
	return id, nil
}

func (v *Verifier) role(raw map[string]json.RawMessage, u User) (string, error) {
	role := u.Role
	if v.claims.Role != "" {
		vals, err := stringsClaim(raw, v.claims.Role)
		if err != nil {
			return "", invalid("role claim: %v", err)
		}
		var mapped []string
		for _, val := range vals {
			if r, ok := v.claims.Roles[val]; ok && !slices.Contains(mapped, r) {
				mapped = append(mapped, r)
			}
		}
		switch len(mapped) {
		case 0:
		case 1:
			role = mapped[0]
		default:
			return "", invalid("role claim maps to more than one role")
		}
	}
	if _, ok := scopes.RoleScopes(role); !ok {
		return "", invalid("no known role")
	}
	return role, nil
}

func (v *Verifier) scopes(raw map[string]json.RawMessage) (capability.ScopeSet, error) {
	names := []string{v.claims.Scope}
	if v.claims.Scope == "" {
		names = []string{"scope", "scp"}
	}
	for _, n := range names {
		if _, ok := lookupClaim(raw, n); !ok {
			continue
		}
		vals, err := stringsClaim(raw, n)
		if err != nil {
			return capability.ScopeSet{}, invalid("scope claim: %v", err)
		}
		var all []string
		for _, s := range vals {
			all = append(all, strings.Fields(s)...)
		}
		return capability.NewScopeSet(all...), nil
	}
	return capability.ScopeSet{}, nil
}

func (v *Verifier) clientID(raw map[string]json.RawMessage) string {
	names := []string{v.claims.ClientID}
	if v.claims.ClientID == "" {
		names = []string{"client_id", "azp"}
	}
	for _, n := range names {
		if s, ok := stringClaim(raw, n); ok && len(s) <= 512 {
			return s
		}
	}
	return ""
}

// lookupClaim finds name at the top level, else by walking a dotted path.
func lookupClaim(raw map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	if m, ok := raw[name]; ok {
		return m, true
	}
	parts := strings.Split(name, ".")
	if len(parts) < 2 {
		return nil, false
	}
	cur := raw
	for i, p := range parts {
		m, ok := cur[p]
		if !ok {
			return nil, false
		}
		if i == len(parts)-1 {
			return m, true
		}
		cur = nil
		if err := json.Unmarshal(m, &cur); err != nil || cur == nil {
			return nil, false
		}
	}
	return nil, false
}

// stringClaim returns a string claim; present is false when the claim is absent or not a string.
func stringClaim(raw map[string]json.RawMessage, name string) (s string, present bool) {
	m, ok := lookupClaim(raw, name)
	if !ok {
		return "", false
	}
	if err := json.Unmarshal(m, &s); err != nil {
		return "", false
	}
	return s, true
}

// stringsClaim returns a claim that is a string or an array of strings (absent: nil).
func stringsClaim(raw map[string]json.RawMessage, name string) ([]string, error) {
	m, ok := lookupClaim(raw, name)
	if !ok || string(m) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(m, &s); err == nil {
		return []string{s}, nil
	}
	var ss []string
	if err := json.Unmarshal(m, &ss); err == nil {
		return ss, nil
	}
	return nil, errors.New("not a string or an array of strings")
}
