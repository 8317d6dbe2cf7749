package external

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"

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
	DefaultKeysMaxAge      = 5 * time.Minute
	maxAudienceLen         = 1024
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
// turns it into an authn.ErrAccessDenied (403 whose description says the account is not
// linked): a valid token of a stranger gets nothing, and no login loop.
var ErrUnknownSubject = errors.New("external: no local user for this subject")

// ErrDisabledUser is returned by a LookupFunc for a subject linked to a disabled local user
// (403 saying so).
var ErrDisabledUser = errors.New("external: the linked local user is disabled")

// DefaultAlgorithms are the signature algorithms accepted when Config.Algorithms is empty:
// every asymmetric one (RSA PKCS#1 v1.5 and PSS, ECDSA on P-256/384/521, Ed25519). Each key is
// offered only the algorithms of its own type and curve, so no confusion between them is
// possible; symmetric algorithms and "none" are never accepted.
var DefaultAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}

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
	// ScopeGrants (with Config.ScopesFromRole only) grants scopes, sensitive ones included,
	// by the values of the ScopeGrantClaim claim (default "groups"): provider group ->
	// scopes. Still narrowed to the role's scopes.
	ScopeGrantClaim string
	ScopeGrants     map[string][]string
}

// Config configures a Verifier.
type Config struct {
	// Issuer is the provider's issuer identifier, exactly as its tokens carry it: https, or
	// http on a loopback address (a provider on the same host, tests).
	Issuer string
	// Audience is what tokens must name in aud: any string the provider writes there (this
	// resource's URL, a client id, a GUID, an api:// Application ID URI), matched exactly;
	// an http(s) URL also in its trailing-slash (or slash-less) form. Required.
	Audience string
	// Algorithms allowed in tokens; default DefaultAlgorithms (every asymmetric algorithm).
	// Symmetric algorithms and "none" are refused.
	Algorithms []jose.SignatureAlgorithm
	// ScopesFromRole, for providers that cannot mint this server's scopes (Dex, Google, plain
	// OIDC): a token that carries none of this server's scopes is granted its role's
	// non-sensitive scopes, plus the sensitive ones Claims.ScopeGrants maps from its groups.
	// Off by default: a risk (the consent and step-up of the built-in authorization server do
	// not apply), logged at start-up. A token that does carry our scopes is unaffected.
	ScopesFromRole bool
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
	// is how old the cached set may grow before a token triggers a refresh (default 5 min):
	// keys the provider dropped stop verifying at that refresh.
	RefreshInterval, KeysMaxAge time.Duration
	// RootCAs replaces the system trust roots for the provider (a private CA, or tests).
	RootCAs *x509.CertPool
	// Introspection, when set, validates opaque (non-JWT) access tokens by RFC 7662
	// introspection at the provider; without it only JWT access tokens are accepted.
	Introspection *Introspection
	// AcceptMissingAudience lists the client ids (a token's client_id or azp) whose tokens
	// are accepted without an aud claim: the workaround for providers that cannot
	// audience-bind tokens (Keycloak without resource indicators). Such a token must still
	// carry at least one scope this server knows; a token whose aud names another resource
	// is refused regardless. Every acceptance is logged and passed to OnMissingAudience.
	// Empty (the default): a token without aud is refused.
	AcceptMissingAudience []string
	// OnMissingAudience is called for every token accepted without aud (the audit log). An
	// error refuses the request as unavailable (503): the compensating check must be
	// recorded, or the token is not used.
	OnMissingAudience func(ctx context.Context, p principal.Principal) error
	// Logger receives the warnings of this verifier (never a token or personal data).
	Logger *slog.Logger
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
	disc       *discoverer
	meta       *metadataCache
	intro      *introspector
	fromRole   bool
	missingAud []string
	onMissing  func(ctx context.Context, p principal.Principal) error
	log        *slog.Logger
	now        func() time.Time
}

var _ authn.Verifier = (*Verifier)(nil)

