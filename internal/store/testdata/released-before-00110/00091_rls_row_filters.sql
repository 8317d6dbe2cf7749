-- Row-level security from the spec: the policies of the tenant tables call the spec's row
-- filter functions (rf_*, generated in 00090 from spec/capabilities.yaml) and, for writes, the
-- spec's scope matrix (app_role_has_scope), instead of repeating the rules. A write policy
-- admits a role exactly when the spec grants it the scope of the tool that writes the table:
--
--   children, guardians, guardian_children, consent_records  children:write (neemias_child_enroll)
--   service_days, checkins                                   checkins:write  (check-in, pick-up)
--
-- and a row exactly when every row filter of those tools passes. TestRLSMatchesScopeMatrix
-- (internal/logic) proves it for every role × capability. Reads keep 00004's policies where
-- they are per-table visibility (a guardian reads their children's rows through the views); the
-- check-in rows are filtered by the same functions as the check-in tools.

-- +goose Up

-- Children the caller may see, by role: now the conjunction of the spec's filters.
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

DROP POLICY children_insert ON children;
DROP POLICY children_update ON children;
CREATE POLICY children_insert ON children FOR INSERT TO neemias_app
    WITH CHECK (rf_church(church_id) AND app_role_has_scope('children:write'));
CREATE POLICY children_update ON children FOR UPDATE TO neemias_app
    USING (rf_church(church_id) AND app_role_has_scope('children:write'))
    WITH CHECK (rf_church(church_id) AND app_role_has_scope('children:write'));

DROP POLICY guardians_insert ON guardians;
DROP POLICY guardians_update ON guardians;
CREATE POLICY guardians_insert ON guardians FOR INSERT TO neemias_app
    WITH CHECK (rf_church(church_id) AND app_role_has_scope('children:write'));
CREATE POLICY guardians_update ON guardians FOR UPDATE TO neemias_app
    USING (rf_church(church_id) AND app_role_has_scope('children:write'))
    WITH CHECK (rf_church(church_id) AND app_role_has_scope('children:write'));

DROP POLICY guardian_children_insert ON guardian_children;
CREATE POLICY guardian_children_insert ON guardian_children FOR INSERT TO neemias_app
    WITH CHECK (rf_church(church_id) AND app_role_has_scope('children:write'));

DROP POLICY consent_records_insert ON consent_records;
DROP POLICY consent_records_update ON consent_records;
CREATE POLICY consent_records_insert ON consent_records FOR INSERT TO neemias_app
    WITH CHECK (rf_church(church_id) AND app_role_has_scope('children:write')
                AND granted_by = app_user_id() AND revoked_at IS NULL);
CREATE POLICY consent_records_update ON consent_records FOR UPDATE TO neemias_app
    USING (rf_church(church_id) AND app_role_has_scope('children:write'))
    WITH CHECK (rf_church(church_id) AND app_role_has_scope('children:write'));

DROP POLICY service_days_insert ON service_days;
CREATE POLICY service_days_insert ON service_days FOR INSERT TO neemias_app
    WITH CHECK (rf_church(church_id) AND app_role_has_scope('checkins:write'));

-- checkins: the filters of neemias_checkin_register and neemias_checkout_register. A new
-- check-in is open and recorded by the caller.
DROP POLICY checkins_select ON checkins;
DROP POLICY checkins_insert ON checkins;
DROP POLICY checkins_update ON checkins;
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

-- +goose Down
DROP POLICY checkins_update ON checkins;
DROP POLICY checkins_insert ON checkins;
DROP POLICY checkins_select ON checkins;
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
DROP POLICY service_days_insert ON service_days;
CREATE POLICY service_days_insert ON service_days FOR INSERT TO neemias_app
    WITH CHECK (church_id = app_church_id()
                AND app_role() IN ('ADMIN', 'CADASTRO', 'VOLUNTARIO', 'RESPONSAVEL'));
DROP POLICY consent_records_update ON consent_records;
DROP POLICY consent_records_insert ON consent_records;
CREATE POLICY consent_records_insert ON consent_records FOR INSERT TO neemias_app
    WITH CHECK (church_id = app_church_id() AND app_is_staff()
                AND granted_by = app_user_id() AND revoked_at IS NULL);
CREATE POLICY consent_records_update ON consent_records FOR UPDATE TO neemias_app
    USING (church_id = app_church_id() AND app_is_staff())
    WITH CHECK (church_id = app_church_id() AND app_is_staff());
DROP POLICY guardian_children_insert ON guardian_children;
CREATE POLICY guardian_children_insert ON guardian_children FOR INSERT TO neemias_app
    WITH CHECK (church_id = app_church_id() AND app_is_staff());
DROP POLICY guardians_update ON guardians;
DROP POLICY guardians_insert ON guardians;
CREATE POLICY guardians_insert ON guardians FOR INSERT TO neemias_app
    WITH CHECK (church_id = app_church_id() AND app_is_staff());
CREATE POLICY guardians_update ON guardians FOR UPDATE TO neemias_app
    USING (church_id = app_church_id() AND app_is_staff())
    WITH CHECK (church_id = app_church_id() AND app_is_staff());
DROP POLICY children_update ON children;
DROP POLICY children_insert ON children;
CREATE POLICY children_insert ON children FOR INSERT TO neemias_app
    WITH CHECK (church_id = app_church_id() AND app_is_staff());
CREATE POLICY children_update ON children FOR UPDATE TO neemias_app
    USING (church_id = app_church_id() AND app_is_staff())
    WITH CHECK (church_id = app_church_id() AND app_is_staff());
CREATE OR REPLACE FUNCTION app_visible_child_ids() RETURNS SETOF uuid
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
