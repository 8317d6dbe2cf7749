-- The append-only audit log: who (user, OAuth client) used which capability on which records,
-- and whether it was allowed. It holds ids only, NEVER personal data: no names, birth dates,
-- phones, emails, pick-up codes or free text from requests.
--
-- Append-only twice over: the application role has no UPDATE, DELETE or TRUNCATE privilege
-- (00004), and triggers refuse those statements for everyone, the owner included. A retention
-- purge is a deliberate maintenance act: the owner disables the trigger in its own transaction.

-- +goose Up

CREATE TABLE audit_log (
    id             bigserial PRIMARY KEY,
    at             timestamptz NOT NULL DEFAULT now(),
    church_id      uuid REFERENCES churches (id),
    user_id        uuid,
    client_id      text CHECK (length(client_id) <= 200),
    capability     text NOT NULL CHECK (length(capability) BETWEEN 1 AND 100),
    action         text NOT NULL CHECK (action ~ '^[a-z][a-z0-9_.:-]{0,63}$'),
    target_ids     uuid[] NOT NULL DEFAULT '{}',
    outcome        text NOT NULL CHECK (outcome IN ('allowed', 'denied', 'error')),
    correlation_id text CHECK (length(correlation_id) <= 100)
);
CREATE INDEX audit_log_church_at_idx ON audit_log (church_id, at);

-- +goose StatementBegin
CREATE FUNCTION audit_log_append_only() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;
-- +goose StatementEnd

CREATE TRIGGER audit_log_no_update_delete
    BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();

CREATE TRIGGER audit_log_no_truncate
    BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();

-- +goose Down
DROP TABLE IF EXISTS audit_log;
DROP FUNCTION IF EXISTS audit_log_append_only();
