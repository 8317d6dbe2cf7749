-- Signing-key rotation for the authorization server (internal/tokens.KeyStore.Rotate).

-- name: RetireActiveSigningKey :execrows
-- Deactivates the active key; it still verifies until retire_after, by when every token it
-- signed has expired. The caller inserts the new active key in the same transaction.
UPDATE oauth_signing_keys
SET active = false, retire_after = now() + make_interval(secs => sqlc.arg(verify_for_seconds)::double precision)
WHERE active;
