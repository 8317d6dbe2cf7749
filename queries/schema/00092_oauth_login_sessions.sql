-- Login sessions of the built-in authorization server (issue 9): after a password or provider
-- login, the browser gets a short session cookie, so a step-up (a new authorization request
-- for more scopes) skips the password prompt; the consent page is still shown for every
-- request. The cookie holds 256 random bits; only their SHA-256 hash is stored, so a
-- database reader cannot act as anyone. Every replica reads the same rows.
--
-- A session is bound to one account and ends at logout, after idle_expires_at (sliding) or
-- expires_at (absolute), and as soon as the account changes: every use compares the account's
-- role and a fingerprint of its password hash (credential_fp, the SHA-256 of the stored
-- argon2id string) with the ones recorded at login, and requires the account to be enabled,
-- so a new password, a role change or a disabled account ends it on every replica at once.
--
-- oauth_auth_requests.force_login and max_age carry OpenID Connect prompt=login and max_age
-- to the login page, where a session may not be used to skip the password then.

-- +goose Up
CREATE TABLE oauth_login_sessions (
    id_hash         bytea PRIMARY KEY CHECK (length(id_hash) = 32),
    church_id       uuid NOT NULL,
    user_id         uuid NOT NULL,
    role            text NOT NULL CHECK (role IN ('ADMIN', 'CADASTRO', 'VOLUNTARIO', 'RESPONSAVEL')),
    credential_fp   bytea NOT NULL CHECK (length(credential_fp) = 32),
    amr             text NOT NULL CHECK (amr IN ('pwd', 'fed')),
    auth_time       timestamptz NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    last_used_at    timestamptz NOT NULL DEFAULT now(),
    idle_expires_at timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL,
    CONSTRAINT oauth_login_sessions_expiry_check CHECK (idle_expires_at <= expires_at AND expires_at > created_at),
    FOREIGN KEY (church_id, user_id) REFERENCES users (church_id, id) ON DELETE CASCADE
);
CREATE INDEX oauth_login_sessions_user_idx ON oauth_login_sessions (church_id, user_id);
CREATE INDEX oauth_login_sessions_expires_idx ON oauth_login_sessions (expires_at);

REVOKE ALL ON oauth_login_sessions FROM neemias_app;
ALTER TABLE oauth_login_sessions ENABLE ROW LEVEL SECURITY;
ALTER TABLE oauth_login_sessions FORCE ROW LEVEL SECURITY;
CREATE POLICY oauth_login_sessions_not_for_requests ON oauth_login_sessions
    USING (current_user <> 'neemias_app') WITH CHECK (current_user <> 'neemias_app');

ALTER TABLE oauth_auth_requests ADD COLUMN force_login boolean NOT NULL DEFAULT false;
ALTER TABLE oauth_auth_requests ADD COLUMN max_age integer CHECK (max_age >= 0);

-- +goose Down
ALTER TABLE oauth_auth_requests DROP COLUMN max_age;
ALTER TABLE oauth_auth_requests DROP COLUMN force_login;
DROP TABLE oauth_login_sessions;
