package external

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// ErrKeysUnavailable reports that the provider's keys could not be obtained and no cached key
// can decide the token. It is an infrastructure failure, not authn.ErrInvalidToken: the
// middleware answers 503 (fail closed).
var ErrKeysUnavailable = errors.New("external: identity provider keys unavailable")

// ErrKeyNotYetFetched reports a token whose kid the cached key set does not hold, when the
// set was refreshed too recently to be fetched again: the key may be the provider's newest
// (rotated in since), so the token is neither accepted nor called invalid; the answer is 503
// with a Retry-After that reaches the next allowed refresh. A kid a refresh already looked
// for in vain is refused at once (401).
var ErrKeyNotYetFetched = errors.New("external: the token's signing key is not in the provider's key set as last fetched; retry after the next refresh")

const (
	maxKeys       = 100
	minRSABits    = 2048
	maxCandidates = 4 // keys tried for a token without kid
	maxMissing    = 1024
)

// keySet caches the provider's JWKS. It fetches when a token names a kid it does not hold or
// when the set is older than maxAge, never more often than once per minInterval, one fetch at
// a time. A failed fetch keeps the previous keys.
type keySet struct {
	// url returns the JWKS URL (discovered from the issuer on first success).
	url         func(ctx context.Context) (string, error)
	get         func(ctx context.Context, url string) ([]byte, error)
	minInterval time.Duration
	maxAge      time.Duration
	now         func() time.Time

	mu          sync.Mutex
	keys        []jose.JSONWebKey
	fetchedAt   time.Time // last successful fetch
	lastAttempt time.Time
	lastErr     error // of the last attempt; nil when it succeeded
	inflight    chan struct{}
	// missing are the kids looked for in vain since the last successful fetch (a
	// refresh already ran for them): refused at once until the next one.
	missing map[string]bool
}

// candidates returns the keys that may have signed a token with kid and alg. A nil result
// with a nil error means no such key (the token is invalid); an error means the key set is
// unavailable and nothing cached can decide.
func (s *keySet) candidates(ctx context.Context, kid string, alg jose.SignatureAlgorithm) ([]jose.JSONWebKey, error) {
	s.mu.Lock()
	keys := match(s.keys, kid, alg)
	stale := s.fetchedAt.IsZero() || s.now().Sub(s.fetchedAt) > s.maxAge
	s.mu.Unlock()
	if len(keys) > 0 && !stale {
		return keys, nil
	}
	fetched := s.refresh(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if keys := match(s.keys, kid, alg); len(keys) > 0 {
		return keys, nil // possibly stale keys: better than failing while the provider is down
	}
	if s.lastErr != nil {
		return nil, fmt.Errorf("%w: %w", ErrKeysUnavailable, s.lastErr)
	}
	if len(s.keys) == 0 {
		return nil, fmt.Errorf("%w: no usable key", ErrKeysUnavailable)
	}
	if kid == "" {
		return nil, nil
	}
	if fetched {
		if s.missing == nil {
			s.missing = map[string]bool{}
		}
		if len(s.missing) < maxMissing {
			s.missing[kid] = true
		}
		return nil, nil
	}
	if s.missing[kid] {
		return nil, nil // looked for at the last refresh: not the provider's
	}
	// Never looked for, and no refresh allowed yet: a key rotated in moments ago must not get
	// a 401 (the client would log in again); retry once the next refresh may run.
	wait := s.minInterval - s.now().Sub(s.lastAttempt)
	return nil, unavailable(ErrKeyNotYetFetched, wait)
}

// state reports whether any key is held, and the last attempt's error (nil if it succeeded
// or none was made).
func (s *keySet) state() (haveKeys bool, lastErr error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.keys) > 0, s.lastErr
}

