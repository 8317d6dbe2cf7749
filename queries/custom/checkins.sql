-- name: EnsureServiceDay :exec
-- Opens the service day of a date if it is not open yet; a check-in needs it. Like every
-- query here it runs in store.InTx: row-level security applies on top of the explicit row
-- filters, calls of the spec's row filter functions (queries/schema/00090_spec_row_filters.sql).
INSERT INTO service_days (church_id, service_date)
VALUES (sqlc.arg(church_id)::uuid, sqlc.arg(service_date)::date)
ON CONFLICT (church_id, service_date) DO NOTHING;

-- name: GetChildForCheckin :one
-- The child to check in, if the caller may see it, with its handle, name (for the label) and
-- class, and when their consent was revoked (set: check-in is refused, with that reason).
SELECT c.id, c.class_id, c.handle, c.name, cl.name AS class_name, c.allergies, c.medical_notes, c.consent_revoked_at
FROM children c
LEFT JOIN classes cl ON cl.id = c.class_id AND cl.church_id = c.church_id
WHERE rf_church(c.church_id, sqlc.arg(church_id)::uuid)
  AND c.id = sqlc.arg(child_id)::uuid
  AND c.archived_at IS NULL
  AND rf_guardian_own_children(c.id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
  AND rf_volunteer_assigned_classes(c.class_id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text);

-- name: InsertCheckin :one
-- Registers a check-in; returns no row when the child already has one that day (the
-- idempotent retry: then read it with GetCheckinByChildDate).
INSERT INTO checkins (church_id, child_id, class_id, service_date, checked_in_by,
                      pickup_code_salt, pickup_code_hash, pickup_key_id)
VALUES (sqlc.arg(church_id)::uuid, sqlc.arg(child_id)::uuid, sqlc.arg(class_id)::uuid,
        sqlc.arg(service_date)::date, sqlc.arg(checked_in_by)::uuid,
        sqlc.arg(pickup_code_salt)::bytea, sqlc.arg(pickup_code_hash)::bytea, sqlc.narg(pickup_key_id)::text)
ON CONFLICT (child_id, service_date) DO NOTHING
RETURNING id, child_id, class_id, service_date, checked_in_at;

-- name: GetCheckinByChildDate :one
-- The check-in of a child on a service day.
SELECT ck.id, ck.child_id, ck.class_id, ck.service_date, ck.checked_in_at, ck.checked_out_at, cl.name AS class_name
FROM checkins ck
JOIN classes cl ON cl.id = ck.class_id AND cl.church_id = ck.church_id
WHERE rf_church(ck.church_id, sqlc.arg(church_id)::uuid)
  AND ck.child_id = sqlc.arg(child_id)::uuid
  AND ck.service_date = sqlc.arg(service_date)::date;

-- name: GetCheckinForCheckout :one
-- Locks the check-in to close, if the caller may see it (guardian: own children; volunteer:
-- assigned classes). Compare the code in Go with store.CheckPickupCode, under the key
-- pickup_key_id names (NULL: an unkeyed hash of before migration 00103).
SELECT ck.id, ck.child_id, ck.class_id, ck.service_date, ck.checked_in_at,
       ck.pickup_code_salt, ck.pickup_code_hash, ck.pickup_key_id, ck.failed_pickup_attempts, ck.locked_at,
       ck.checked_out_at, ck.picked_up_by_name, coalesce(app_user_name(ck.checked_out_by), '')::text AS released_by,
       c.handle, c.name AS child_name, cl.name AS class_name
FROM checkins ck
JOIN children c ON c.id = ck.child_id AND c.church_id = ck.church_id
JOIN classes cl ON cl.id = ck.class_id AND cl.church_id = ck.church_id
WHERE rf_church(ck.church_id, sqlc.arg(church_id)::uuid)
  AND ck.id = sqlc.arg(checkin_id)::uuid
  AND rf_guardian_own_children(ck.child_id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
  AND rf_volunteer_assigned_classes(ck.class_id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
FOR UPDATE OF ck;

-- name: RecordFailedPickup :one
-- Counts a wrong pick-up code and locks the check-in when the count reaches max_attempts
-- (store.MaxPickupAttempts). Commit it even though the tool fails: return store.CommitWith(err).
UPDATE checkins
SET failed_pickup_attempts = failed_pickup_attempts + 1,
    locked_at = CASE WHEN failed_pickup_attempts + 1 >= sqlc.arg(max_attempts)::integer
                     THEN now() ELSE locked_at END
WHERE church_id = sqlc.arg(church_id)::uuid
  AND id = sqlc.arg(checkin_id)::uuid
  AND checked_out_at IS NULL
  AND locked_at IS NULL
RETURNING failed_pickup_attempts, locked_at;

-- name: CompleteCheckout :one
-- Closes an open, unlocked check-in; returns no row when it is closed or locked already.
UPDATE checkins
SET checked_out_at = greatest(now(), checked_in_at),
    checked_out_by = sqlc.arg(checked_out_by)::uuid,
    picked_up_by_guardian = sqlc.narg(picked_up_by_guardian)::uuid,
    picked_up_by_adult = sqlc.narg(picked_up_by_adult)::uuid,
    picked_up_by_name = sqlc.arg(picked_up_by_name)::text
WHERE church_id = sqlc.arg(church_id)::uuid
  AND id = sqlc.arg(checkin_id)::uuid
  AND checked_out_at IS NULL
  AND locked_at IS NULL
RETURNING id, child_id, checked_out_at, coalesce(app_user_name(checked_out_by), '')::text AS released_by;

-- name: RevokedChildByHandle :one
-- When the consent of the child of this handle was revoked, for a check-in that names them by
-- handle: such a child is on no class list (00107), and the refusal should say why.
SELECT c.consent_revoked_at::timestamptz AS consent_revoked_at
FROM children c
WHERE rf_church(c.church_id, sqlc.arg(church_id)::uuid)
  AND c.handle = sqlc.arg(handle)::text
  AND c.archived_at IS NULL AND c.consent_revoked_at IS NOT NULL
  AND rf_guardian_own_children(c.id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
  AND rf_volunteer_assigned_classes(c.class_id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text);
