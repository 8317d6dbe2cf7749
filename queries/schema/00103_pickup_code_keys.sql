-- Pick-up codes under a server key (issue 24). checkins kept SHA-256(salt || code) with the
-- salt beside it: about 1.7 million codes, so anyone who could read checkins (a backup of the
-- table, a replica granted it, a request's own role) tested every code of every open check-in
-- offline in a second. A code is now stored as HMAC-SHA256(key, salt || code) under a key of
-- pickup_code_keys, readable, like the signing keys, only by the owner's maintenance connection
-- (the server process loads it): reading checkins alone no longer tests a code.
--
-- Keys rotate with the signing keys (tokens.KeyStore.Rotate: `neemias-mcp keys rotate` makes a
-- pick-up key with the new signing key's kid, in the same transaction); the first is made on
-- first use. Every check-in names the key of its hash (pickup_key_id), so a code issued before
-- a rotation still verifies until the child goes home: old keys stay, and the foreign key
-- keeps a key that a check-in names from being deleted. pickup_key_id NULL is a hash written
-- before this migration, unkeyed, which still verifies, so a child checked in while the server
-- is upgraded goes home with the code the guardian holds; every new hash is keyed.

-- +goose Up
CREATE TABLE pickup_code_keys (
    kid        text PRIMARY KEY CHECK (kid ~ '^[0-9a-f]{16}$'),
    secret     bytea NOT NULL CHECK (length(secret) = 32),
    created_at timestamptz NOT NULL DEFAULT now(),
    active     boolean NOT NULL DEFAULT true
);
-- At most one active key: new codes are hashed under it.
CREATE UNIQUE INDEX pickup_code_keys_one_active ON pickup_code_keys (active) WHERE active;
REVOKE ALL ON pickup_code_keys FROM neemias_app;
ALTER TABLE pickup_code_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE pickup_code_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY pickup_code_keys_not_for_requests ON pickup_code_keys
    USING (current_user <> 'neemias_app') WITH CHECK (current_user <> 'neemias_app');

ALTER TABLE checkins ADD COLUMN pickup_key_id text REFERENCES pickup_code_keys (kid);

-- +goose Down
ALTER TABLE checkins DROP COLUMN IF EXISTS pickup_key_id;
DROP TABLE IF EXISTS pickup_code_keys;
