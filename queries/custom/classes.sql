-- name: FindClassForAge :one
-- The class whose age range holds the child's age in completed years on on_date; when ranges
-- overlap, the narrowest wins. No row when no class fits.
SELECT cl.id, cl.name, cl.min_age, cl.max_age
FROM classes cl
WHERE rf_church(cl.church_id, sqlc.arg(church_id)::uuid)
  AND cl.archived_at IS NULL
  AND date_part('year', age(sqlc.arg(on_date)::date, sqlc.arg(birth_date)::date))::integer
      BETWEEN cl.min_age AND cl.max_age
ORDER BY cl.max_age - cl.min_age, cl.min_age, cl.name
LIMIT 1;

-- name: GetClass :one
-- A class of the caller's church that the caller may use: a volunteer only their own.
SELECT cl.id, cl.name, cl.min_age, cl.max_age
FROM classes cl
WHERE rf_church(cl.church_id, sqlc.arg(church_id)::uuid)
  AND cl.id = sqlc.arg(class_id)::uuid
  AND cl.archived_at IS NULL
  AND rf_volunteer_assigned_classes(cl.id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text);

-- name: ListVisibleClasses :many
-- The classes the caller may use, youngest first: all of the church, a volunteer's own only.
-- The roster resource lists them (empty classes with 0), so they need its scope, roster:read,
-- as its generated query does.
SELECT cl.id, cl.name, cl.min_age, cl.max_age
FROM classes cl
WHERE rf_has_scope('roster:read')
  AND rf_church(cl.church_id, sqlc.arg(church_id)::uuid)
  AND cl.archived_at IS NULL
  AND rf_volunteer_assigned_classes(cl.id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
ORDER BY cl.min_age, cl.name;

-- name: CompleteClassIDs :many
-- Completion of a class id: the visible classes whose id starts with prefix (case-insensitive),
-- at most max_results of them.
SELECT cl.id
FROM classes cl
WHERE rf_church(cl.church_id, sqlc.arg(church_id)::uuid)
  AND cl.archived_at IS NULL
  AND cl.id::text LIKE lower(sqlc.arg(prefix)::text) || '%'
  AND rf_volunteer_assigned_classes(cl.id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
ORDER BY cl.min_age, cl.name
LIMIT sqlc.arg(max_results)::integer;

-- name: UsableClasses :many
-- The classes of the caller's church that the caller may check children in to (a volunteer only
-- their own), to resolve a class given by name.
SELECT cl.id, cl.name
FROM classes cl
WHERE rf_church(cl.church_id, sqlc.arg(church_id)::uuid)
  AND cl.archived_at IS NULL
  AND rf_volunteer_assigned_classes(cl.id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
ORDER BY cl.min_age, cl.name;

-- name: LockClassDay :exec
-- Serializes check-ins to one class on one day until the transaction ends, so two at once
-- cannot both take a room's last place (classes rows are not lockable by every role).
SELECT pg_advisory_xact_lock(hashtext('neemias.class_day'), hashtext(sqlc.arg(class_id)::uuid::text || sqlc.arg(day)::date::text));

-- name: ClassLoad :one
-- A class's limits and what a check-in compares them with: the children in it on the day and
-- its volunteers (counted for every role alike; see 00097).
SELECT cl.name, cl.soft_capacity, cl.firm_capacity, cl.children_per_volunteer,
       app_class_headcount(cl.id, sqlc.arg(day)::date)::bigint AS headcount,
       app_class_volunteers(cl.id)::bigint AS volunteers
FROM classes cl
WHERE rf_church(cl.church_id, sqlc.arg(church_id)::uuid) AND cl.id = sqlc.arg(class_id)::uuid;
