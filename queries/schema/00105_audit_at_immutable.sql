-- The audit log's time is the database's (issue 24). The application role may insert entries
-- (00110: about itself only), and until now it could name their `at`: a backdated entry, or
-- one dated in the future, would read as a fact of another moment. Now `at` is set by the
-- database on every insert, whatever the statement gives (the column's DEFAULT only applied
-- when it gave none), for every role, the owner included; and an UPDATE that changes `at` is
-- refused even where the append-only trigger of 00003 is disabled for a retention purge.
-- Numbers 00102-00104 are another change's.

-- +goose Up

-- +goose StatementBegin
CREATE FUNCTION audit_log_stamp_at() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    NEW.at := now();
    RETURN NEW;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION audit_log_at_immutable() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    IF NEW.at IS DISTINCT FROM OLD.at THEN
        RAISE EXCEPTION 'audit_log.at is set by the database and cannot be changed'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER audit_log_stamp_at
    BEFORE INSERT ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_stamp_at();

CREATE TRIGGER audit_log_at_immutable
    BEFORE UPDATE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_at_immutable();

-- +goose Down
DROP TRIGGER IF EXISTS audit_log_at_immutable ON audit_log;
DROP TRIGGER IF EXISTS audit_log_stamp_at ON audit_log;
DROP FUNCTION IF EXISTS audit_log_at_immutable();
DROP FUNCTION IF EXISTS audit_log_stamp_at();
