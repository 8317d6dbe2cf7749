-- Row-level security: tenant isolation and the guardian and volunteer row filters, enforced by
-- PostgreSQL itself, so a query that forgot its WHERE clause still returns nothing the caller
-- may not see. Policies read the caller context set per transaction (00001); unset -> no rows.
--
--   ADMIN, CADASTRO  everything of their church
--   VOLUNTARIO       children and check-ins of the classes assigned to them
--   RESPONSAVEL      their own children (linked through guardian_children), those children's
--                    check-ins, guardians and consent records
--
-- The policies that would read each other's tables (children <-> guardian_children <->
-- guardians) go through SECURITY DEFINER helpers owned by the schema owner, so they never
-- recurse. FORCE ROW LEVEL SECURITY makes the owner subject to the policies too: the
-- *_owner policies keep the maintenance context (migrations, seed), which runs as the owner
-- without SET ROLE, able to see everything; a superuser owner bypasses RLS anyway.

-- +goose Up

-- Classes assigned to the calling volunteer.
CREATE FUNCTION app_assigned_class_ids() RETURNS SETOF uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
    SELECT va.class_id
    FROM volunteer_assignments va
    WHERE va.user_id = app_user_id() AND va.church_id = app_church_id()
$$;

-- Children linked to the calling guardian.
CREATE FUNCTION app_guardian_child_ids() RETURNS SETOF uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
    SELECT gc.child_id
    FROM guardian_children gc
    JOIN guardians g ON g.id = gc.guardian_id
    WHERE g.user_id = app_user_id() AND g.church_id = app_church_id()
$$;

-- Children the caller may see, by role.
CREATE FUNCTION app_visible_child_ids() RETURNS SETOF uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
    SELECT c.id
    FROM children c
    WHERE c.church_id = app_church_id()
      AND (app_is_staff()
           OR (app_role() = 'RESPONSAVEL' AND c.id IN (SELECT app_guardian_child_ids()))
           OR (app_role() = 'VOLUNTARIO' AND c.class_id IN (SELECT app_assigned_class_ids())))
$$;

-- Guardians the caller may see: those of the visible children, and the caller's own record.
CREATE FUNCTION app_visible_guardian_ids() RETURNS SETOF uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
    SELECT gc.guardian_id
    FROM guardian_children gc
    WHERE gc.church_id = app_church_id() AND gc.child_id IN (SELECT app_visible_child_ids())
    UNION
    SELECT g.id
    FROM guardians g
    WHERE g.user_id = app_user_id() AND g.church_id = app_church_id()
$$;

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

-- churches: the caller's own church.
CREATE POLICY churches_select ON churches FOR SELECT TO neemias_app
    USING (id = app_church_id());

-- users: staff see their church's accounts; everyone sees their own.
CREATE POLICY users_select ON users FOR SELECT TO neemias_app
    USING (church_id = app_church_id() AND (app_is_staff() OR id = app_user_id()));

-- classes: names and age ranges are not personal data; every role of the church sees them.
CREATE POLICY classes_select ON classes FOR SELECT TO neemias_app
    USING (church_id = app_church_id());
CREATE POLICY classes_insert ON classes FOR INSERT TO neemias_app
    WITH CHECK (church_id = app_church_id() AND app_role() = 'ADMIN');
CREATE POLICY classes_update ON classes FOR UPDATE TO neemias_app
    USING (church_id = app_church_id() AND app_role() = 'ADMIN')
    WITH CHECK (church_id = app_church_id() AND app_role() = 'ADMIN');

-- volunteer_assignments: staff see all of their church; a volunteer sees their own.
CREATE POLICY volunteer_assignments_select ON volunteer_assignments FOR SELECT TO neemias_app
    USING (church_id = app_church_id() AND (app_is_staff() OR user_id = app_user_id()));
CREATE POLICY volunteer_assignments_insert ON volunteer_assignments FOR INSERT TO neemias_app
    WITH CHECK (church_id = app_church_id() AND app_role() = 'ADMIN');
CREATE POLICY volunteer_assignments_delete ON volunteer_assignments FOR DELETE TO neemias_app
    USING (church_id = app_church_id() AND app_role() = 'ADMIN');

-- children
CREATE POLICY children_select ON children FOR SELECT TO neemias_app
    USING (church_id = app_church_id()
           AND (app_is_staff() OR id IN (SELECT app_visible_child_ids())));
CREATE POLICY children_insert ON children FOR INSERT TO neemias_app
    WITH CHECK (church_id = app_church_id() AND app_is_staff());
CREATE POLICY children_update ON children FOR UPDATE TO neemias_app
    USING (church_id = app_church_id() AND app_is_staff())
    WITH CHECK (church_id = app_church_id() AND app_is_staff());

-- guardians
CREATE POLICY guardians_select ON guardians FOR SELECT TO neemias_app
    USING (church_id = app_church_id()
           AND (app_is_staff() OR id IN (SELECT app_visible_guardian_ids())));
CREATE POLICY guardians_insert ON guardians FOR INSERT TO neemias_app
    WITH CHECK (church_id = app_church_id() AND app_is_staff());
CREATE POLICY guardians_update ON guardians FOR UPDATE TO neemias_app
    USING (church_id = app_church_id() AND app_is_staff())
    WITH CHECK (church_id = app_church_id() AND app_is_staff());

-- guardian_children
CREATE POLICY guardian_children_select ON guardian_children FOR SELECT TO neemias_app
    USING (church_id = app_church_id()
           AND (app_is_staff() OR child_id IN (SELECT app_visible_child_ids())));
