-- name: ActiveSigningKey :one
SELECT kid, private_pem FROM oauth_signing_keys WHERE active LIMIT 1;

-- name: InsertSigningKey :execrows
-- Inserts the first active key; a concurrent replica that lost the race inserts nothing.
INSERT INTO oauth_signing_keys (kid, private_pem, public_pem, active)
VALUES (sqlc.arg(kid), sqlc.arg(private_pem), sqlc.arg(public_pem), true)
ON CONFLICT DO NOTHING;

-- name: PublicSigningKey :one
SELECT public_pem FROM oauth_signing_keys
WHERE kid = sqlc.arg(kid) AND (retire_after IS NULL OR retire_after > now());

-- name: PublicSigningKeys :many
SELECT kid, public_pem FROM oauth_signing_keys
WHERE retire_after IS NULL OR retire_after > now()
ORDER BY created_at;
