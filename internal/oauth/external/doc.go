// Package external is resource-server mode against an external OpenID Connect provider: it
// verifies the provider's JWT access tokens for the /mcp and /api endpoints, and maps them to
// local callers. Neemias then runs no authorization server of its own; its protected-resource
// metadata names the external issuer.
//
// NewVerifier validates the configuration and discovers the provider
// (/.well-known/openid-configuration, whose "issuer" must equal the configured one exactly); a
// provider that is merely unreachable does not stop it: discovery and keys are then fetched on
// use, Verify fails as unavailable (503 with Retry-After) until they can be had, and Ready
// reports the state for /readyz. It returns a Verifier implementing authn.Verifier. Each
// token is checked like our own tokens (internal/tokens): one compact JWS, an algorithm from an
// asymmetric allowlist (every asymmetric one by default, DefaultAlgorithms; never "none" or
// HMAC; each key offered only the algorithms of its type and curve), a key chosen only
// from the provider's JWKS by kid (jku, x5u and embedded jwk headers are ignored), the
// signature, iss, aud (this resource's URL or its trailing-slash form), exp (required), nbf and
// iat with a clock-skew allowance, the JOSE typ (at+jwt when RequireAccessTokenType; otherwise
// only at+jwt, JWT or none), and any configured claim values (an IdP's own token-type claim).
//
// The issuer is https, or http on a loopback address (Dex's dev issuer); the audience any
// string the provider writes in aud (a client id, a GUID, an api:// URI), matched exactly.
//
// Identity is keyed on iss+sub, never on e-mail: the Lookup function maps the subject to a
// local user, and an unknown subject is rejected (no auto-provisioning) as an
// authn.ErrAccessDenied, like a disabled user and provider roles mapping to two local roles:
// the token is valid, the account may not use the server (403 with a description, logged). The church and role
// come from the local user unless a claim mapping is configured; IdP role or group claims are
// ignored unless mapped. Granted scopes are the token's (a space-delimited "scope" string or a
// "scp" array) intersected with the role's scopes from the generated matrix; with
// ScopesFromRole (opt-in, for providers that mint none of ours), a token carrying none of our
// scopes gets the role's non-sensitive scopes and the sensitive ones Claims.ScopeGrants maps
// from its groups.
//
// The JWKS is fetched over https with a timeout, a size cap and no redirects, cached, and
// refreshed when a token names an unknown kid — at most once per RefreshInterval, so a flood
// of made-up kids cannot turn into a flood of fetches — and when older than KeysMaxAge (5 min);
// keys the provider dropped stop verifying at that refresh. A plausible token (our issuer and
// audience, unexpired) with a kid no refresh has looked for yet, while refreshes are rate
// limited, is ErrKeyNotYetFetched (503 with Retry-After), not invalid: it may be signed with a
// key rotated in since. When the provider is unreachable, cached
// keys keep working; with no usable key at all, Verify returns ErrKeysUnavailable, which is
// not authn.ErrInvalidToken, so the middleware answers 503 and fails closed.
//
// Opaque (non-JWT) tokens are validated by RFC 7662 introspection when configured
// (zitadel/oidc rs.Introspect, client credentials by HTTP Basic): an active access token
// (never a refresh token), our issuer when named, exp and nbf, then the same audience, claim
// and subject rules as a JWT. Active answers are cached by the token's SHA-256 until the
// token's exp or the cache TTL, whichever is first: a revocation at the provider is seen
// within the TTL. An endpoint that cannot answer is ErrIntrospectionUnavailable (503).
//
// A token without aud is refused unless Config.AcceptMissingAudience lists its client
// (client_id or azp); then it must carry one of this server's scopes, and each acceptance is
// logged and handed to OnMissingAudience (the audit log). A token whose aud names another
// resource is always refused. AuthorizationServerMetadata is the provider's metadata with
// "none" added to token_endpoint_auth_methods_supported, for the server's metadata proxy.
//
// hydratest runs ORY Hydra for tests; oidctest, a minimal issuer with failure modes.
package external
