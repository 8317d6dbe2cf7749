-- Corrections and merges of records (issue 22): neemias_guardian_correct may correct how a
-- guardian is related to a child; neemias_child_merge and neemias_guardian_merge move every
-- row of a duplicate record to the record that stays and remove the duplicate. All for the
-- roles the spec grants children:write (app_role_has_scope, never a role name), as 00091 and
-- 00101 do for the other writes of those tables.
--
-- The rows a merge moves are history that other policies guard with who-did-it rules
-- (checkins: who released the child; pickup_adults: who removed an entry), consent evidence,
-- and the link of a login account to a guardian (which decides what the account sees). The
-- application role gets no UPDATE on those reference columns: the two functions below move
-- them, and only them, from the duplicate to the survivor, after checking the caller's church
-- and scope. A merge's other writes (guardian links, the duplicate's removal) go through the
-- ordinary privileges and policies.

-- +goose Up

GRANT UPDATE (relationship) ON guardian_children TO neemias_app;
CREATE POLICY guardian_children_update ON guardian_children FOR UPDATE TO neemias_app
    USING (rf_church(church_id) AND app_role_has_scope('children:write'))
    WITH CHECK (rf_church(church_id) AND app_role_has_scope('children:write'));

-- The duplicate is removed once nothing refers to it (the foreign keys refuse it otherwise).
GRANT DELETE ON children, guardians TO neemias_app;
CREATE POLICY children_delete ON children FOR DELETE TO neemias_app
    USING (rf_church(church_id) AND app_role_has_scope('children:write'));
CREATE POLICY guardians_delete ON guardians FOR DELETE TO neemias_app
    USING (rf_church(church_id) AND app_role_has_scope('children:write'));

-- Moves the check-ins, pick-up list and consent records of child duplicate to child survivor,
-- both of the caller's church: one row per moved row (check-in, pickup, consent), and
-- pickup_closed for a live entry of the duplicate's list naming an adult live on the
-- survivor's (the survivor's entry stays in force; the caller closes the duplicate's, which
-- moves with the others as history). Refused (insufficient_privilege, which the application
-- reads as not found) without children:write or when either child is not the caller's church's.
-- +goose StatementBegin
CREATE FUNCTION app_merge_child_rows(survivor uuid, duplicate uuid)
    RETURNS TABLE (row_kind text, row_id uuid)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
BEGIN
    IF NOT coalesce(app_role_has_scope('children:write'), false) THEN
        RAISE EXCEPTION 'merging children needs children:write' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF survivor = duplicate OR (SELECT count(*) FROM children c
                                WHERE c.church_id = app_church_id() AND c.id IN (survivor, duplicate)) <> 2 THEN
        RAISE EXCEPTION 'no such children to merge' USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN QUERY
        WITH m AS (UPDATE checkins ck SET child_id = survivor
                   WHERE ck.church_id = app_church_id() AND ck.child_id = duplicate
                   RETURNING ck.id)
        SELECT 'checkin'::text, m.id FROM m;
    RETURN QUERY
        WITH m AS (UPDATE pickup_adults p SET removed_at = now(), removed_by = app_user_id()
                   WHERE p.church_id = app_church_id() AND p.child_id = duplicate AND p.removed_at IS NULL
                     AND EXISTS (SELECT 1 FROM pickup_adults s
                                 WHERE s.church_id = p.church_id AND s.child_id = survivor AND s.removed_at IS NULL
                                   AND app_fold_name(s.name) = app_fold_name(p.name))
                   RETURNING p.id)
        SELECT 'pickup_closed'::text, m.id FROM m;
    RETURN QUERY
        WITH m AS (UPDATE pickup_adults p SET child_id = survivor
                   WHERE p.church_id = app_church_id() AND p.child_id = duplicate
                   RETURNING p.id)
        SELECT 'pickup'::text, m.id FROM m;
    RETURN QUERY
        WITH m AS (UPDATE consent_records r SET child_id = survivor
                   WHERE r.church_id = app_church_id() AND r.child_id = duplicate
                   RETURNING r.id)
        SELECT 'consent'::text, m.id FROM m;
END
$$;
-- +goose StatementEnd

-- Moves what refers to guardian duplicate to guardian survivor, both of the caller's church:
-- the consent records they gave (consent), the restrictions naming them (pickup), the pick-ups
-- they made (checkin) and their login account (account, the account's id), which the survivor
-- takes only when it has none (the caller refuses a merge of two accounts before). Refused as
-- app_merge_child_rows is.
-- +goose StatementBegin
CREATE FUNCTION app_merge_guardian_rows(survivor uuid, duplicate uuid)
    RETURNS TABLE (row_kind text, row_id uuid)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    account uuid;
BEGIN
    IF NOT coalesce(app_role_has_scope('children:write'), false) THEN
        RAISE EXCEPTION 'merging guardians needs children:write' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF survivor = duplicate OR (SELECT count(*) FROM guardians g
                                WHERE g.church_id = app_church_id() AND g.id IN (survivor, duplicate)) <> 2 THEN
        RAISE EXCEPTION 'no such guardians to merge' USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN QUERY
        WITH m AS (UPDATE consent_records r SET guardian_id = survivor
                   WHERE r.church_id = app_church_id() AND r.guardian_id = duplicate
                   RETURNING r.id)
        SELECT 'consent'::text, m.id FROM m;
    RETURN QUERY
        WITH m AS (UPDATE pickup_adults p SET guardian_id = survivor
                   WHERE p.church_id = app_church_id() AND p.guardian_id = duplicate
                   RETURNING p.id)
        SELECT 'pickup'::text, m.id FROM m;
    RETURN QUERY
        WITH m AS (UPDATE checkins ck SET picked_up_by_guardian = survivor
                   WHERE ck.church_id = app_church_id() AND ck.picked_up_by_guardian = duplicate
                   RETURNING ck.id)
        SELECT 'checkin'::text, m.id FROM m;
    SELECT g.user_id INTO account FROM guardians g
    WHERE g.church_id = app_church_id() AND g.id = duplicate AND g.user_id IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM guardians s WHERE s.id = survivor AND s.user_id IS NOT NULL);
    IF account IS NOT NULL THEN
        UPDATE guardians g SET user_id = NULL WHERE g.id = duplicate;
        UPDATE guardians g SET user_id = account WHERE g.id = survivor;
        RETURN QUERY SELECT 'account'::text, account;
    END IF;
END
$$;
-- +goose StatementEnd

REVOKE ALL ON FUNCTION app_merge_child_rows(uuid, uuid), app_merge_guardian_rows(uuid, uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION app_merge_child_rows(uuid, uuid), app_merge_guardian_rows(uuid, uuid) TO neemias_app;

-- +goose Down
DROP FUNCTION IF EXISTS app_merge_guardian_rows(uuid, uuid);
DROP FUNCTION IF EXISTS app_merge_child_rows(uuid, uuid);
DROP POLICY IF EXISTS guardians_delete ON guardians;
DROP POLICY IF EXISTS children_delete ON children;
REVOKE DELETE ON children, guardians FROM neemias_app;
DROP POLICY IF EXISTS guardian_children_update ON guardian_children;
REVOKE UPDATE (relationship) ON guardian_children FROM neemias_app;
