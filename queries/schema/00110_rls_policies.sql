-- +neemias repeatable (store.Migrate re-runs the Up section when this file's text changes)
--
-- Row-level security of the tenant tables: every policy of the request role (neemias_app) on
-- a table that holds a church's rows, and the visibility helpers those policies call, written
-- here and nowhere else. PostgreSQL enforces them, so a query that forgot its WHERE clause
-- still returns nothing the caller may not see. They read the caller context set per
-- transaction (00001); unset -> no rows.
--
-- Reads, by role:
--
--   ADMIN, CADASTRO  everything of their church (the audit log: ADMIN only)
--   VOLUNTARIO       the children and check-ins of the classes assigned to them, those
--                    children's guardians and pick-up lists; their own assignments
--   RESPONSAVEL      their own children (linked through guardian_children), those children's
--                    check-ins, guardians, consent records and pick-up lists (not the
--                    restrictions staff recorded)
--   every role       their church, its classes, service days and consent texts; their own
--                    account
--
-- Writes admit a role exactly when the spec grants it the scope of the tools that write the
-- table (app_role_has_scope, the spec's matrix from 00090, never a role name), and a row
-- exactly when every row filter of those tools (rf_*, 00090) passes:
--
--   children, guardians, guardian_children, consent_records  children:write
--   service_days, checkins                                   checkins:write
--   pickup_adults                                            pickups:write
--
-- TestRLSMatchesScopeMatrix (internal/logic) proves it for every role × capability. Classes
-- and volunteer assignments admit ADMIN (no tool writes them; the operator's commands do, as
-- the owner); anyone appends audit entries about themselves.
--
-- Why repeatable: a policy is changed by editing it here, never by a new migration that drops
-- and re-creates it. store.Migrate re-runs this Up section whenever the file's text changes,
-- in one transaction, so every database, migrated before the change or fresh, ends with the
-- policies written here. Each policy is therefore DROP POLICY IF EXISTS then CREATE POLICY,
-- and each function CREATE OR REPLACE (which keeps its owner and grants). To remove a policy,
-- keep its DROP POLICY IF EXISTS line and delete its CREATE POLICY.
--
-- On a fresh database this file runs at its number; on one that ran it before, a changed text
-- runs again after 00090's and before the pending migrations. So it may name only what exists
-- by then: the tables and columns of 00002-00109, the functions of 00001 and 00090. A tenant
-- table created by a later migration gets its policies in that migration.
--
-- Not here: the table grants (00004, widened by later migrations, never rewritten) and ENABLE/
-- FORCE ROW LEVEL SECURITY (00004, and the migration creating each later table); the *_owner
-- policies beside them (FORCE makes the owner subject to the policies, and these keep its
-- maintenance context, migrations and seed, able to see and write everything; each is TO
-- CURRENT_USER, the owner that ran that migration, which a re-run of this file by another role
-- would silently change); the *_not_for_requests policies of the tables the request role never
-- reads (OAuth, keys, incidents). The helpers below are declared, with an empty result, and
-- granted in 00004, so that migrations before this one may refer to them (00096's
-- app_pickup_restriction calls app_visible_child_ids); their bodies are here.
--
-- The policies that would read each other's tables (children <-> guardian_children <->
-- guardians) go through SECURITY DEFINER helpers owned by the schema owner, so they never
-- recurse.

-- +goose Up

-- Classes assigned to the calling volunteer. (No policy calls it since the check-in policies
-- use the spec's rf_volunteer_assigned_classes.)
CREATE OR REPLACE FUNCTION app_assigned_class_ids() RETURNS SETOF uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
    SELECT va.class_id
    FROM volunteer_assignments va
    WHERE va.user_id = app_user_id() AND va.church_id = app_church_id()
$$;

-- Children linked to the calling guardian.
CREATE OR REPLACE FUNCTION app_guardian_child_ids() RETURNS SETOF uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
    SELECT gc.child_id
    FROM guardian_children gc
    JOIN guardians g ON g.id = gc.guardian_id
    WHERE g.user_id = app_user_id() AND g.church_id = app_church_id()
$$;

-- Children the caller may see, by role: the conjunction of the spec's filters.
CREATE OR REPLACE FUNCTION app_visible_child_ids() RETURNS SETOF uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
    SELECT c.id
    FROM children c
    WHERE rf_church(c.church_id)
      AND rf_guardian_own_children(c.id)
      AND rf_volunteer_assigned_classes(c.class_id)
$$;

-- Guardians the caller may see: those of the visible children, and the caller's own record.
CREATE OR REPLACE FUNCTION app_visible_guardian_ids() RETURNS SETOF uuid
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

-- churches: the caller's own church.
DROP POLICY IF EXISTS churches_select ON churches;
CREATE POLICY churches_select ON churches FOR SELECT TO neemias_app
    USING (id = app_church_id());

-- users: staff see their church's accounts; everyone sees their own.
DROP POLICY IF EXISTS users_select ON users;
CREATE POLICY users_select ON users FOR SELECT TO neemias_app
    USING (church_id = app_church_id() AND (app_is_staff() OR id = app_user_id()));

-- classes: names and age ranges are not personal data; every role of the church sees them.
DROP POLICY IF EXISTS classes_select ON classes;
DROP POLICY IF EXISTS classes_insert ON classes;
DROP POLICY IF EXISTS classes_update ON classes;
CREATE POLICY classes_select ON classes FOR SELECT TO neemias_app
    USING (church_id = app_church_id());
CREATE POLICY classes_insert ON classes FOR INSERT TO neemias_app
    WITH CHECK (church_id = app_church_id() AND app_role() = 'ADMIN');
CREATE POLICY classes_update ON classes FOR UPDATE TO neemias_app
    USING (church_id = app_church_id() AND app_role() = 'ADMIN')
    WITH CHECK (church_id = app_church_id() AND app_role() = 'ADMIN');

-- volunteer_assignments: staff see all of their church; a volunteer sees their own.
DROP POLICY IF EXISTS volunteer_assignments_select ON volunteer_assignments;
DROP POLICY IF EXISTS volunteer_assignments_insert ON volunteer_assignments;
DROP POLICY IF EXISTS volunteer_assignments_delete ON volunteer_assignments;
CREATE POLICY volunteer_assignments_select ON volunteer_assignments FOR SELECT TO neemias_app
    USING (church_id = app_church_id() AND (app_is_staff() OR user_id = app_user_id()));
CREATE POLICY volunteer_assignments_insert ON volunteer_assignments FOR INSERT TO neemias_app
    WITH CHECK (church_id = app_church_id() AND app_role() = 'ADMIN');
CREATE POLICY volunteer_assignments_delete ON volunteer_assignments FOR DELETE TO neemias_app
    USING (church_id = app_church_id() AND app_role() = 'ADMIN');

-- children: read as app_visible_child_ids says; written (enrolled, corrected, a merge's
-- duplicate removed once nothing refers to it) by the roles with children:write.
DROP POLICY IF EXISTS children_select ON children;
DROP POLICY IF EXISTS children_insert ON children;
DROP POLICY IF EXISTS children_update ON children;
DROP POLICY IF EXISTS children_delete ON children;
CREATE POLICY children_select ON children FOR SELECT TO neemias_app
    USING (church_id = app_church_id()
           AND (app_is_staff() OR id IN (SELECT app_visible_child_ids())));
CREATE POLICY children_insert ON children FOR INSERT TO neemias_app
    WITH CHECK (rf_church(church_id) AND app_role_has_scope('children:write'));
CREATE POLICY children_update ON children FOR UPDATE TO neemias_app
    USING (rf_church(church_id) AND app_role_has_scope('children:write'))
    WITH CHECK (rf_church(church_id) AND app_role_has_scope('children:write'));
CREATE POLICY children_delete ON children FOR DELETE TO neemias_app
    USING (rf_church(church_id) AND app_role_has_scope('children:write'));

-- guardians: those of the visible children and the caller's own record; written as children.
DROP POLICY IF EXISTS guardians_select ON guardians;
DROP POLICY IF EXISTS guardians_insert ON guardians;
DROP POLICY IF EXISTS guardians_update ON guardians;
DROP POLICY IF EXISTS guardians_delete ON guardians;
CREATE POLICY guardians_select ON guardians FOR SELECT TO neemias_app
    USING (church_id = app_church_id()
           AND (app_is_staff() OR id IN (SELECT app_visible_guardian_ids())));
CREATE POLICY guardians_insert ON guardians FOR INSERT TO neemias_app
    WITH CHECK (rf_church(church_id) AND app_role_has_scope('children:write'));
CREATE POLICY guardians_update ON guardians FOR UPDATE TO neemias_app
    USING (rf_church(church_id) AND app_role_has_scope('children:write'))
    WITH CHECK (rf_church(church_id) AND app_role_has_scope('children:write'));
CREATE POLICY guardians_delete ON guardians FOR DELETE TO neemias_app
    USING (rf_church(church_id) AND app_role_has_scope('children:write'));

-- guardian_children: the links of the visible children; linked, related anew (the
-- relationship corrected) and unlinked by the roles with children:write.
DROP POLICY IF EXISTS guardian_children_select ON guardian_children;
DROP POLICY IF EXISTS guardian_children_insert ON guardian_children;
DROP POLICY IF EXISTS guardian_children_update ON guardian_children;
DROP POLICY IF EXISTS guardian_children_delete ON guardian_children;
CREATE POLICY guardian_children_select ON guardian_children FOR SELECT TO neemias_app
    USING (church_id = app_church_id()
           AND (app_is_staff() OR child_id IN (SELECT app_visible_child_ids())));
CREATE POLICY guardian_children_insert ON guardian_children FOR INSERT TO neemias_app
    WITH CHECK (rf_church(church_id) AND app_role_has_scope('children:write'));
CREATE POLICY guardian_children_update ON guardian_children FOR UPDATE TO neemias_app
    USING (rf_church(church_id) AND app_role_has_scope('children:write'))
    WITH CHECK (rf_church(church_id) AND app_role_has_scope('children:write'));
CREATE POLICY guardian_children_delete ON guardian_children FOR DELETE TO neemias_app
    USING (rf_church(church_id) AND app_role_has_scope('children:write'));

-- consent_records: read by staff and the guardians of the child. A consent is recorded by the
-- caller and in force; revoking one is the only update.
DROP POLICY IF EXISTS consent_records_select ON consent_records;
DROP POLICY IF EXISTS consent_records_insert ON consent_records;
DROP POLICY IF EXISTS consent_records_update ON consent_records;
CREATE POLICY consent_records_select ON consent_records FOR SELECT TO neemias_app
    USING (church_id = app_church_id()
           AND (app_is_staff()
                OR (app_role() = 'RESPONSAVEL' AND child_id IN (SELECT app_guardian_child_ids()))));
CREATE POLICY consent_records_insert ON consent_records FOR INSERT TO neemias_app
    WITH CHECK (rf_church(church_id) AND app_role_has_scope('children:write')
                AND granted_by = app_user_id() AND revoked_at IS NULL);
CREATE POLICY consent_records_update ON consent_records FOR UPDATE TO neemias_app
    USING (rf_church(church_id) AND app_role_has_scope('children:write'))
    WITH CHECK (rf_church(church_id) AND app_role_has_scope('children:write'));

-- service_days: every role of the church sees them; the roles with checkins:write open one
-- (a check-in needs its day).
DROP POLICY IF EXISTS service_days_select ON service_days;
DROP POLICY IF EXISTS service_days_insert ON service_days;
CREATE POLICY service_days_select ON service_days FOR SELECT TO neemias_app
    USING (church_id = app_church_id());
CREATE POLICY service_days_insert ON service_days FOR INSERT TO neemias_app
    WITH CHECK (rf_church(church_id) AND app_role_has_scope('checkins:write'));

-- checkins: the filters of neemias_checkin_register and neemias_checkout_register. A new
-- check-in is open and recorded by the caller; a check-out is recorded as the caller's.
DROP POLICY IF EXISTS checkins_select ON checkins;
DROP POLICY IF EXISTS checkins_insert ON checkins;
DROP POLICY IF EXISTS checkins_update ON checkins;
CREATE POLICY checkins_select ON checkins FOR SELECT TO neemias_app
    USING (rf_church(church_id)
           AND rf_guardian_own_children(child_id)
           AND rf_volunteer_assigned_classes(class_id));
CREATE POLICY checkins_insert ON checkins FOR INSERT TO neemias_app
    WITH CHECK (rf_church(church_id)
                AND app_role_has_scope('checkins:write')
                AND rf_guardian_own_children(child_id)
                AND rf_volunteer_assigned_classes(class_id)
                AND checked_in_by = app_user_id()
                AND checked_out_at IS NULL AND checked_out_by IS NULL
                AND locked_at IS NULL AND failed_pickup_attempts = 0);
CREATE POLICY checkins_update ON checkins FOR UPDATE TO neemias_app
    USING (rf_church(church_id)
           AND app_role_has_scope('checkins:write')
           AND rf_guardian_own_children(child_id)
           AND rf_volunteer_assigned_classes(class_id))
    WITH CHECK (rf_church(church_id)
                AND app_role_has_scope('checkins:write')
                AND (checked_out_by IS NULL OR checked_out_by = app_user_id())
                AND rf_guardian_own_children(child_id)
                AND rf_volunteer_assigned_classes(class_id));

-- pickup_adults: read, the lists of the children the caller may see, a guardian not the
-- restrictions; written by the roles with pickups:write for children they may see, a
-- restriction only by staff (a custody order is checked by the church, not typed by a
-- guardian). An entry is added and removed as the caller's.
DROP POLICY IF EXISTS pickup_adults_select ON pickup_adults;
DROP POLICY IF EXISTS pickup_adults_insert ON pickup_adults;
DROP POLICY IF EXISTS pickup_adults_update ON pickup_adults;
CREATE POLICY pickup_adults_select ON pickup_adults FOR SELECT TO neemias_app
    USING (rf_church(church_id)
           AND child_id IN (SELECT app_visible_child_ids())
           AND rf_guardian_sees_no_restrictions(restriction_id));
CREATE POLICY pickup_adults_insert ON pickup_adults FOR INSERT TO neemias_app
    WITH CHECK (rf_church(church_id)
                AND app_role_has_scope('pickups:write')
                AND rf_guardian_own_children(child_id)
                AND created_by = app_user_id() AND removed_at IS NULL
                AND (authorized OR app_is_staff()));
CREATE POLICY pickup_adults_update ON pickup_adults FOR UPDATE TO neemias_app
    USING (rf_church(church_id)
           AND app_role_has_scope('pickups:write')
           AND rf_guardian_own_children(child_id)
           AND (authorized OR app_is_staff()))
    WITH CHECK (rf_church(church_id)
                AND app_role_has_scope('pickups:write')
                AND removed_by = app_user_id()
                AND (authorized OR app_is_staff()));

-- consent_texts: titles and versions are not personal data; the church's roles read them,
-- the operator registers them (as the owner).
DROP POLICY IF EXISTS consent_texts_select ON consent_texts;
CREATE POLICY consent_texts_select ON consent_texts FOR SELECT TO neemias_app
    USING (rf_church(church_id));

-- audit_log: anyone appends entries about themselves; only an ADMIN reads, their church's.
DROP POLICY IF EXISTS audit_log_insert ON audit_log;
DROP POLICY IF EXISTS audit_log_select ON audit_log;
CREATE POLICY audit_log_insert ON audit_log FOR INSERT TO neemias_app
    WITH CHECK (church_id IS NOT DISTINCT FROM app_church_id()
                AND user_id IS NOT DISTINCT FROM app_user_id());
CREATE POLICY audit_log_select ON audit_log FOR SELECT TO neemias_app
    USING (church_id = app_church_id() AND app_role() = 'ADMIN');

-- +goose Down
-- The request policies go; the tenant tables stay closed to the request role (forced row-level
-- security without a policy: nothing visible, nothing writable) until this file runs again.
-- The helpers keep their bodies; 00004's Down drops them.
DROP POLICY IF EXISTS audit_log_select ON audit_log;
DROP POLICY IF EXISTS audit_log_insert ON audit_log;
DROP POLICY IF EXISTS consent_texts_select ON consent_texts;
DROP POLICY IF EXISTS pickup_adults_update ON pickup_adults;
DROP POLICY IF EXISTS pickup_adults_insert ON pickup_adults;
DROP POLICY IF EXISTS pickup_adults_select ON pickup_adults;
DROP POLICY IF EXISTS checkins_update ON checkins;
DROP POLICY IF EXISTS checkins_insert ON checkins;
DROP POLICY IF EXISTS checkins_select ON checkins;
DROP POLICY IF EXISTS service_days_insert ON service_days;
DROP POLICY IF EXISTS service_days_select ON service_days;
DROP POLICY IF EXISTS consent_records_update ON consent_records;
DROP POLICY IF EXISTS consent_records_insert ON consent_records;
DROP POLICY IF EXISTS consent_records_select ON consent_records;
DROP POLICY IF EXISTS guardian_children_delete ON guardian_children;
DROP POLICY IF EXISTS guardian_children_update ON guardian_children;
DROP POLICY IF EXISTS guardian_children_insert ON guardian_children;
DROP POLICY IF EXISTS guardian_children_select ON guardian_children;
DROP POLICY IF EXISTS guardians_delete ON guardians;
DROP POLICY IF EXISTS guardians_update ON guardians;
DROP POLICY IF EXISTS guardians_insert ON guardians;
DROP POLICY IF EXISTS guardians_select ON guardians;
DROP POLICY IF EXISTS children_delete ON children;
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
