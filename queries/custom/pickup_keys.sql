-- The keys of the pick-up codes' HMAC (migration 00103; internal/store.PickupKeys). Owner only:
-- run on the maintenance pool, never in a request's transaction.

-- name: PickupKeys :many
-- Every key, the active one included: a handful, one per rotation.
SELECT kid, secret, active FROM pickup_code_keys ORDER BY created_at, kid;

-- name: InsertPickupKey :execrows
-- Inserts the active key; a concurrent replica that lost the race to make the first inserts
-- nothing (the unique index on active), as does a rotation that lost to another.
INSERT INTO pickup_code_keys (kid, secret, active)
VALUES (sqlc.arg(kid), sqlc.arg(secret), true)
ON CONFLICT DO NOTHING;

-- name: RetireActivePickupKey :execrows
-- Deactivates the active key (tokens.KeyStore.Rotate, with the signing key). It is kept: codes
-- issued under it verify until their check-ins close.
UPDATE pickup_code_keys SET active = false WHERE active;
