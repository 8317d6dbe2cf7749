-- The built-in OAuth 2.1 authorization server (internal/oauth): registered clients, pending
-- authorization requests, authorization codes, grants with their refresh tokens, the consent
-- evidence and the links of upstream identity-provider accounts to local users. Every replica
-- reads and writes the same rows, so any replica serves any step of a flow.
--
-- Secrets are never stored: codes, refresh tokens, client secrets and the browser-binding
-- cookie are kept as SHA-256 hashes of 256-bit random values (a fast hash is enough for values
-- that cannot be guessed). Like the signing keys (00006), these tables belong to the
-- authorization server alone: the application role that runs capability requests has no
-- privilege on them and row-level security shows it nothing, so no capability query can read
-- or forge a grant.

-- +goose Up

-- Clients registered through Dynamic Client Registration (RFC 7591) or by an operator.
-- Clients identified by a Client ID Metadata Document (an https client_id) are not stored:
-- the document is their registration. client_id is chosen by the server and never looks like
-- a URL, so it cannot be mistaken for a metadata-document client.
CREATE TABLE oauth_clients (
    client_id                  text PRIMARY KEY CHECK (client_id ~ '^[A-Za-z0-9_-]{16,64}$'),
    client_name                text NOT NULL CHECK (length(client_name) BETWEEN 1 AND 200),
    redirect_uris              text[] NOT NULL CHECK (cardinality(redirect_uris) BETWEEN 1 AND 10),
    grant_types                text[] NOT NULL CHECK (grant_types <@ ARRAY['authorization_code', 'refresh_token']),
    response_types             text[] NOT NULL CHECK (response_types <@ ARRAY['code']),
    application_type           text NOT NULL CHECK (application_type IN ('web', 'native')),
    token_endpoint_auth_method text NOT NULL
        CHECK (token_endpoint_auth_method IN ('none', 'client_secret_basic', 'client_secret_post')),
    client_secret_hash         bytea CHECK (length(client_secret_hash) = 32),
    client_uri                 text CHECK (length(client_uri) <= 2000),
    logo_uri                   text CHECK (length(logo_uri) <= 2000),
    created_at                 timestamptz NOT NULL DEFAULT now(),
    -- Set on every successful code redemption; registrations never used expire (purge).
    last_used_at               timestamptz,
    CONSTRAINT oauth_clients_secret_check
        CHECK ((token_endpoint_auth_method = 'none') = (client_secret_hash IS NULL))
);
CREATE INDEX oauth_clients_unused_idx ON oauth_clients (created_at) WHERE last_used_at IS NULL;

