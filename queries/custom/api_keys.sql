-- name: InsertAPIKey :exec
-- A new API key (neemias-mcp apikey create); only the secret's SHA-256 is kept.
INSERT INTO api_keys (id, church_id, user_id, name, scopes, secret_hash, expires_at)
VALUES (sqlc.arg(id), sqlc.arg(church_id), sqlc.arg(user_id), sqlc.arg(name), sqlc.arg(scopes)::text[],
        sqlc.arg(secret_hash), sqlc.narg(expires_at));

-- name: ListAPIKeys :many
-- A church's API keys, with the account each acts as; never the hash.
SELECT k.id, k.name, k.scopes, k.created_at, k.expires_at, k.revoked_at, u.email, u.role
FROM api_keys k
JOIN users u ON u.church_id = k.church_id AND u.id = k.user_id
WHERE k.church_id = sqlc.arg(church_id)
ORDER BY k.created_at, k.id;

-- name: RevokeAPIKey :execrows
UPDATE api_keys SET revoked_at = now()
WHERE church_id = sqlc.arg(church_id) AND id = sqlc.arg(id) AND revoked_at IS NULL;

-- name: APIKeyForVerify :one
-- What verifying a presented key needs: its hash, whether it still holds, and the account it
-- acts as (role, and whether it is enabled).
SELECT k.id, k.church_id, k.user_id, k.scopes, k.secret_hash,
       (k.revoked_at IS NOT NULL)::boolean AS revoked,
       (k.expires_at IS NOT NULL AND k.expires_at <= now())::boolean AS expired,
       u.role, (u.disabled_at IS NOT NULL)::boolean AS user_disabled
FROM api_keys k
JOIN users u ON u.church_id = k.church_id AND u.id = k.user_id
WHERE k.id = sqlc.arg(id);
