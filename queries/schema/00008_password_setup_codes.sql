-- One-time set-password codes (issue 15): `neemias-mcp user add` and `user reset-password`
-- print a link <public URL>/set-password?code=… once; the person opens it and chooses a
-- password on the authorization server's page, so no password ever travels through the
-- operator or a command line. A code is 256 random bits, stored only as its SHA-256 hash (a
-- fast hash suffices for a value that cannot be guessed), bound to one account, single use
-- (used_at), revoked when a newer one is issued or the operator sets the password
-- (revoked_at), and valid until expires_at (72 hours by default). Like the oauth_* tables
-- (00007) the table belongs to the authorization server and the operator's commands alone:
-- the application role has no privilege on it and row-level security shows it nothing.
--
-- A new password ends the account's sessions: its OAuth grants are revoked with the new
-- reason password_set.

-- +goose Up
CREATE TABLE password_setup_codes (
    code_hash  bytea PRIMARY KEY CHECK (length(code_hash) = 32),
    church_id  uuid NOT NULL,
    user_id    uuid NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    revoked_at timestamptz,
    CONSTRAINT password_setup_codes_expiry_check CHECK (expires_at > created_at),
    CONSTRAINT password_setup_codes_end_check CHECK (used_at IS NULL OR revoked_at IS NULL),
    FOREIGN KEY (church_id, user_id) REFERENCES users (church_id, id) ON DELETE CASCADE
);
CREATE INDEX password_setup_codes_user_idx ON password_setup_codes (church_id, user_id)
    WHERE used_at IS NULL AND revoked_at IS NULL;
CREATE INDEX password_setup_codes_expires_idx ON password_setup_codes (expires_at);

REVOKE ALL ON password_setup_codes FROM neemias_app;
ALTER TABLE password_setup_codes ENABLE ROW LEVEL SECURITY;
ALTER TABLE password_setup_codes FORCE ROW LEVEL SECURITY;
CREATE POLICY password_setup_codes_not_for_requests ON password_setup_codes
    USING (current_user <> 'neemias_app') WITH CHECK (current_user <> 'neemias_app');

ALTER TABLE oauth_grants DROP CONSTRAINT oauth_grants_revoked_reason_check;
ALTER TABLE oauth_grants ADD CONSTRAINT oauth_grants_revoked_reason_check
    CHECK (revoked_reason IN ('code_replay', 'refresh_reuse', 'revoked', 'user_disabled', 'password_set'));

-- +goose Down
UPDATE oauth_grants SET revoked_reason = 'revoked' WHERE revoked_reason = 'password_set';
ALTER TABLE oauth_grants DROP CONSTRAINT oauth_grants_revoked_reason_check;
ALTER TABLE oauth_grants ADD CONSTRAINT oauth_grants_revoked_reason_check
    CHECK (revoked_reason IN ('code_replay', 'refresh_reuse', 'revoked', 'user_disabled'));
DROP TABLE password_setup_codes;
