-- name: AttendanceChildren :one
-- How many different children checked in from from_day to to_day (attendance_summary): the
-- answer to "how many kids came?", which summing the days' check-ins overstates.
SELECT count(DISTINCT ck.child_id)::bigint
FROM checkins ck
WHERE rf_has_scope('attendance:read')
  AND rf_church(ck.church_id, sqlc.arg(church_id)::uuid)
  AND rf_volunteer_assigned_classes(ck.class_id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
  AND ck.service_date BETWEEN sqlc.arg(from_day)::date AND sqlc.arg(to_day)::date
  AND (sqlc.narg(class_id)::uuid IS NULL OR ck.class_id = sqlc.narg(class_id)::uuid);

-- name: AttendanceNearestDay :many
-- The service day with check-ins the caller may see nearest to the range from_day..to_day
-- (for an empty answer to name where data is); none when there is none at all.
SELECT ck.service_date
FROM checkins ck
WHERE rf_has_scope('attendance:read')
  AND rf_church(ck.church_id, sqlc.arg(church_id)::uuid)
  AND rf_volunteer_assigned_classes(ck.class_id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
  AND (sqlc.narg(class_id)::uuid IS NULL OR ck.class_id = sqlc.narg(class_id)::uuid)
GROUP BY ck.service_date
ORDER BY least(abs(ck.service_date - sqlc.arg(from_day)::date), abs(ck.service_date - sqlc.arg(to_day)::date)), ck.service_date DESC
LIMIT 1;

-- name: AttendanceCoverage :one
-- The classes an attendance answer covers: the names of those the caller may see and how many
-- of the church's it may not (a volunteer sees their own), so the answer can say it is partial.
SELECT coalesce(array_agg(cl.name ORDER BY cl.min_age, cl.name)
                FILTER (WHERE rf_volunteer_assigned_classes(cl.id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)),
                '{}')::text[] AS visible,
       (count(*) FILTER (WHERE NOT rf_volunteer_assigned_classes(cl.id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)))::bigint AS hidden
FROM classes cl
WHERE rf_has_scope('attendance:read')
  AND rf_church(cl.church_id, sqlc.arg(church_id)::uuid)
  AND cl.archived_at IS NULL;

-- name: AttendanceClasses :many
-- Per class, the different children and the check-ins from from_day to to_day
-- (attendance_summary's classes): "how many kids came to Maternal in June?".
SELECT ck.class_id, cl.name AS class_name,
       count(DISTINCT ck.child_id)::bigint AS children,
       count(*)::bigint AS checkins
FROM checkins ck
JOIN classes cl ON cl.id = ck.class_id AND cl.church_id = ck.church_id
WHERE rf_has_scope('attendance:read')
  AND rf_church(ck.church_id, sqlc.arg(church_id)::uuid)
  AND rf_volunteer_assigned_classes(ck.class_id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
  AND ck.service_date BETWEEN sqlc.arg(from_day)::date AND sqlc.arg(to_day)::date
  AND (sqlc.narg(class_id)::uuid IS NULL OR ck.class_id = sqlc.narg(class_id)::uuid)
GROUP BY ck.class_id, cl.name
ORDER BY cl.name;
