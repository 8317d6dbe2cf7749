package external

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/zitadel/oidc/v3/pkg/client/rs"
	"github.com/zitadel/oidc/v3/pkg/oidc"
)

// Defaults and bounds of Introspection.
const (
	DefaultIntrospectionCacheTTL = 30 * time.Second
	MaxIntrospectionCacheTTL     = 5 * time.Minute
	defaultIntrospectionEntries  = 10_000
)

// ErrIntrospectionUnavailable reports that the introspection endpoint could not be reached or
// did not answer properly, so an opaque token could not be decided. Like ErrKeysUnavailable it
// is not authn.ErrInvalidToken: the middleware answers 503.
var ErrIntrospectionUnavailable = errors.New("external: token introspection unavailable")

// Introspection configures RFC 7662 token introspection for opaque access tokens.
type Introspection struct {
	// Endpoint is the provider's introspection endpoint: https, or http on a loopback address
	// (a provider's admin port on the same host).
	Endpoint string
	// ClientID and ClientSecret authenticate this resource server to the endpoint (HTTP Basic).
	ClientID, ClientSecret string
	// CacheTTL is how long an active answer is reused, never past the token's exp: the delay
	// within which a revocation at the provider is seen (default 30 s, at most 5 min).
	CacheTTL time.Duration
	// MaxEntries bounds the cache (default 10 000).
	MaxEntries int
}

type introspector struct {
	server     rs.ResourceServer
	ttl        time.Duration
	maxEntries int
	now        func() time.Time

	mu      sync.Mutex
	entries map[[32]byte]introspected
	lastErr error // of the last introspection call; nil after a success
}

type introspected struct {
	tc    tokenClaims
	until time.Time
}

func newIntrospector(c Introspection, roots *x509.CertPool, timeout time.Duration, now func() time.Time) (*introspector, error) {
	if err := checkHTTPSURL(c.Endpoint); err != nil && !isLoopbackHTTP(c.Endpoint) {
		return nil, fmt.Errorf("external: introspection endpoint: %w (or http on a loopback address)", err)
	}
	if c.ClientID == "" {
		return nil, errors.New("external: introspection needs the client id this server authenticates with")
	}
	if c.CacheTTL < 0 || c.CacheTTL > MaxIntrospectionCacheTTL {
		return nil, fmt.Errorf("external: introspection cache TTL must be between 0 and %v", MaxIntrospectionCacheTTL)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots}
	tr.ResponseHeaderTimeout = timeout
	tr.MaxResponseHeaderBytes = 16 << 10
	client := &http.Client{
		Transport:     statusTransport{tr},
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	// Static endpoints: no discovery (many providers do not advertise introspection, and the
	// provider may be down at start-up). The token URL is unused by introspection.
	server, err := rs.NewResourceServerClientCredentials(context.Background(), "", c.ClientID, c.ClientSecret,
		rs.WithStaticEndpoints(c.Endpoint, c.Endpoint), rs.WithClient(client))
	if err != nil {
		return nil, fmt.Errorf("external: introspection: %w", err)
	}
	return &introspector{
		server: server, ttl: orDefault(c.CacheTTL, DefaultIntrospectionCacheTTL),
		maxEntries: c.MaxEntries, now: now, entries: map[[32]byte]introspected{},
	}, nil
}

// statusTransport turns a non-200 answer into an error before anyone reads its body, which
// may hold personal data the provider put in an error message.
type statusTransport struct{ next http.RoundTripper }

type statusError int

func (s statusError) Error() string { return fmt.Sprintf("status %d", int(s)) }

func (t statusTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, statusError(resp.StatusCode)
	}
	return resp, nil
}

func (in *introspector) lastFailure() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.lastErr
}

func (in *introspector) cached(k [32]byte, now time.Time) (tokenClaims, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	e, ok := in.entries[k]
	if !ok {
		return tokenClaims{}, false
	}
	if !now.Before(e.until) {
		delete(in.entries, k)
		return tokenClaims{}, false
	}
	return e.tc, true
}

func (in *introspector) store(k [32]byte, tc tokenClaims, until time.Time, now time.Time) {
	max := in.maxEntries
	if max <= 0 {
		max = defaultIntrospectionEntries
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.entries) >= max {
		for key, e := range in.entries {
			if !now.Before(e.until) {
				delete(in.entries, key)
			}
		}
		for key := range in.entries {
			if len(in.entries) < max {
				break
			}
			delete(in.entries, key) // arbitrary victims: the cache only saves calls
		}
	}
	in.entries[k] = introspected{tc: tc, until: until}
}