-- Authorization requests between /authorize and the consent decision (at most 10 minutes).
-- The id is the handle the login and consent pages carry; browser_hash binds the request to
-- the browser that started it (the hash of a cookie set by /authorize), so a link with
-- someone else's id is useless. The user columns are set by the login.
CREATE TABLE oauth_auth_requests (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    client_id           text NOT NULL CHECK (length(client_id) BETWEEN 1 AND 2000),
    client_name         text NOT NULL CHECK (length(client_name) BETWEEN 1 AND 200),
    redirect_uri        text NOT NULL CHECK (length(redirect_uri) BETWEEN 1 AND 2000),
    state               text CHECK (length(state) <= 1000),
    nonce               text CHECK (length(nonce) <= 1000),
    -- The domain scopes requested (after the default for an empty request); openid and
    -- offline_access are protocol scopes kept apart.
    scopes              text[] NOT NULL,
    openid              boolean NOT NULL DEFAULT false,
    code_challenge      text NOT NULL CHECK (code_challenge ~ '^[A-Za-z0-9_-]{43}$'),
    resource            text NOT NULL CHECK (length(resource) BETWEEN 1 AND 2000),
    browser_hash        bytea NOT NULL CHECK (length(browser_hash) = 32),
    user_id             uuid,
    church_id           uuid,
    role                text CHECK (role IN ('ADMIN', 'CADASTRO', 'VOLUNTARIO', 'RESPONSAVEL')),
    auth_time           timestamptz,
    amr                 text CHECK (amr IN ('pwd', 'fed')),
    login_failures      integer NOT NULL DEFAULT 0 CHECK (login_failures >= 0),
    -- An upstream identity-provider login in progress: the hash of its state, its nonce and
    -- its PKCE verifier (the verifier is a secret, but only for the upstream's code, which is
    -- useless without our client's credentials).
    upstream_state_hash bytea UNIQUE CHECK (length(upstream_state_hash) = 32),
    upstream_nonce      text CHECK (length(upstream_nonce) <= 200),
    upstream_verifier   text CHECK (length(upstream_verifier) <= 200),
    created_at          timestamptz NOT NULL DEFAULT now(),
    expires_at          timestamptz NOT NULL,
    CONSTRAINT oauth_auth_requests_user_check
        CHECK ((user_id IS NULL) = (church_id IS NULL) AND (user_id IS NULL) = (role IS NULL)
               AND (user_id IS NULL) = (auth_time IS NULL)),
    FOREIGN KEY (church_id, user_id) REFERENCES users (church_id, id) ON DELETE CASCADE
);
CREATE INDEX oauth_auth_requests_expires_idx ON oauth_auth_requests (expires_at);

-- Grants: one successful code redemption and everything refreshed from it (a refresh-token
-- family). Revoking the grant invalidates its refresh tokens and, through the resource
-- server's check of the access token's grant_id claim, its access tokens: code replay and
-- refresh-token reuse revoke it. scopes never grow: refreshes may only narrow them.
CREATE TABLE oauth_grants (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    client_id      text NOT NULL CHECK (length(client_id) BETWEEN 1 AND 2000),
    user_id        uuid NOT NULL,
    church_id      uuid NOT NULL,
    scopes         text[] NOT NULL,
    resource       text NOT NULL CHECK (length(resource) BETWEEN 1 AND 2000),
    auth_time      timestamptz NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    -- Absolute lifetime of the family: no refresh past it.
    expires_at     timestamptz NOT NULL,
    revoked_at     timestamptz,
    revoked_reason text CHECK (revoked_reason IN ('code_replay', 'refresh_reuse', 'revoked', 'user_disabled')),
    CONSTRAINT oauth_grants_revoked_check CHECK ((revoked_at IS NULL) = (revoked_reason IS NULL)),
    FOREIGN KEY (church_id, user_id) REFERENCES users (church_id, id) ON DELETE CASCADE
);
CREATE INDEX oauth_grants_expires_idx ON oauth_grants (expires_at);

-- Authorization codes: single use, valid for 60 seconds. A used code is kept (used_at and the
-- grant it created) until purged, so a replay can revoke that grant.
CREATE TABLE oauth_codes (
    code_hash      bytea PRIMARY KEY CHECK (length(code_hash) = 32),
    client_id      text NOT NULL CHECK (length(client_id) BETWEEN 1 AND 2000),
    redirect_uri   text NOT NULL CHECK (length(redirect_uri) BETWEEN 1 AND 2000),
    code_challenge text NOT NULL CHECK (code_challenge ~ '^[A-Za-z0-9_-]{43}$'),
    resource       text NOT NULL CHECK (length(resource) BETWEEN 1 AND 2000),
    scopes         text[] NOT NULL,
    openid         boolean NOT NULL,
    nonce          text CHECK (length(nonce) <= 1000),
    user_id        uuid NOT NULL,
    church_id      uuid NOT NULL,
    role           text NOT NULL CHECK (role IN ('ADMIN', 'CADASTRO', 'VOLUNTARIO', 'RESPONSAVEL')),
    auth_time      timestamptz NOT NULL,
    amr            text NOT NULL CHECK (amr IN ('pwd', 'fed')),
    created_at     timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz NOT NULL,
    used_at        timestamptz,
    grant_id       uuid REFERENCES oauth_grants (id) ON DELETE SET NULL,
    FOREIGN KEY (church_id, user_id) REFERENCES users (church_id, id) ON DELETE CASCADE
);
CREATE INDEX oauth_codes_expires_idx ON oauth_codes (expires_at);
CREATE INDEX oauth_codes_grant_idx ON oauth_codes (grant_id);

-- Refresh tokens, rotated on every use: the used one gets rotated_at and a new one is issued
-- in the same grant. Presenting a rotated token again is reuse: the grant is revoked.
CREATE TABLE oauth_refresh_tokens (
    token_hash bytea PRIMARY KEY CHECK (length(token_hash) = 32),
    grant_id   uuid NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    rotated_at timestamptz
);
CREATE INDEX oauth_refresh_tokens_grant_idx ON oauth_refresh_tokens (grant_id);

-- Consent decisions, as evidence (LGPD art. 8: the controller proves consent): who allowed or
-- refused which client which scopes, for which redirect URI, when. Append-only by use.
CREATE TABLE oauth_consents (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    church_id    uuid NOT NULL,
    user_id      uuid NOT NULL,
    client_id    text NOT NULL CHECK (length(client_id) BETWEEN 1 AND 2000),
    client_name  text NOT NULL CHECK (length(client_name) BETWEEN 1 AND 200),
    redirect_uri text NOT NULL CHECK (length(redirect_uri) BETWEEN 1 AND 2000),
    scopes       text[] NOT NULL,
    decision     text NOT NULL CHECK (decision IN ('approved', 'denied')),
    decided_at   timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (church_id, user_id) REFERENCES users (church_id, id) ON DELETE CASCADE
);
CREATE INDEX oauth_consents_user_idx ON oauth_consents (church_id, user_id, decided_at);

-- Accounts of an upstream OpenID Connect provider linked to local users, by the provider's
-- issuer and the account's subject: never by email, which the provider may let anyone set.
-- An unlinked upstream account logs in nowhere (no automatic provisioning).
CREATE TABLE oauth_upstream_identities (
    issuer     text NOT NULL CHECK (length(issuer) BETWEEN 1 AND 2000),
    subject    text NOT NULL CHECK (length(subject) BETWEEN 1 AND 255),
    church_id  uuid NOT NULL,
    user_id    uuid NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (issuer, subject),
    FOREIGN KEY (church_id, user_id) REFERENCES users (church_id, id) ON DELETE CASCADE
);
CREATE INDEX oauth_upstream_identities_user_idx ON oauth_upstream_identities (church_id, user_id);

-- +goose StatementBegin
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['oauth_clients', 'oauth_auth_requests', 'oauth_grants', 'oauth_codes',
                             'oauth_refresh_tokens', 'oauth_consents', 'oauth_upstream_identities']
    LOOP
        EXECUTE format('REVOKE ALL ON %I FROM neemias_app', t);
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY %I ON %I USING (current_user <> %L) WITH CHECK (current_user <> %L)',
                       t || '_not_for_requests', t, 'neemias_app', 'neemias_app');
    END LOOP;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP TABLE oauth_upstream_identities;
DROP TABLE oauth_consents;
DROP TABLE oauth_refresh_tokens;
DROP TABLE oauth_codes;
DROP TABLE oauth_grants;
DROP TABLE oauth_auth_requests;
DROP TABLE oauth_clients;