// refresh fetches the key set unless one was attempted within minInterval; concurrent callers
// share one fetch. It reports whether a fetch ran for this call (its own or the shared one
// it waited for), successful or not.
func (s *keySet) refresh(ctx context.Context) bool {
	s.mu.Lock()
	if ch := s.inflight; ch != nil {
		s.mu.Unlock()
		select {
		case <-ch:
			return true
		case <-ctx.Done():
			return false
		}
	}
	if !s.lastAttempt.IsZero() && s.now().Sub(s.lastAttempt) < s.minInterval {
		s.mu.Unlock()
		return false
	}
	ch := make(chan struct{})
	s.inflight = ch
	s.lastAttempt = s.now()
	s.mu.Unlock()

	// Detached from the caller: a client that hangs up must not abort the fetch for everyone
	// else (the getter bounds it with its own timeout).
	keys, err := s.fetch(context.WithoutCancel(ctx))

	s.mu.Lock()
	if err == nil {
		// The provider's set as it is now: keys it dropped stop verifying here and then.
		s.missing = dropped(s.keys, keys) // refused at once from now on
		s.keys, s.fetchedAt, s.lastErr = keys, s.now(), nil
	} else {
		s.lastErr = err
	}
	s.inflight = nil
	s.mu.Unlock()
	close(ch)
	return true
}

func (s *keySet) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	u, err := s.url(ctx)
	if err != nil {
		return nil, err
	}
	body, err := s.get(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("fetching JWKS: %w", err)
	}
	keys, err := parseJWKS(body)
	if err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	return keys, nil
}

// dropped returns the kids of old that are not in current.
func dropped(old, current []jose.JSONWebKey) map[string]bool {
	var out map[string]bool
	for _, k := range old {
		if k.KeyID == "" || slices.ContainsFunc(current, func(c jose.JSONWebKey) bool { return c.KeyID == k.KeyID }) {
			continue
		}
		if out == nil {
			out = map[string]bool{}
		}
		out[k.KeyID] = true
	}
	return out
}

// parseJWKS keeps the usable verification keys: asymmetric (RSA of at least 2048 bits, ECDSA
// on P-256/384/521, Ed25519), public parts only, use "sig" or unset. Keys of unknown types are
// skipped rather than failing the set; symmetric keys are never kept.
func parseJWKS(body []byte) ([]jose.JSONWebKey, error) {
	var raw struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, errors.New("malformed key set")
	}
	var keys []jose.JSONWebKey
	for _, r := range raw.Keys {
		if len(keys) == maxKeys {
			break
		}
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(r); err != nil {
			continue
		}
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		switch pub := k.Public().Key.(type) {
		case *rsa.PublicKey:
			if pub.N.BitLen() < minRSABits {
				continue
			}
		case *ecdsa.PublicKey, ed25519.PublicKey:
		default:
			continue // symmetric or unknown
		}
		keys = append(keys, k.Public())
	}
	if len(keys) == 0 {
		return nil, errors.New("no usable key")
	}
	return keys, nil
}

// match returns the keys that fit kid and alg. With no kid, every fitting key is a candidate
// (a few at most).
func match(keys []jose.JSONWebKey, kid string, alg jose.SignatureAlgorithm) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, k := range keys {
		if kid != "" && k.KeyID != kid {
			continue
		}
		if k.Algorithm != "" && k.Algorithm != string(alg) {
			continue
		}
		if !fits(k.Key, alg) {
			continue
		}
		out = append(out, k)
		if kid == "" && len(out) == maxCandidates {
			break
		}
	}
	return out
}

// fits reports whether key can verify alg, so an RSA key is never offered an ES256 token.
func fits(key any, alg jose.SignatureAlgorithm) bool {
	switch k := key.(type) {
	case *rsa.PublicKey:
		switch alg {
		case jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512:
			return true
		}
	case *ecdsa.PublicKey:
		switch alg {
		case jose.ES256:
			return k.Curve == elliptic.P256()
		case jose.ES384:
			return k.Curve == elliptic.P384()
		case jose.ES512:
			return k.Curve == elliptic.P521()
		}
	case ed25519.PublicKey:
		return alg == jose.EdDSA
	}
	return false
}
