// Package oauth is Neemias MCP's built-in OAuth 2.1 authorization server, for MCP clients
// (Claude, ChatGPT, Cursor, n8n, the MCP Inspector). Hand-written; it owns no generated code.
//
// It is built on zitadel/oidc v3's op package through op.RegisterServer: the library routes and
// decodes /authorize, /token, /revoke and /jwks, validates the redirect URI, prompt, scopes,
// response type and grant type, and writes OAuth errors; our op.Server (opserver.go) does the
// rest against PostgreSQL. We implement op.Server rather than the library's Provider and
// 23-method Storage because what MCP needs sits exactly where Storage would hand control to
// the library: access tokens must be internal/tokens' RFC 9068 JWTs (typ at+jwt, the shape the
// resource server verifies; the library signs typ JWT and omits scope), `resource` must become
// `aud` (the library drops the parameter), codes and refresh tokens are kept only as hashes,
// and refresh rotation needs reuse detection. What the library lacks for MCP is added here:
//
//   - S256 only: a plain or missing code_challenge is refused (invalid_request, redirected to
//     the validated redirect URI with state and iss);
//   - RFC 8707: `resource` (absent, or an equivalent form of this server's MCP URL: case of
//     scheme and host, default port, trailing slash, the /sse alias) becomes the token's aud;
//     so does an equivalent form of an Options.ExtraResources entry (another Neemias server
//     in external provider mode that uses this one as its identity provider); anything else
//     is invalid_target, at /authorize and at /token (where the code is then not consumed);
//   - RFC 9207: `iss` in every authorization response, errors included (issEncoder and
//     redirectTo), advertised by authorization_response_iss_parameter_supported;
//   - RFC 8414 metadata at /.well-known/oauth-authorization-server (and OpenID Connect
//     discovery at /.well-known/openid-configuration), code_challenge_methods_supported
//     ["S256"], registration_endpoint;
//   - Dynamic Client Registration (RFC 7591) at /register, rate limited per address;
//   - Client ID Metadata Documents: an https client_id is resolved through the
//     ClientMetadataFetcher (internal/oauth/cimd) and its document validated again here;
//   - an empty scope gets a default (the spec's non-sensitive scopes, narrowed to the role);
//   - the audience and revocation checks of the resource server (CheckToken).
//
// Flow: /authorize (the front handler establishes the client and matches the redirect URI
// exactly, loopback on any port, before anything may redirect) stores the request and sets a
// browser-binding cookie → /login (local argon2id accounts, or the church's OpenID Connect
// provider through zitadel/oidc rp, mapped to users by issuer and subject) → /consent (client
// name, client and redirect hosts, scopes in Portuguese and English, the LGPD warning of each
// sensitive scope granted, in the spec's words; decision recorded) → a code of 60 seconds, single use → /token (code with
// PKCE; refresh with rotation). Granted scopes are always requested ∩ the role's
// (gen/scopes.Grant), and a refresh can only narrow them.
//
// /set-password (setpassword.go) is where a person redeems the one-time link an operator
// printed (internal/password keeps the codes, migration 00008) and chooses a local password,
// with the login page's headers, CSRF, cookie and rate-limit conventions.
//
// All state is in PostgreSQL (migration 00007: oauth_clients, oauth_auth_requests,
// oauth_codes, oauth_grants, oauth_refresh_tokens, oauth_consents, oauth_upstream_identities;
// signing keys in oauth_signing_keys), so any replica serves any step. The tables are closed
// to the application role that runs capability requests; this package reaches them through
// the pool, as the schema owner, like internal/tokens.KeyStore. Codes, refresh tokens, client
// secrets and the browser-binding secret are stored as SHA-256 hashes.
//
// A grant is one code redemption and every refresh from it. Its id travels in the access
// token (grant_id), so revoking it (code replay, refresh-token reuse, RFC 7009 revocation, a
// disabled account) refuses its access tokens at the resource server too.
package oauth
