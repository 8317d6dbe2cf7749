-- The application role and the caller-context helpers that row-level security reads.
--
-- Migrations run as the schema owner. Every request of the server runs inside a transaction
-- that sets app.church_id, app.user_id and app.role with set_config(..., true) and then
-- SET LOCAL ROLE neemias_app (see internal/store), so row-level security applies even when
-- the pool connects as the owner. neemias_app is neither superuser nor owner of anything.

-- +goose Up

-- Roles are cluster-wide: several databases of one cluster (tests clone many) share it, and
-- two migrations may race to create it, hence the exception handler.
-- +goose StatementBegin
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'neemias_app') THEN
        CREATE ROLE neemias_app NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOBYPASSRLS;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL;
END
$$;
-- +goose StatementEnd

-- A non-superuser owner must be a member of neemias_app to SET ROLE to it.
-- +goose StatementBegin
DO $$
BEGIN
    IF NOT pg_has_role(current_user, 'neemias_app', 'MEMBER') THEN
        EXECUTE format('GRANT neemias_app TO %I', current_user);
    END IF;
END
$$;
-- +goose StatementEnd

GRANT USAGE ON SCHEMA public TO neemias_app;

-- The caller's church; NULL when unset, so every policy comparing with it matches nothing.
CREATE FUNCTION app_church_id() RETURNS uuid
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN NULLIF(current_setting('app.church_id', true), '')::uuid;

-- The caller's user id; NULL when unset.
CREATE FUNCTION app_user_id() RETURNS uuid
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN NULLIF(current_setting('app.user_id', true), '')::uuid;

-- The caller's role (ADMIN, CADASTRO, VOLUNTARIO, RESPONSAVEL); NULL when unset.
CREATE FUNCTION app_role() RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN NULLIF(current_setting('app.role', true), '');

-- True for the roles that see their whole church: ADMIN and CADASTRO.
CREATE FUNCTION app_is_staff() RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN coalesce(NULLIF(current_setting('app.role', true), '') IN ('ADMIN', 'CADASTRO'), false);

-- +goose Down
DROP FUNCTION IF EXISTS app_is_staff();
DROP FUNCTION IF EXISTS app_role();
DROP FUNCTION IF EXISTS app_user_id();
DROP FUNCTION IF EXISTS app_church_id();
REVOKE USAGE ON SCHEMA public FROM neemias_app;
-- The role itself is cluster-wide and may serve other databases: it is left in place.
