-- Signing keys of the access tokens this server issues (internal/tokens). Every replica reads
-- the same keys, so a token minted by one verifies at all. Rotation: insert a new key and mark
-- it active; old keys stay for verification until every token they signed has expired
-- (retire_after). Private keys are PEM text readable only by the owner, never by the
-- application role that runs requests.

-- +goose Up
CREATE TABLE oauth_signing_keys (
    kid          text PRIMARY KEY CHECK (kid ~ '^[0-9a-f]{16}$'),
    algorithm    text NOT NULL DEFAULT 'RS256' CHECK (algorithm = 'RS256'),
    private_pem  text NOT NULL,
    public_pem   text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    active       boolean NOT NULL DEFAULT true,
    retire_after timestamptz
);
-- At most one active key.
CREATE UNIQUE INDEX oauth_signing_keys_one_active ON oauth_signing_keys (active) WHERE active;
REVOKE ALL ON oauth_signing_keys FROM neemias_app;
-- Belt and braces: even if a grant slips in, request transactions (SET ROLE neemias_app) see
-- no key. Only the owner's maintenance connection reads them.
ALTER TABLE oauth_signing_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE oauth_signing_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY signing_keys_not_for_requests ON oauth_signing_keys
    USING (current_user <> 'neemias_app') WITH CHECK (current_user <> 'neemias_app');

-- +goose Down
DROP TABLE oauth_signing_keys;
