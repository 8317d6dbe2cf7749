-- Rooms that fill up (issue 21): a class's optional soft capacity (past it a check-in succeeds
-- with a warning), firm capacity (past it a check-in is refused) and children per volunteer
-- (past it, counting the volunteers assigned to the class, a check-in warns), set by
-- `neemias-mcp class add|set`. The counts a check-in compares them with come from SECURITY
-- DEFINER functions: a guardian checking their child in sees only their own check-ins, and
-- the room's limit must not depend on who counts.

-- +goose Up
ALTER TABLE classes
    ADD COLUMN soft_capacity integer CHECK (soft_capacity BETWEEN 1 AND 1000),
    ADD COLUMN firm_capacity integer CHECK (firm_capacity BETWEEN 1 AND 1000),
    ADD COLUMN children_per_volunteer integer CHECK (children_per_volunteer BETWEEN 1 AND 100),
    ADD CONSTRAINT classes_capacity_order_check CHECK (soft_capacity IS NULL OR firm_capacity IS NULL OR soft_capacity <= firm_capacity);

-- Children in the class on the day: checked in and not picked up, in the caller's church.
CREATE FUNCTION app_class_headcount(class uuid, day date) RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
    SELECT count(*) FROM checkins ck
    WHERE ck.church_id = app_church_id() AND ck.class_id = class AND ck.service_date = day
      AND ck.checked_out_at IS NULL
$$;

-- Volunteers assigned to the class, in the caller's church.
CREATE FUNCTION app_class_volunteers(class uuid) RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
    SELECT count(*) FROM volunteer_assignments va
    WHERE va.church_id = app_church_id() AND va.class_id = class
$$;
REVOKE ALL ON FUNCTION app_class_headcount(uuid, date), app_class_volunteers(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION app_class_headcount(uuid, date), app_class_volunteers(uuid) TO neemias_app;

-- +goose Down
DROP FUNCTION IF EXISTS app_class_volunteers(uuid);
DROP FUNCTION IF EXISTS app_class_headcount(uuid, date);
ALTER TABLE classes
    DROP CONSTRAINT IF EXISTS classes_capacity_order_check,
    DROP COLUMN IF EXISTS children_per_volunteer,
    DROP COLUMN IF EXISTS firm_capacity,
    DROP COLUMN IF EXISTS soft_capacity;
