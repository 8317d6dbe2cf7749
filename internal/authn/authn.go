// Package authn defines how the protocol runtime verifies a bearer token: a small Verifier
// interface that turns an access token into a principal.Principal. The HTTP middleware in
// internal/httpx calls it on every request; it never sees how tokens are issued.
//
// The production verifier (JWT/JWKS or the embedded authorization server) is delivered by the
// OAuth issue and lives elsewhere. Until then the only implementation is the interim, test-only
// authntest.Static.
package authn

import (
	"context"
	"errors"

	"github.com/neemias/neemias-mcp/internal/principal"
)

// ErrInvalidToken reports a token that is malformed, expired, revoked, issued for another
// audience or otherwise unacceptable. The middleware answers it with HTTP 401 and
// `WWW-Authenticate: Bearer error="invalid_token"`. Verifiers wrap it with the reason, which is
// logged server-side and never sent to the client.
var ErrInvalidToken = errors.New("invalid token")

// Verifier checks an access token and returns the caller it stands for.
//
// Verify must return an error wrapping ErrInvalidToken for any token it rejects. Any other error
// (key set unreachable, database down) is an infrastructure failure: the middleware answers 503
// and fails closed, never skipping verification.
type Verifier interface {
	Verify(ctx context.Context, token string) (principal.Principal, error)
}

// VerifierFunc adapts a function to the Verifier interface.
type VerifierFunc func(ctx context.Context, token string) (principal.Principal, error)

// Verify calls f.
func (f VerifierFunc) Verify(ctx context.Context, token string) (principal.Principal, error) {
	return f(ctx, token)
}

// ErrAccessDenied reports a token that is valid but whose holder may not use this server: a
// provider account linked to no local user, a disabled user, provider roles that map to more
// than one local role. The middleware answers 403 with `error="access_denied"` and the
// denial's description, so that a client shows why instead of sending the person through the
// provider's login again (which would mint another token of the same account), and logs it at
// warning level. Build such errors with Deny.
var ErrAccessDenied = errors.New("access denied")

// DeniedError is a denial whose Description may be shown to the caller (it names no token and
// no claim value), and whose LogAttrs (key, value pairs) go to the server log only.
type DeniedError struct {
	Description string
	LogAttrs    []any
}

func (e *DeniedError) Error() string        { return "access denied: " + e.Description }
func (e *DeniedError) Is(target error) bool { return target == ErrAccessDenied }

// Deny returns a DeniedError; attrs are slog key-value pairs for the server's log.
func Deny(description string, attrs ...any) error {
	return &DeniedError{Description: description, LogAttrs: attrs}
}