// NewVerifier validates cfg and tries to discover the provider. A provider that is down,
// slow or overloaded (a connection failure, a timeout, a 5xx) does not stop it: discovery and
// keys are then fetched on use, at most once per RefreshInterval, and until they can be had
// Verify fails with ErrKeysUnavailable (503) and Ready reports why. A definite answer that
// shows a misconfiguration (metadata naming another issuer, a 404, an untrusted certificate)
// is an error.
func NewVerifier(ctx context.Context, cfg Config) (v *Verifier, err error) {
	loopbackIssuer := isLoopbackHTTP(cfg.Issuer)
	if err := checkHTTPSURL(cfg.Issuer); err != nil && !loopbackIssuer {
		return nil, fmt.Errorf("external: Issuer: %w, or an http URL on a loopback address", err)
	}
	if loopbackIssuer {
		if u, _ := url.Parse(cfg.Issuer); u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return nil, errors.New("external: Issuer: must be a URL without userinfo, query or fragment")
		}
	}
	if err := checkAudience(cfg.Audience); err != nil {
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
		algs = DefaultAlgorithms
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
	if len(cfg.Claims.ScopeGrants) > 0 && !cfg.ScopesFromRole {
		return nil, errors.New("external: Claims.ScopeGrants needs ScopesFromRole")
	}
	for from, to := range cfg.Claims.ScopeGrants {
		for _, sc := range to {
			if _, ok := scopes.Describe(sc); !ok {
				return nil, fmt.Errorf("external: Claims.ScopeGrants maps %q to unknown scope %q", from, sc)
			}
		}
	}
	v = &Verifier{
		issuer:     cfg.Issuer,
		audiences:  audiences(cfg.Audience),
		algs:       slices.Clone(algs),
		skew:       cfg.Skew,
		requireTyp: cfg.RequireAccessTokenType,
		required:   cfg.RequiredClaims,
		claims:     cfg.Claims,
		lookup:     cfg.Lookup,
		now:        cfg.Now,
		fromRole:   cfg.ScopesFromRole,
	}
	if v.fromRole && v.claims.ScopeGrantClaim == "" {
		v.claims.ScopeGrantClaim = "groups"
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
	for _, id := range cfg.AcceptMissingAudience {
		if strings.TrimSpace(id) == "" || len(id) > 512 {
			return nil, errors.New("external: AcceptMissingAudience: empty or overlong client id")
		}
	}
	v.missingAud = slices.Clone(cfg.AcceptMissingAudience)
	v.onMissing = cfg.OnMissingAudience
	v.log = cfg.Logger
	if v.log == nil {
		v.log = slog.Default()
	}
	g := newGetter(cfg.RootCAs, timeout, maxBytes)
	g.loopbackHTTP = loopbackIssuer
	if cfg.Introspection != nil {
		if v.intro, err = newIntrospector(*cfg.Introspection, cfg.RootCAs, timeout, v.now); err != nil {
			return nil, err
		}
	}
	v.disc = &discoverer{issuer: cfg.Issuer, get: g}
	v.meta = &metadataCache{issuer: cfg.Issuer, get: g, now: v.now}
	if _, err := v.disc.jwksURI(ctx); err != nil {
		if !isTransient(err) {
			return nil, err
		}
		v.log.WarnContext(ctx, "identity provider unreachable at start-up; serving 503 until it answers",
			"issuer", cfg.Issuer, "error", err)
	}
	v.keys = &keySet{
		url:         v.disc.jwksURI,
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

// audiences is the configured audience and, for an http(s) URL, its trailing-slash twin.
func audiences(aud string) []string {
	if !strings.HasPrefix(aud, "https://") && !strings.HasPrefix(aud, "http://") {
		return []string{aud}
	}
	if t := strings.TrimSuffix(aud, "/"); t != aud {
		return []string{aud, t}
	}
	return []string{aud, aud + "/"}
}

// checkAudience accepts any string a provider may write in aud (a URL, a client id, a GUID, an
// api:// URI): not empty, no white space or control characters, bounded.
func checkAudience(aud string) error {
	if aud == "" || len(aud) > maxAudienceLen {
		return fmt.Errorf("must be 1 to %d characters", maxAudienceLen)
	}
	for _, r := range aud {
		if r <= ' ' || r == 0x7f || unicode.IsSpace(r) || unicode.IsControl(r) {
			return errors.New("must have no white space or control characters")
		}
	}
	return nil
}

func checkHTTPSURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" || u.RawQuery != "" {
		return errors.New("must be an absolute https URL without userinfo, query or fragment")
	}
	return nil
}

// isLoopbackHTTP admits http://127.0.0.1…, http://[::1]… and http://localhost… URLs (a
// provider on the same host; local runs).
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

// Verify checks token and returns its caller. A compact JWS is verified against the provider's
// keys; any other token is introspected (RFC 7662) when Introspection is configured, and
// refused otherwise. Rejections wrap authn.ErrInvalidToken; keys or an introspection endpoint
// that cannot be reached (ErrKeysUnavailable, ErrIntrospectionUnavailable), a failing Lookup
// or OnMissingAudience are returned unwrapped, so the middleware answers 503.
func (v *Verifier) Verify(ctx context.Context, token string) (principal.Principal, error) {
	if len(token) > maxTokenBytes {
		return principal.Principal{}, invalid("token larger than %d bytes", maxTokenBytes)
	}
	var (
		tc  tokenClaims
		err error
	)
	switch {
	case strings.Count(token, ".") == 2:
		tc, err = v.verifyJWT(ctx, token)
	case v.intro != nil:
		tc, err = v.introspect(ctx, token)
	default:
		err = invalid("not a JWT, and token introspection is not configured")
	}
	if err != nil {
		return principal.Principal{}, err
	}
	return v.authorize(ctx, tc)
}

// tokenClaims is what a verified JWT or an active introspection response says.
type tokenClaims struct {
	issuer, subject string
	audience        []string
	raw             map[string]json.RawMessage
	introspected    bool
}

// verifyJWT checks a JWT access token's header, signature, issuer and times.
func (v *Verifier) verifyJWT(ctx context.Context, token string) (tokenClaims, error) {
	tok, err := jwt.ParseSigned(token, v.algs)
	if err != nil {
		return tokenClaims{}, invalid("unparsable or disallowed algorithm: %v", err)
	}
	if len(tok.Headers) != 1 {
		return tokenClaims{}, invalid("want exactly one signature")
	}
	h := tok.Headers[0]
	if err := v.checkType(h); err != nil {
		return tokenClaims{}, err
	}
	keys, err := v.keys.candidates(ctx, h.KeyID, jose.SignatureAlgorithm(h.Algorithm))
	if err != nil {
		var ue *unavailableError
		if errors.As(err, &ue) {
			if errors.Is(err, ErrKeyNotYetFetched) && !v.plausible(tok) {
				return tokenClaims{}, invalid("unknown kid, and the unverified claims would be refused anyway")
			}
			return tokenClaims{}, err
		}
		return tokenClaims{}, unavailable(err, v.keys.minInterval)
	}
	if len(keys) == 0 {
		return tokenClaims{}, invalid("no key of the provider matches kid and alg")
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
		return tokenClaims{}, invalid("bad signature")
	}
	if c.Expiry == nil {
		return tokenClaims{}, invalid("no expiry")
	}
	if err := c.ValidateWithLeeway(jwt.Expected{Issuer: v.issuer, Time: v.now()}, v.skew); err != nil {
		return tokenClaims{}, invalid("%v", err)
	}
	return tokenClaims{issuer: c.Issuer, subject: c.Subject, audience: c.Audience, raw: raw}, nil
}

// plausible reports whether a token whose key is not known yet would pass the issuer, time
// and audience checks if the key were genuine (its claims read without verification): only
// such a token is worth a "retry after the next key refresh"; any other is refused at once.
func (v *Verifier) plausible(tok *jwt.JSONWebToken) bool {
	var c jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&c); err != nil || c.Expiry == nil {
		return false
	}
	if c.ValidateWithLeeway(jwt.Expected{Issuer: v.issuer, Time: v.now()}, v.skew) != nil {
		return false
	}
	return len(c.Audience) == 0 || slices.ContainsFunc(v.audiences, func(a string) bool { return slices.Contains(c.Audience, a) })
}

