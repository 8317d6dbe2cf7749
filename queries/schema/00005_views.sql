-- The views the spec's generated queries select from (queries/generated/, from
-- spec/capabilities.yaml). Their names and columns are a contract with the generator: the
-- generated SQL is `SELECT <cols> FROM <view> WHERE church_id = ... [row filters] ...`, the row
-- filters reading church_id, child_id and class_id. All are security_invoker, so the caller's
-- row-level security applies to the tables underneath.

-- +goose Up

-- Children enrolled (not archived) per class and per age in completed years today, "today"
-- in the church's time zone. Children not placed in a class are not counted.
CREATE VIEW v_roster_counts WITH (security_invoker = true) AS
SELECT c.church_id,
       cl.id AS class_id,
       cl.name AS class_name,
       cl.min_age,
       cl.max_age,
       date_part('year', age((now() AT TIME ZONE ch.time_zone)::date, c.birth_date))::integer AS age_years,
       count(*) AS children
FROM children c
JOIN churches ch ON ch.id = c.church_id
JOIN classes cl ON cl.id = c.class_id AND cl.church_id = c.church_id
WHERE c.archived_at IS NULL
GROUP BY c.church_id, cl.id, cl.name, cl.min_age, cl.max_age,
         date_part('year', age((now() AT TIME ZONE ch.time_zone)::date, c.birth_date))::integer;

-- One row per guardian link of a child: a child has at least one guardian after enrollment.
CREATE VIEW v_child_detail WITH (security_invoker = true) AS
SELECT c.church_id,
       c.id AS child_id,
       c.name AS child_name,
       c.birth_date,
       c.class_id,
       cl.name AS class_name,
       g.id AS guardian_id,
       g.name AS guardian_name,
       gc.relationship,
       g.phone AS guardian_phone
FROM children c
JOIN guardian_children gc ON gc.child_id = c.id AND gc.church_id = c.church_id
JOIN guardians g ON g.id = gc.guardian_id AND g.church_id = c.church_id
LEFT JOIN classes cl ON cl.id = c.class_id AND cl.church_id = c.church_id;

-- Check-ins per service day and class.
CREATE VIEW v_attendance_daily WITH (security_invoker = true) AS
SELECT ck.church_id,
       ck.class_id,
       cl.name AS class_name,
       ck.service_date,
       count(*) AS checkins
FROM checkins ck
JOIN classes cl ON cl.id = ck.class_id AND cl.church_id = ck.church_id
GROUP BY ck.church_id, ck.class_id, cl.name, ck.service_date;

-- The check-ins, with the child's name and the class name.
CREATE VIEW v_checkins WITH (security_invoker = true) AS
SELECT ck.church_id,
       ck.id AS checkin_id,
       ck.child_id,
       c.name AS child_name,
       ck.class_id,
       cl.name AS class_name,
       ck.service_date,
       ck.checked_in_at,
       ck.checked_out_at
FROM checkins ck
JOIN children c ON c.id = ck.child_id AND c.church_id = ck.church_id
JOIN classes cl ON cl.id = ck.class_id AND cl.church_id = ck.church_id;

GRANT SELECT ON v_roster_counts, v_child_detail, v_attendance_daily, v_checkins TO neemias_app;

-- +goose Down
DROP VIEW IF EXISTS v_checkins;
DROP VIEW IF EXISTS v_attendance_daily;
DROP VIEW IF EXISTS v_child_detail;
DROP VIEW IF EXISTS v_roster_counts;