// call asks the endpoint about token; errors are ErrIntrospectionUnavailable, never echoing
// the answer.
func (in *introspector) call(ctx context.Context, token string) (map[string]json.RawMessage, error) {
	// Detached from the caller's cancellation (the client may hang up), bounded by the
	// client's timeout.
	resp, err := rs.Introspect[map[string]json.RawMessage](context.WithoutCancel(ctx), in.server, token)
	if err != nil {
		err = introspectionError(err)
	}
	in.mu.Lock()
	in.lastErr = err
	in.mu.Unlock()
	return resp, err
}

func introspectionError(err error) error {
	var (
		st   statusError
		oerr *oidc.Error
		uerr *url.Error
	)
	switch {
	case errors.As(err, &st):
		if st == http.StatusUnauthorized || st == http.StatusForbidden {
			return fmt.Errorf("%w: the endpoint refused our client credentials (%v); check the introspection client id and secret", ErrIntrospectionUnavailable, st)
		}
		return fmt.Errorf("%w: %v", ErrIntrospectionUnavailable, st)
	case errors.As(err, &oerr):
		return fmt.Errorf("%w: the endpoint answered %q", ErrIntrospectionUnavailable, oerr.ErrorType)
	case errors.As(err, &uerr):
		return fmt.Errorf("%w: %v", ErrIntrospectionUnavailable, transportError(uerr.Err))
	default:
		return fmt.Errorf("%w: malformed answer", ErrIntrospectionUnavailable)
	}
}

// introspect decides an opaque token: a cached active answer, or the endpoint's. An inactive
// token is never cached (it may be a guess; it can only stay inactive anyway).
func (v *Verifier) introspect(ctx context.Context, token string) (tokenClaims, error) {
	now := v.now()
	k := sha256.Sum256([]byte(token))
	if tc, ok := v.intro.cached(k, now); ok {
		return tc, nil
	}
	raw, err := v.intro.call(ctx, token)
	if err != nil {
		return tokenClaims{}, unavailable(err, v.keys.minInterval)
	}
	tc, exp, err := v.introspectedClaims(raw, now)
	if err != nil {
		return tokenClaims{}, err
	}
	until := now.Add(v.intro.ttl)
	if !exp.IsZero() && exp.Before(until) {
		until = exp
	}
	v.intro.store(k, tc, until, now)
	return tc, nil
}

// introspectedClaims checks an RFC 7662 answer: active, an access token (not a refresh
// token, which some providers also report active), our issuer when it names one, and exp and
// nbf with the skew allowance.
func (v *Verifier) introspectedClaims(raw map[string]json.RawMessage, now time.Time) (tokenClaims, time.Time, error) {
	var active bool
	if m, ok := raw["active"]; !ok || json.Unmarshal(m, &active) != nil || !active {
		return tokenClaims{}, time.Time{}, invalid("introspection: token is not active")
	}
	if use, ok := stringClaim(raw, "token_use"); ok && use != "access_token" {
		return tokenClaims{}, time.Time{}, invalid("introspection: token_use %q is not an access token", use)
	}
	if typ, ok := stringClaim(raw, "typ"); ok && !strings.EqualFold(typ, "Bearer") {
		return tokenClaims{}, time.Time{}, invalid("introspection: typ %q is not an access token", typ)
	}
	iss, ok := stringClaim(raw, "iss")
	if !ok {
		iss = v.issuer
	} else if iss != v.issuer {
		return tokenClaims{}, time.Time{}, invalid("introspection: issuer is not the provider")
	}
	exp, err := numericTime(raw, "exp")
	if err != nil {
		return tokenClaims{}, time.Time{}, invalid("introspection: %v", err)
	}
	if !exp.IsZero() && !now.Before(exp.Add(v.skew)) {
		return tokenClaims{}, time.Time{}, invalid("introspection: token expired")
	}
	nbf, err := numericTime(raw, "nbf")
	if err != nil {
		return tokenClaims{}, time.Time{}, invalid("introspection: %v", err)
	}
	if !nbf.IsZero() && now.Add(v.skew).Before(nbf) {
		return tokenClaims{}, time.Time{}, invalid("introspection: token not valid yet")
	}
	aud, err := stringsClaim(raw, "aud")
	if err != nil {
		return tokenClaims{}, time.Time{}, invalid("introspection: aud: %v", err)
	}
	sub, _ := stringClaim(raw, "sub")
	return tokenClaims{issuer: iss, subject: sub, audience: aud, raw: raw, introspected: true}, exp, nil
}

// numericTime reads a NumericDate claim (seconds since the epoch); absent is the zero time.
func numericTime(raw map[string]json.RawMessage, name string) (time.Time, error) {
	m, ok := raw[name]
	if !ok || string(m) == "null" {
		return time.Time{}, nil
	}
	var f float64
	if err := json.Unmarshal(m, &f); err != nil {
		return time.Time{}, fmt.Errorf("%s is not a number", name)
	}
	return time.Unix(int64(f), 0), nil
}
