-- One-time set-password codes (migration 00008; internal/onboard issues and redeems them, the
-- authorization server's /set-password page is their front). Run in the maintenance context.

-- name: RevokePasswordSetupCodes :execrows
-- Revokes the account's codes that could still be used (a newer one replaces them, or the
-- operator set the password).
UPDATE password_setup_codes SET revoked_at = now()
WHERE church_id = sqlc.arg(church_id)::uuid AND user_id = sqlc.arg(user_id)::uuid
  AND used_at IS NULL AND revoked_at IS NULL AND expires_at > now();

-- name: InsertPasswordSetupCode :one
INSERT INTO password_setup_codes (code_hash, church_id, user_id, expires_at)
VALUES (sqlc.arg(code_hash)::bytea, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid,
        now() + make_interval(secs => sqlc.arg(ttl_seconds)::double precision))
RETURNING expires_at;

-- name: PurgePasswordSetupCodes :execrows
-- Forgets codes expired for more than 30 days (the audit log keeps who issued and used them).
DELETE FROM password_setup_codes WHERE expires_at < now() - interval '30 days';

-- name: GetPasswordSetupCode :one
-- The code with this hash and its account; usable is false once it is used, revoked or
-- expired, or the account disabled.
SELECT c.church_id, c.user_id, u.email,
       (c.used_at IS NULL AND c.revoked_at IS NULL AND c.expires_at > now() AND u.disabled_at IS NULL)::boolean AS usable
FROM password_setup_codes c
JOIN users u ON u.church_id = c.church_id AND u.id = c.user_id
WHERE c.code_hash = sqlc.arg(code_hash)::bytea;

-- name: LockPasswordSetupCode :one
-- GetPasswordSetupCode, locking the code's row until the transaction ends (one redemption).
SELECT c.church_id, c.user_id, u.email,
       (c.used_at IS NULL AND c.revoked_at IS NULL AND c.expires_at > now() AND u.disabled_at IS NULL)::boolean AS usable
FROM password_setup_codes c
JOIN users u ON u.church_id = c.church_id AND u.id = c.user_id
WHERE c.code_hash = sqlc.arg(code_hash)::bytea
FOR UPDATE OF c;

-- name: UsePasswordSetupCode :execrows
UPDATE password_setup_codes SET used_at = now()
WHERE code_hash = sqlc.arg(code_hash)::bytea AND used_at IS NULL AND revoked_at IS NULL;

-- name: SetUserPasswordHash :execrows
-- Sets an enabled account's argon2id password hash (store.HashPassword).
UPDATE users SET password_hash = sqlc.arg(password_hash)::text
WHERE church_id = sqlc.arg(church_id)::uuid AND id = sqlc.arg(user_id)::uuid AND disabled_at IS NULL;

-- name: RevokeUserOAuthGrants :execrows
-- Ends the account's sessions: its live grants (so their refresh and access tokens) ...
UPDATE oauth_grants SET revoked_at = now(), revoked_reason = sqlc.arg(reason)::text
WHERE church_id = sqlc.arg(church_id)::uuid AND user_id = sqlc.arg(user_id)::uuid AND revoked_at IS NULL;

-- name: DeleteUserOAuthLogins :execrows
-- ... its logins waiting for consent ...
DELETE FROM oauth_auth_requests
WHERE church_id = sqlc.arg(church_id)::uuid AND user_id = sqlc.arg(user_id)::uuid;

-- name: DeleteUserOAuthCodes :execrows
-- ... and its authorization codes not redeemed yet.
DELETE FROM oauth_codes
WHERE church_id = sqlc.arg(church_id)::uuid AND user_id = sqlc.arg(user_id)::uuid AND used_at IS NULL;