CREATE POLICY guardian_children_insert ON guardian_children FOR INSERT TO neemias_app
    WITH CHECK (church_id = app_church_id() AND app_is_staff());

-- consent_records: staff, and the guardians of the child.
CREATE POLICY consent_records_select ON consent_records FOR SELECT TO neemias_app
    USING (church_id = app_church_id()
           AND (app_is_staff()
                OR (app_role() = 'RESPONSAVEL' AND child_id IN (SELECT app_guardian_child_ids()))));
CREATE POLICY consent_records_insert ON consent_records FOR INSERT TO neemias_app
    WITH CHECK (church_id = app_church_id() AND app_is_staff()
                AND granted_by = app_user_id() AND revoked_at IS NULL);
CREATE POLICY consent_records_update ON consent_records FOR UPDATE TO neemias_app
    USING (church_id = app_church_id() AND app_is_staff())
    WITH CHECK (church_id = app_church_id() AND app_is_staff());

-- service_days: any role of the church may see them and open one (a check-in needs its day).
CREATE POLICY service_days_select ON service_days FOR SELECT TO neemias_app
    USING (church_id = app_church_id());
CREATE POLICY service_days_insert ON service_days FOR INSERT TO neemias_app
    WITH CHECK (church_id = app_church_id()
                AND app_role() IN ('ADMIN', 'CADASTRO', 'VOLUNTARIO', 'RESPONSAVEL'));

-- checkins: staff all of their church; a guardian their children's; a volunteer those of the
-- assigned classes. A new check-in is open, recorded by the caller, and within those limits.
CREATE POLICY checkins_select ON checkins FOR SELECT TO neemias_app
    USING (church_id = app_church_id()
           AND (app_is_staff()
                OR (app_role() = 'RESPONSAVEL' AND child_id IN (SELECT app_guardian_child_ids()))
                OR (app_role() = 'VOLUNTARIO' AND class_id IN (SELECT app_assigned_class_ids()))));
CREATE POLICY checkins_insert ON checkins FOR INSERT TO neemias_app
    WITH CHECK (church_id = app_church_id()
                AND checked_in_by = app_user_id()
                AND checked_out_at IS NULL AND checked_out_by IS NULL
                AND locked_at IS NULL AND failed_pickup_attempts = 0
                AND (app_is_staff()
                     OR (app_role() = 'RESPONSAVEL' AND child_id IN (SELECT app_guardian_child_ids()))
                     OR (app_role() = 'VOLUNTARIO' AND class_id IN (SELECT app_assigned_class_ids()))));
CREATE POLICY checkins_update ON checkins FOR UPDATE TO neemias_app
    USING (church_id = app_church_id()
           AND (app_is_staff()
                OR (app_role() = 'RESPONSAVEL' AND child_id IN (SELECT app_guardian_child_ids()))
                OR (app_role() = 'VOLUNTARIO' AND class_id IN (SELECT app_assigned_class_ids()))))
    WITH CHECK (church_id = app_church_id()
                AND (checked_out_by IS NULL OR checked_out_by = app_user_id())
                AND (app_is_staff()
                     OR (app_role() = 'RESPONSAVEL' AND child_id IN (SELECT app_guardian_child_ids()))
                     OR (app_role() = 'VOLUNTARIO' AND class_id IN (SELECT app_assigned_class_ids()))));

-- audit_log: anyone appends entries about themselves; only an ADMIN reads, their church's.
CREATE POLICY audit_log_insert ON audit_log FOR INSERT TO neemias_app
    WITH CHECK (church_id IS NOT DISTINCT FROM app_church_id()
                AND user_id IS NOT DISTINCT FROM app_user_id());
CREATE POLICY audit_log_select ON audit_log FOR SELECT TO neemias_app
    USING (church_id = app_church_id() AND app_role() = 'ADMIN');

-- +goose Down
DROP POLICY IF EXISTS audit_log_select ON audit_log;
DROP POLICY IF EXISTS audit_log_insert ON audit_log;
DROP POLICY IF EXISTS checkins_update ON checkins;
DROP POLICY IF EXISTS checkins_insert ON checkins;
DROP POLICY IF EXISTS checkins_select ON checkins;
DROP POLICY IF EXISTS service_days_insert ON service_days;
DROP POLICY IF EXISTS service_days_select ON service_days;
DROP POLICY IF EXISTS consent_records_update ON consent_records;
DROP POLICY IF EXISTS consent_records_insert ON consent_records;
DROP POLICY IF EXISTS consent_records_select ON consent_records;
DROP POLICY IF EXISTS guardian_children_insert ON guardian_children;
DROP POLICY IF EXISTS guardian_children_select ON guardian_children;
DROP POLICY IF EXISTS guardians_update ON guardians;
DROP POLICY IF EXISTS guardians_insert ON guardians;
DROP POLICY IF EXISTS guardians_select ON guardians;
DROP POLICY IF EXISTS children_update ON children;
DROP POLICY IF EXISTS children_insert ON children;
DROP POLICY IF EXISTS children_select ON children;
DROP POLICY IF EXISTS volunteer_assignments_delete ON volunteer_assignments;
DROP POLICY IF EXISTS volunteer_assignments_insert ON volunteer_assignments;
DROP POLICY IF EXISTS volunteer_assignments_select ON volunteer_assignments;
DROP POLICY IF EXISTS classes_update ON classes;
DROP POLICY IF EXISTS classes_insert ON classes;
DROP POLICY IF EXISTS classes_select ON classes;
DROP POLICY IF EXISTS users_select ON users;
DROP POLICY IF EXISTS churches_select ON churches;
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
