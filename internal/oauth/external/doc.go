// Package external is resource-server mode against an external OpenID Connect provider: it
// verifies the provider's JWT access tokens for the /mcp and /api endpoints, and maps them to
// local callers. Neemias then runs no authorization server of its own; its protected-resource
// metadata names the external issuer.
//
// NewVerifier discovers the provider (/.well-known/openid-configuration, whose "issuer" must
// equal the configured one exactly) and returns a Verifier implementing authn.Verifier. Each
// token is checked like our own tokens (internal/tokens): one compact JWS, an algorithm from an
// asymmetric allowlist (RS256 and ES256 by default; never "none" or HMAC), a key chosen only
// from the provider's JWKS by kid (jku, x5u and embedded jwk headers are ignored), the
// signature, iss, aud (this resource's URL or its trailing-slash form), exp (required), nbf and
// iat with a clock-skew allowance, the JOSE typ (at+jwt when RequireAccessTokenType; otherwise
// only at+jwt, JWT or none), and any configured claim values (an IdP's own token-type claim).
//
// Identity is keyed on iss+sub, never on e-mail: the Lookup function maps the subject to a
// local user, and an unknown subject is rejected (no auto-provisioning). The church and role
// come from the local user unless a claim mapping is configured; IdP role or group claims are
// ignored unless mapped. Granted scopes are the token's (a space-delimited "scope" string or a
// "scp" array) intersected with the role's scopes from the generated matrix.
//
// The JWKS is fetched over https with a timeout, a size cap and no redirects, cached, and
// refreshed when a token names an unknown kid — at most once per RefreshInterval, so a flood
// of made-up kids cannot turn into a flood of fetches. When the provider is unreachable, cached
// keys keep working; with no usable key at all, Verify returns ErrKeysUnavailable, which is
// not authn.ErrInvalidToken, so the middleware answers 503 and fails closed.
package external
