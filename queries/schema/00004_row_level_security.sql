-- Row-level security: tenant isolation and the guardian and volunteer row filters, enforced by
-- PostgreSQL itself, so a query that forgot its WHERE clause still returns nothing the caller
-- may not see. This migration turns it on: the application role's table privileges, ENABLE
-- and FORCE ROW LEVEL SECURITY on the tenant tables, the owner's maintenance policies, and the
-- login function. The policies of the request role, the rules of who sees and writes what,
-- are in 00110_rls_policies.sql (repeatable), with the bodies of the visibility helpers
-- declared here.
--
-- FORCE ROW LEVEL SECURITY makes the owner subject to the policies too: the *_owner policies
-- keep the maintenance context (migrations, seed), which runs as the owner without SET ROLE,
-- able to see everything; a superuser owner bypasses RLS anyway.

-- +goose Up

-- The visibility helpers the policies call (SECURITY DEFINER there, so that the policies of
-- children, guardian_children and guardians, which read each other's tables, never recurse),
-- declared with an empty result: their bodies are in 00110, which replaces these. Declared
-- here so that the migrations before 00110 may refer to them (00096's app_pickup_restriction
-- calls app_visible_child_ids); until 00110 runs they admit nothing.
CREATE FUNCTION app_assigned_class_ids() RETURNS SETOF uuid
    LANGUAGE sql STABLE
AS $$ SELECT NULL::uuid WHERE false $$;
CREATE FUNCTION app_guardian_child_ids() RETURNS SETOF uuid
    LANGUAGE sql STABLE
AS $$ SELECT NULL::uuid WHERE false $$;
CREATE FUNCTION app_visible_child_ids() RETURNS SETOF uuid
    LANGUAGE sql STABLE
AS $$ SELECT NULL::uuid WHERE false $$;
CREATE FUNCTION app_visible_guardian_ids() RETURNS SETOF uuid
    LANGUAGE sql STABLE
AS $$ SELECT NULL::uuid WHERE false $$;

-- Login: the accounts with this email, in any church, before any caller context exists.
-- The only way the application role reads password hashes (it has no SELECT on that column).
CREATE FUNCTION app_login_candidates(login_email text) RETURNS SETOF users
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
    SELECT u.*
    FROM users u
    WHERE u.email = lower(btrim(login_email)) AND u.disabled_at IS NULL
    ORDER BY u.church_id
$$;

REVOKE ALL ON FUNCTION app_assigned_class_ids(), app_guardian_child_ids(), app_visible_child_ids(),
    app_visible_guardian_ids(), app_login_candidates(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION app_assigned_class_ids(), app_guardian_child_ids(), app_visible_child_ids(),
    app_visible_guardian_ids(), app_login_candidates(text) TO neemias_app;

-- Table privileges of the application role: no DELETE anywhere but volunteer assignments,
-- UPDATE only on the columns the capabilities change, no password hashes.
GRANT SELECT ON churches TO neemias_app;
GRANT SELECT (id, church_id, email, display_name, role, created_at, disabled_at) ON users TO neemias_app;
GRANT SELECT, INSERT, UPDATE ON classes TO neemias_app;
GRANT SELECT, INSERT, DELETE ON volunteer_assignments TO neemias_app;
GRANT SELECT, INSERT ON children TO neemias_app;
GRANT UPDATE (name, birth_date, class_id, archived_at) ON children TO neemias_app;
GRANT SELECT, INSERT ON guardians TO neemias_app;
GRANT UPDATE (name, phone) ON guardians TO neemias_app;
GRANT SELECT, INSERT ON guardian_children TO neemias_app;
GRANT SELECT, INSERT ON consent_records TO neemias_app;
GRANT UPDATE (revoked_at) ON consent_records TO neemias_app;
GRANT SELECT, INSERT ON service_days TO neemias_app;
GRANT SELECT, INSERT ON checkins TO neemias_app;
GRANT UPDATE (failed_pickup_attempts, locked_at, checked_out_at, checked_out_by) ON checkins TO neemias_app;
GRANT SELECT, INSERT ON audit_log TO neemias_app;
GRANT USAGE ON SEQUENCE audit_log_id_seq TO neemias_app;
REVOKE UPDATE, DELETE, TRUNCATE ON audit_log FROM neemias_app;

ALTER TABLE churches ENABLE ROW LEVEL SECURITY;
ALTER TABLE churches FORCE ROW LEVEL SECURITY;
ALTER TABLE users ENABLE ROW LEVEL SECURITY;
ALTER TABLE users FORCE ROW LEVEL SECURITY;
ALTER TABLE classes ENABLE ROW LEVEL SECURITY;
ALTER TABLE classes FORCE ROW LEVEL SECURITY;
ALTER TABLE volunteer_assignments ENABLE ROW LEVEL SECURITY;
ALTER TABLE volunteer_assignments FORCE ROW LEVEL SECURITY;
ALTER TABLE children ENABLE ROW LEVEL SECURITY;
ALTER TABLE children FORCE ROW LEVEL SECURITY;
ALTER TABLE guardians ENABLE ROW LEVEL SECURITY;
ALTER TABLE guardians FORCE ROW LEVEL SECURITY;
ALTER TABLE guardian_children ENABLE ROW LEVEL SECURITY;
ALTER TABLE guardian_children FORCE ROW LEVEL SECURITY;
ALTER TABLE consent_records ENABLE ROW LEVEL SECURITY;
ALTER TABLE consent_records FORCE ROW LEVEL SECURITY;
ALTER TABLE service_days ENABLE ROW LEVEL SECURITY;
ALTER TABLE service_days FORCE ROW LEVEL SECURITY;
ALTER TABLE checkins ENABLE ROW LEVEL SECURITY;
ALTER TABLE checkins FORCE ROW LEVEL SECURITY;
ALTER TABLE audit_log ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_log FORCE ROW LEVEL SECURITY;

-- The maintenance context: the owner (the role running this migration) sees and writes all.
-- The request role's policies are 00110's.
CREATE POLICY churches_owner ON churches TO CURRENT_USER USING (true) WITH CHECK (true);
CREATE POLICY users_owner ON users TO CURRENT_USER USING (true) WITH CHECK (true);
CREATE POLICY classes_owner ON classes TO CURRENT_USER USING (true) WITH CHECK (true);
CREATE POLICY volunteer_assignments_owner ON volunteer_assignments TO CURRENT_USER USING (true) WITH CHECK (true);
CREATE POLICY children_owner ON children TO CURRENT_USER USING (true) WITH CHECK (true);
CREATE POLICY guardians_owner ON guardians TO CURRENT_USER USING (true) WITH CHECK (true);
CREATE POLICY guardian_children_owner ON guardian_children TO CURRENT_USER USING (true) WITH CHECK (true);
CREATE POLICY consent_records_owner ON consent_records TO CURRENT_USER USING (true) WITH CHECK (true);
CREATE POLICY service_days_owner ON service_days TO CURRENT_USER USING (true) WITH CHECK (true);
CREATE POLICY checkins_owner ON checkins TO CURRENT_USER USING (true) WITH CHECK (true);
CREATE POLICY audit_log_owner ON audit_log TO CURRENT_USER USING (true) WITH CHECK (true);

-- +goose Down
DROP POLICY IF EXISTS audit_log_owner ON audit_log;
DROP POLICY IF EXISTS checkins_owner ON checkins;
DROP POLICY IF EXISTS service_days_owner ON service_days;
DROP POLICY IF EXISTS consent_records_owner ON consent_records;
DROP POLICY IF EXISTS guardian_children_owner ON guardian_children;
DROP POLICY IF EXISTS guardians_owner ON guardians;
DROP POLICY IF EXISTS children_owner ON children;
DROP POLICY IF EXISTS volunteer_assignments_owner ON volunteer_assignments;
DROP POLICY IF EXISTS classes_owner ON classes;
DROP POLICY IF EXISTS users_owner ON users;
DROP POLICY IF EXISTS churches_owner ON churches;
ALTER TABLE audit_log NO FORCE ROW LEVEL SECURITY;
ALTER TABLE audit_log DISABLE ROW LEVEL SECURITY;
ALTER TABLE checkins NO FORCE ROW LEVEL SECURITY;
ALTER TABLE checkins DISABLE ROW LEVEL SECURITY;
ALTER TABLE service_days NO FORCE ROW LEVEL SECURITY;
ALTER TABLE service_days DISABLE ROW LEVEL SECURITY;
ALTER TABLE consent_records NO FORCE ROW LEVEL SECURITY;
ALTER TABLE consent_records DISABLE ROW LEVEL SECURITY;
ALTER TABLE guardian_children NO FORCE ROW LEVEL SECURITY;
ALTER TABLE guardian_children DISABLE ROW LEVEL SECURITY;
ALTER TABLE guardians NO FORCE ROW LEVEL SECURITY;
ALTER TABLE guardians DISABLE ROW LEVEL SECURITY;
ALTER TABLE children NO FORCE ROW LEVEL SECURITY;
ALTER TABLE children DISABLE ROW LEVEL SECURITY;
ALTER TABLE volunteer_assignments NO FORCE ROW LEVEL SECURITY;
ALTER TABLE volunteer_assignments DISABLE ROW LEVEL SECURITY;
ALTER TABLE classes NO FORCE ROW LEVEL SECURITY;
ALTER TABLE classes DISABLE ROW LEVEL SECURITY;
ALTER TABLE users NO FORCE ROW LEVEL SECURITY;
ALTER TABLE users DISABLE ROW LEVEL SECURITY;
ALTER TABLE churches NO FORCE ROW LEVEL SECURITY;
ALTER TABLE churches DISABLE ROW LEVEL SECURITY;
REVOKE ALL ON churches, users, classes, volunteer_assignments, children, guardians, guardian_children,
    consent_records, service_days, checkins, audit_log FROM neemias_app;
REVOKE ALL ON SEQUENCE audit_log_id_seq FROM neemias_app;
DROP FUNCTION IF EXISTS app_login_candidates(text);
DROP FUNCTION IF EXISTS app_visible_guardian_ids();
DROP FUNCTION IF EXISTS app_visible_child_ids();
DROP FUNCTION IF EXISTS app_guardian_child_ids();
DROP FUNCTION IF EXISTS app_assigned_class_ids();
