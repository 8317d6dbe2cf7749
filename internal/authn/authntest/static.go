// Package authntest provides an INTERIM, TEST-ONLY token verifier: a fixed table of opaque
// bearer tokens and the principals they stand for. It exists so the protocol runtime, its
// wire-level tests and the conformance fixture server can run before the real OAuth verifier
// (another tracker issue) lands. It must never be wired into the production server: it has no
// expiry, no audience check and no revocation.
package authntest

import (
	"context"
	"crypto/subtle"
	"fmt"

	"github.com/neemias/neemias-mcp/internal/authn"
	"github.com/neemias/neemias-mcp/internal/principal"
)

// Static maps opaque tokens to principals. The zero value rejects every token.
type Static struct {
	Tokens map[string]principal.Principal
}

var _ authn.Verifier = Static{}

// Verify returns the principal of token, comparing in constant time per entry.
func (s Static) Verify(_ context.Context, token string) (principal.Principal, error) {
	for t, p := range s.Tokens {
		if subtle.ConstantTimeCompare([]byte(t), []byte(token)) == 1 {
			return p, nil
		}
	}
	return principal.Principal{}, fmt.Errorf("static verifier: unknown token: %w", authn.ErrInvalidToken)
}
