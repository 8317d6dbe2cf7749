package external

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// discoverer fetches the provider's metadata until it once succeeds, then keeps the result
// (the jwks_uri of a provider does not move while we run). Its callers (the key set's
// refresh) already bound how often it is tried.
type discoverer struct {
	issuer string
	get    *getter

	mu   sync.Mutex
	jwks string
	meta discovery
}

func (d *discoverer) jwksURI(ctx context.Context) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.jwks != "" {
		return d.jwks, nil
	}
	m, err := d.get.discover(ctx, d.issuer)
	if err != nil {
		return "", err
	}
	d.jwks, d.meta = m.JWKSURI, m
	return d.jwks, nil
}

// Endpoints returns the provider's authorization and token endpoints as its discovery
// document names them, or ok false while discovery has not succeeded yet (nothing is fetched
// here: the key set's refreshes drive discovery).
func (v *Verifier) Endpoints() (authorization, token string, ok bool) {
	v.disc.mu.Lock()
	defer v.disc.mu.Unlock()
	if v.disc.jwks == "" {
		return "", "", false
	}
	return v.disc.meta.AuthorizationEndpoint, v.disc.meta.TokenEndpoint, true
}

// Issuer is the provider's issuer identifier.
func (v *Verifier) Issuer() string { return v.issuer }

// unavailableError is a verification that could not be decided because the provider (keys,
// introspection) is unreachable; the middleware answers 503 with Retry-After.
type unavailableError struct {
	err   error
	after time.Duration
}

func (e *unavailableError) Error() string { return e.err.Error() }
func (e *unavailableError) Unwrap() error { return e.err }

// RetryAfter is how long a client should wait before trying again (at least a second).
func (e *unavailableError) RetryAfter() time.Duration { return max(e.after, time.Second) }

func unavailable(err error, after time.Duration) error {
	return &unavailableError{err: err, after: after}
}

// Ready reports whether the verifier can decide tokens now: nil once the provider's keys are
// held (cached keys keep serving while the provider is down), otherwise why not. It tries to
// fetch them (at most once per RefreshInterval), so a readiness probe also drives recovery.
// With introspection configured, the last introspection failure, if any since the last
// success, is reported too.
func (v *Verifier) Ready(ctx context.Context) error {
	if have, _ := v.keys.state(); !have {
		v.keys.refresh(ctx)
	}
	var errs []error
	if have, last := v.keys.state(); !have {
		if last == nil {
			last = errors.New("no usable key")
		}
		errs = append(errs, fmt.Errorf("%w: %w", ErrKeysUnavailable, last))
	}
	if v.intro != nil {
		if err := v.intro.lastFailure(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