// authorize applies the audience rule, the required claims and the claim mapping, and looks
// the subject up.
func (v *Verifier) authorize(ctx context.Context, tc tokenClaims) (principal.Principal, error) {
	missingAud := len(tc.audience) == 0
	if missingAud {
		// Only an explicitly listed client may present a token that names no resource at all;
		// a token naming another resource is refused below whatever the list says.
		id, _ := v.clientIDClaim(tc.raw)
		if id == "" || !slices.Contains(v.missingAud, id) {
			return principal.Principal{}, invalid("token has no audience")
		}
	} else if !slices.ContainsFunc(v.audiences, func(a string) bool { return slices.Contains(tc.audience, a) }) {
		return principal.Principal{}, invalid("audience is not this resource")
	}
	for name, want := range v.required {
		if got, _ := stringClaim(tc.raw, name); got != want {
			return principal.Principal{}, invalid("claim %q does not have the required value", name)
		}
	}
	if tc.subject == "" || len(tc.subject) > maxSubjectLen {
		return principal.Principal{}, invalid("subject missing or too long")
	}
	user, err := v.lookup(ctx, tc.issuer, tc.subject)
	if errors.Is(err, ErrUnknownSubject) {
		// The subject is what the operator needs to link the account (identity link).
		return principal.Principal{}, authn.Deny("this account of the identity provider is not linked to a Neemias user; "+
			"an administrator links it with `neemias-mcp identity link`", "issuer", tc.issuer, "subject", tc.subject,
			"client_id", v.clientID(tc.raw))
	}
	if errors.Is(err, ErrDisabledUser) {
		return principal.Principal{}, authn.Deny("the Neemias user linked to this account is disabled",
			"issuer", tc.issuer, "subject", tc.subject, "user_id", user.ID)
	}
	if err != nil {
		return principal.Principal{}, fmt.Errorf("external: looking up the token's subject: %w", err)
	}
	if user.ID == uuid.Nil {
		return principal.Principal{}, invalid("lookup returned no user id")
	}
	church, err := v.church(tc.raw, user)
	if err != nil {
		return principal.Principal{}, err
	}
	role, err := v.role(tc.raw, user)
	if errors.Is(err, errAmbiguousRole) {
		return principal.Principal{}, authn.Deny("the identity provider's groups of this account map to more than one Neemias role; "+
			"an administrator must leave one", "issuer", tc.issuer, "subject", tc.subject, "user_id", user.ID, "claim", v.claims.Role)
	}
	if err != nil {
		return principal.Principal{}, err
	}
	requested, err := v.scopes(tc.raw)
	if err != nil {
		return principal.Principal{}, err
	}
	fromRole := v.fromRole && !knowsAnyScope(requested)
	if fromRole {
		if requested, err = v.roleScopes(tc.raw, role); err != nil {
			return principal.Principal{}, err
		}
	}
	p := principal.Principal{
		UserID:   user.ID,
		ChurchID: church,
		Role:     role,
		Scopes:   scopes.Grant(role, requested),
		ClientID: v.clientID(tc.raw),
	}
	if missingAud {
		if fromRole || !knowsAnyScope(requested) {
			return principal.Principal{}, invalid("token without audience carries none of this server's scopes")
		}
		// Logged with the client and the local user id only: no token, no claim values.
		v.log.WarnContext(ctx, "access token without audience accepted for a listed client",
			"client_id", p.ClientID, "user_id", p.UserID, "introspected", tc.introspected)
		if v.onMissing != nil {
			if err := v.onMissing(ctx, p); err != nil {
				return principal.Principal{}, fmt.Errorf("external: recording a token accepted without audience: %w", err)
			}
		}
	}
	return p, nil
}

