-- Queries of the built-in authorization server (internal/oauth). They run on the pool, as the
-- schema owner (like the signing keys): the oauth_* tables are closed to the application role.

-- name: InsertOAuthClient :exec
INSERT INTO oauth_clients (client_id, client_name, redirect_uris, grant_types, response_types,
                           application_type, token_endpoint_auth_method, client_secret_hash,
                           client_uri, logo_uri)
VALUES (sqlc.arg(client_id), sqlc.arg(client_name), sqlc.arg(redirect_uris)::text[],
        sqlc.arg(grant_types)::text[], sqlc.arg(response_types)::text[], sqlc.arg(application_type),
        sqlc.arg(token_endpoint_auth_method), sqlc.narg(client_secret_hash)::bytea,
        sqlc.narg(client_uri)::text, sqlc.narg(logo_uri)::text);

-- name: GetOAuthClient :one
SELECT client_id, client_name, redirect_uris, grant_types, response_types, application_type,
       token_endpoint_auth_method, client_secret_hash, client_uri, logo_uri
FROM oauth_clients
WHERE client_id = sqlc.arg(client_id);

-- name: TouchOAuthClient :exec
UPDATE oauth_clients SET last_used_at = now()
WHERE client_id = sqlc.arg(client_id) AND (last_used_at IS NULL OR last_used_at < now() - interval '1 hour');

-- name: InsertOAuthAuthRequest :one
INSERT INTO oauth_auth_requests (client_id, client_name, redirect_uri, state, nonce, scopes, openid,
                                 code_challenge, resource, browser_hash, expires_at, force_login, max_age)
VALUES (sqlc.arg(client_id), sqlc.arg(client_name), sqlc.arg(redirect_uri), sqlc.narg(state)::text,
        sqlc.narg(nonce)::text, sqlc.arg(scopes)::text[], sqlc.arg(openid), sqlc.arg(code_challenge),
        sqlc.arg(resource), sqlc.arg(browser_hash), sqlc.arg(expires_at), sqlc.arg(force_login),
        sqlc.narg(max_age)::integer)
RETURNING id;

-- name: GetOAuthAuthRequest :one
-- A pending authorization request, unless it has expired.
SELECT * FROM oauth_auth_requests
WHERE id = sqlc.arg(id) AND expires_at > now();

-- name: GetOAuthAuthRequestByUpstreamState :one
SELECT * FROM oauth_auth_requests
WHERE upstream_state_hash = sqlc.arg(upstream_state_hash) AND expires_at > now();

-- name: SetOAuthAuthRequestUser :execrows
-- Records who logged in; only once per request.
UPDATE oauth_auth_requests
SET user_id = sqlc.arg(user_id), church_id = sqlc.arg(church_id), role = sqlc.arg(role),
    auth_time = now(), amr = sqlc.arg(amr),
    upstream_state_hash = NULL, upstream_nonce = NULL, upstream_verifier = NULL
WHERE id = sqlc.arg(id) AND user_id IS NULL AND expires_at > now();

-- name: CountOAuthLoginFailure :one
-- Counts a failed login against the request; the caller gives up past the limit.
UPDATE oauth_auth_requests SET login_failures = login_failures + 1
WHERE id = sqlc.arg(id)
RETURNING login_failures;

-- name: SetOAuthUpstreamLogin :execrows
UPDATE oauth_auth_requests
SET upstream_state_hash = sqlc.arg(upstream_state_hash), upstream_nonce = sqlc.arg(upstream_nonce),
    upstream_verifier = sqlc.arg(upstream_verifier)
WHERE id = sqlc.arg(id) AND user_id IS NULL AND expires_at > now();

-- name: TakeOAuthAuthRequest :one
-- Consumes a logged-in request: the consent decision happens once.
DELETE FROM oauth_auth_requests
WHERE id = sqlc.arg(id) AND user_id IS NOT NULL AND expires_at > now()
RETURNING *;

-- name: InsertOAuthConsent :exec
INSERT INTO oauth_consents (church_id, user_id, client_id, client_name, redirect_uri, scopes, decision)
VALUES (sqlc.arg(church_id), sqlc.arg(user_id), sqlc.arg(client_id), sqlc.arg(client_name),
        sqlc.arg(redirect_uri), sqlc.arg(scopes)::text[], sqlc.arg(decision));

-- name: InsertOAuthCode :exec
INSERT INTO oauth_codes (code_hash, client_id, redirect_uri, code_challenge, resource, scopes, openid,
                         nonce, user_id, church_id, role, auth_time, amr, expires_at)
VALUES (sqlc.arg(code_hash), sqlc.arg(client_id), sqlc.arg(redirect_uri), sqlc.arg(code_challenge),
        sqlc.arg(resource), sqlc.arg(scopes)::text[], sqlc.arg(openid), sqlc.narg(nonce)::text,
        sqlc.arg(user_id), sqlc.arg(church_id), sqlc.arg(role), sqlc.arg(auth_time), sqlc.arg(amr),
        sqlc.arg(expires_at));

