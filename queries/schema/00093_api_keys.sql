-- Church API keys for REST automation (issue 13): each acts as one account of its church (its
-- role caps the key's scopes) and is accepted on /api/v1 only, never on /mcp (MCP clients use
-- OAuth). Only a SHA-256 of the secret is stored; the key is shown once, at creation.
--
-- Like the signing keys, the table is the owner's alone: keys are verified before any caller
-- exists, and the application role can neither read nor forge them.

-- +goose Up

CREATE TABLE api_keys (
    id          uuid PRIMARY KEY,
    church_id   uuid NOT NULL REFERENCES churches (id),
    user_id     uuid NOT NULL,
    name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    scopes      text[] NOT NULL,
    secret_hash bytea NOT NULL CHECK (length(secret_hash) = 32),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz,
    revoked_at  timestamptz,
    FOREIGN KEY (church_id, user_id) REFERENCES users (church_id, id) ON DELETE CASCADE
);
CREATE INDEX api_keys_church_idx ON api_keys (church_id, created_at);
REVOKE ALL ON api_keys FROM neemias_app;
ALTER TABLE api_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE api_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY api_keys_not_for_requests ON api_keys
    USING (current_user <> 'neemias_app') WITH CHECK (current_user <> 'neemias_app');

-- +goose Down
DROP TABLE api_keys;
