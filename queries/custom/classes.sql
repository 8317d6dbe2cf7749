-- name: FindClassForAge :one
-- The class whose age range holds the child's age in completed years on on_date; when ranges
-- overlap, the narrowest wins. No row when no class fits.
SELECT cl.id, cl.name, cl.min_age, cl.max_age
FROM classes cl
WHERE cl.church_id = sqlc.arg(church_id)::uuid
  AND cl.archived_at IS NULL
  AND date_part('year', age(sqlc.arg(on_date)::date, sqlc.arg(birth_date)::date))::integer
      BETWEEN cl.min_age AND cl.max_age
ORDER BY cl.max_age - cl.min_age, cl.min_age, cl.name
LIMIT 1;

-- name: GetClass :one
-- A class of the caller's church that the caller may use: a volunteer only their own.
SELECT cl.id, cl.name, cl.min_age, cl.max_age
FROM classes cl
WHERE cl.church_id = sqlc.arg(church_id)::uuid
  AND cl.id = sqlc.arg(class_id)::uuid
  AND cl.archived_at IS NULL
  AND (sqlc.arg(role)::text <> 'VOLUNTARIO' OR cl.id IN (
        SELECT va.class_id FROM volunteer_assignments va WHERE va.user_id = sqlc.arg(user_id)::uuid));

-- name: ListVisibleClasses :many
-- The classes the caller may use, youngest first: all of the church, a volunteer's own only.
SELECT cl.id, cl.name, cl.min_age, cl.max_age
FROM classes cl
WHERE cl.church_id = sqlc.arg(church_id)::uuid
  AND cl.archived_at IS NULL
  AND (sqlc.arg(role)::text <> 'VOLUNTARIO' OR cl.id IN (
        SELECT va.class_id FROM volunteer_assignments va WHERE va.user_id = sqlc.arg(user_id)::uuid))
ORDER BY cl.min_age, cl.name;

-- name: CompleteClassIDs :many
-- Completion of a class id: the visible classes whose id starts with prefix (case-insensitive),
-- at most max_results of them.
SELECT cl.id
FROM classes cl
WHERE cl.church_id = sqlc.arg(church_id)::uuid
  AND cl.archived_at IS NULL
  AND cl.id::text LIKE lower(sqlc.arg(prefix)::text) || '%'
  AND (sqlc.arg(role)::text <> 'VOLUNTARIO' OR cl.id IN (
        SELECT va.class_id FROM volunteer_assignments va WHERE va.user_id = sqlc.arg(user_id)::uuid))
ORDER BY cl.min_age, cl.name
LIMIT sqlc.arg(max_results)::integer;