-- name: LockOAuthCode :one
-- The code, locked for the redemption transaction; expired reports the 60-second limit.
SELECT *, (expires_at <= now())::boolean AS expired
FROM oauth_codes
WHERE code_hash = sqlc.arg(code_hash)
FOR UPDATE;

-- name: UseOAuthCode :exec
UPDATE oauth_codes SET used_at = now(), grant_id = sqlc.arg(grant_id)
WHERE code_hash = sqlc.arg(code_hash) AND used_at IS NULL;

-- name: InsertOAuthGrant :one
INSERT INTO oauth_grants (client_id, user_id, church_id, scopes, resource, auth_time, expires_at)
VALUES (sqlc.arg(client_id), sqlc.arg(user_id), sqlc.arg(church_id), sqlc.arg(scopes)::text[],
        sqlc.arg(resource), sqlc.arg(auth_time), sqlc.arg(expires_at))
RETURNING id;

-- name: RevokeOAuthGrant :execrows
UPDATE oauth_grants SET revoked_at = now(), revoked_reason = sqlc.arg(reason)::text
WHERE id = sqlc.arg(id) AND revoked_at IS NULL;

-- name: OAuthGrantRevoked :one
-- Whether the access tokens of a grant must be refused: revoked, or gone (purged long after
-- its tokens expired, or its user deleted).
SELECT coalesce((SELECT revoked_at IS NOT NULL FROM oauth_grants WHERE id = sqlc.arg(id)), true)::boolean;

-- name: InsertOAuthRefreshToken :exec
INSERT INTO oauth_refresh_tokens (token_hash, grant_id, expires_at)
VALUES (sqlc.arg(token_hash), sqlc.arg(grant_id), sqlc.arg(expires_at));

-- name: LockOAuthRefreshToken :one
-- A refresh token with its grant, both locked for the refresh transaction.
SELECT rt.token_hash, rt.rotated_at, (rt.expires_at <= now())::boolean AS expired,
       g.id AS grant_id, g.client_id, g.user_id, g.church_id, g.scopes, g.resource, g.auth_time,
       g.expires_at AS grant_expires_at, (g.expires_at <= now())::boolean AS grant_expired,
       g.revoked_at
FROM oauth_refresh_tokens rt
JOIN oauth_grants g ON g.id = rt.grant_id
WHERE rt.token_hash = sqlc.arg(token_hash)
FOR UPDATE OF rt, g;

-- name: RotateOAuthRefreshToken :exec
UPDATE oauth_refresh_tokens SET rotated_at = now()
WHERE token_hash = sqlc.arg(token_hash) AND rotated_at IS NULL;

-- name: OAuthGrantOfRefreshToken :one
SELECT g.id, g.client_id
FROM oauth_refresh_tokens rt
JOIN oauth_grants g ON g.id = rt.grant_id
WHERE rt.token_hash = sqlc.arg(token_hash);

-- name: OAuthUser :one
-- A local account by id, with what a token needs: church, role and whether it is enabled
-- (and its email, which the consent page shows the person).
SELECT u.id, u.church_id, u.role, u.disabled_at, u.email
FROM users u
WHERE u.id = sqlc.arg(id);

-- name: OAuthUpstreamIdentity :one
-- The local account linked to an upstream provider's account.
SELECT u.id, u.church_id, u.role, u.disabled_at
FROM oauth_upstream_identities ui
JOIN users u ON u.church_id = ui.church_id AND u.id = ui.user_id
WHERE ui.issuer = sqlc.arg(issuer) AND ui.subject = sqlc.arg(subject);

-- name: LinkOAuthUpstreamIdentity :exec
INSERT INTO oauth_upstream_identities (issuer, subject, church_id, user_id)
VALUES (sqlc.arg(issuer), sqlc.arg(subject), sqlc.arg(church_id), sqlc.arg(user_id))
ON CONFLICT (issuer, subject) DO UPDATE SET church_id = EXCLUDED.church_id, user_id = EXCLUDED.user_id;

-- name: PurgeOAuthAuthRequests :execrows
DELETE FROM oauth_auth_requests WHERE expires_at < now() - interval '1 hour';

-- name: PurgeOAuthCodes :execrows
-- Used codes are kept a day, so a late replay still revokes its grant.
DELETE FROM oauth_codes WHERE expires_at < now() - interval '1 day';

-- name: PurgeOAuthGrants :execrows
-- Grants past their absolute lifetime (their refresh tokens go with them; their access
-- tokens expired long before).
DELETE FROM oauth_grants WHERE expires_at < now() - interval '1 day';

-- name: PurgeOAuthClients :execrows
-- Dynamically registered clients never used within a day of registering.
DELETE FROM oauth_clients WHERE last_used_at IS NULL AND created_at < now() - interval '1 day';