// knowsAnyScope reports whether requested names at least one scope of the spec: a token
// issued for some other API does not carry Neemias's scope names.
func knowsAnyScope(requested capability.ScopeSet) bool {
	for _, s := range scopes.All() {
		if requested.Has(s.Name) {
			return true
		}
	}
	return false
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
		vals, err := roleValues(raw, v.claims.Role)
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
			return "", errAmbiguousRole
		}
	}
	if _, ok := scopes.RoleScopes(role); !ok {
		return "", invalid("no known role")
	}
	return role, nil
}

// errAmbiguousRole: the role claim maps to more than one role (a 403 saying so).
var errAmbiguousRole = errors.New("role claim maps to more than one role")

// roleScopes is what ScopesFromRole grants a token without any of our scopes: the role's
// non-sensitive scopes, and the scopes ScopeGrants maps from the token's groups (the caller
// narrows them to the role's).
func (v *Verifier) roleScopes(raw map[string]json.RawMessage, role string) (capability.ScopeSet, error) {
	var names []string
	for _, s := range scopes.All() {
		if !s.Sensitive {
			names = append(names, s.Name)
		}
	}
	if len(v.claims.ScopeGrants) > 0 {
		vals, err := roleValues(raw, v.claims.ScopeGrantClaim)
		if err != nil {
			return capability.ScopeSet{}, invalid("scope grant claim: %v", err)
		}
		for _, val := range vals {
			names = append(names, v.claims.ScopeGrants[val]...)
		}
	}
	return capability.NewScopeSet(names...), nil
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
	s, _ := v.clientIDClaim(raw)
	return s
}

// clientIDClaim returns the token's client: the configured claim, else client_id, else azp.
func (v *Verifier) clientIDClaim(raw map[string]json.RawMessage) (string, bool) {
	names := []string{v.claims.ClientID}
	if v.claims.ClientID == "" {
		names = []string{"client_id", "azp"}
	}
	for _, n := range names {
		if s, ok := stringClaim(raw, n); ok && s != "" && len(s) <= 512 {
			return s, true
		}
	}
	return "", false
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

// roleValues returns a role or group claim: a string, an array of strings, or an object whose
// member names are the roles (Zitadel's urn:zitadel:iam:org:project:roles maps each role to
// the organizations that granted it).
func roleValues(raw map[string]json.RawMessage, name string) ([]string, error) {
	vals, err := stringsClaim(raw, name)
	if err == nil {
		return vals, nil
	}
	m, _ := lookupClaim(raw, name)
	var obj map[string]json.RawMessage
	if json.Unmarshal(m, &obj) != nil {
		return nil, errors.New("not a string, an array of strings or an object of roles")
	}
	keys := slices.Sorted(maps.Keys(obj))
	return keys, nil
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
