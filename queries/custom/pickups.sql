-- name: PickupAdults :many
-- A child's pick-up list (resource pickup_adults), one row per adult: the guardians not under a
-- restriction, then the live entries of pickup_adults, restrictions hidden from guardians (row
-- filter guardian_sees_no_restrictions). The child is named by handle or id; no row: the child
-- is not visible or has nobody on the list (PickupChild tells which). phone '' is none.
SELECT c.id AS child_id, c.handle, c.name AS child_name,
       a.adult_id, a.name AS adult_name, a.relationship, a.kind, a.phone, a.authorized, a.note
FROM children c
JOIN LATERAL (
    SELECT g.id AS adult_id, g.name, gc.relationship, 'guardian'::text AS kind, g.phone,
           true AS authorized, NULL::text AS note, 0 AS ord
    FROM guardian_children gc
    JOIN guardians g ON g.id = gc.guardian_id AND g.church_id = gc.church_id
    WHERE gc.child_id = c.id AND gc.church_id = c.church_id
      AND NOT EXISTS (SELECT 1 FROM pickup_adults r
                      WHERE r.child_id = c.id AND r.guardian_id = g.id
                        AND NOT r.authorized AND r.removed_at IS NULL)
    UNION ALL
    SELECT pa.id, pa.name, pa.relationship, 'trusted'::text, coalesce(pa.phone, ''), pa.authorized, pa.note, 1
    FROM pickup_adults pa
    WHERE pa.child_id = c.id AND pa.church_id = c.church_id AND pa.removed_at IS NULL
      AND rf_guardian_sees_no_restrictions(pa.restriction_id, sqlc.arg(role)::text)
) a ON true
WHERE rf_has_scope('pickups:read')
  AND rf_church(c.church_id, sqlc.arg(church_id)::uuid)
  AND (c.handle = sqlc.arg(handle)::text OR c.id = sqlc.narg(child_id)::uuid)
  AND rf_guardian_own_children(c.id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
  AND rf_volunteer_assigned_classes(c.class_id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
ORDER BY a.ord, a.name, a.adult_id
LIMIT 200;

-- name: PickupAdultsForCheckout :many
-- Who may take the child of a check-out home: the guardians not under a restriction and the
-- live authorized entries. Restrictions are checked apart (app_pickup_restriction), whatever
-- the caller may read.
SELECT g.id AS adult_id, g.name, 'guardian'::text AS kind
FROM guardian_children gc
JOIN guardians g ON g.id = gc.guardian_id AND g.church_id = gc.church_id
JOIN children c ON c.id = gc.child_id AND c.church_id = gc.church_id
WHERE rf_church(gc.church_id, sqlc.arg(church_id)::uuid)
  AND gc.child_id = sqlc.arg(child_id)::uuid
  AND rf_guardian_own_children(gc.child_id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
  AND rf_volunteer_assigned_classes(sqlc.arg(class_id)::uuid, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
  AND NOT EXISTS (SELECT 1 FROM pickup_adults r
                  WHERE r.child_id = gc.child_id AND r.guardian_id = g.id
                    AND NOT r.authorized AND r.removed_at IS NULL)
UNION ALL
SELECT pa.id, pa.name, 'trusted'::text
FROM pickup_adults pa
WHERE rf_church(pa.church_id, sqlc.arg(church_id)::uuid)
  AND pa.child_id = sqlc.arg(child_id)::uuid
  AND pa.authorized AND pa.removed_at IS NULL
  AND rf_guardian_own_children(pa.child_id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
  AND rf_volunteer_assigned_classes(sqlc.arg(class_id)::uuid, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text);

-- name: PickupRestriction :one
-- Whether an active restriction of the child names this adult (app_pickup_restriction, for
-- every role), and its note for a caller who may read restrictions: the spec's row filter
-- guardian_sees_no_restrictions asked of a restriction (any non-null restriction_id), so a
-- guardian is refused without being shown what the church recorded.
SELECT (r.note IS NOT NULL)::boolean AS restricted,
       coalesce(CASE WHEN rf_guardian_sees_no_restrictions(gen_random_uuid(), sqlc.arg(role)::text) THEN r.note END, '')::text AS note
FROM (SELECT app_pickup_restriction(sqlc.arg(child_id)::uuid, sqlc.arg(adult_name)::text) AS note) r;

-- name: PickupChild :one
-- The child of a pick-up list or its change, by handle or id, if the caller may see it.
SELECT c.id, c.handle, c.name
FROM children c
WHERE rf_church(c.church_id, sqlc.arg(church_id)::uuid)
  AND (c.handle = sqlc.arg(handle)::text OR c.id = sqlc.narg(child_id)::uuid)
  AND rf_guardian_own_children(c.id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text);

-- name: InsertPickupAdult :one
-- Adds an entry to a child's pick-up list. A restriction whose name is one of the child's
-- guardians' points at that guardian (who then drops off the authorized list).
INSERT INTO pickup_adults (church_id, child_id, guardian_id, name, relationship, phone, authorized, note, created_by)
SELECT sqlc.arg(church_id)::uuid, c.id,
       CASE WHEN NOT sqlc.arg(authorized)::boolean THEN
           (SELECT g.id FROM guardian_children gc JOIN guardians g ON g.id = gc.guardian_id AND g.church_id = gc.church_id
            WHERE gc.child_id = c.id AND app_fold_name(g.name) = app_fold_name(sqlc.arg(name)::text)
            ORDER BY g.id LIMIT 1)
       END,
       btrim(sqlc.arg(name)::text), btrim(sqlc.arg(relationship)::text), sqlc.narg(phone)::text,
       sqlc.arg(authorized)::boolean, sqlc.narg(note)::text, sqlc.arg(created_by)::uuid
FROM children c
WHERE rf_church(c.church_id, sqlc.arg(church_id)::uuid)
  AND c.id = sqlc.arg(child_id)::uuid
  AND rf_guardian_own_children(c.id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
RETURNING id, authorized, created_at;

-- name: GuardianNamed :one
-- Whether the child has a guardian of this name (an authorized entry would repeat them).
SELECT EXISTS (
    SELECT 1 FROM guardian_children gc JOIN guardians g ON g.id = gc.guardian_id AND g.church_id = gc.church_id
    WHERE gc.church_id = sqlc.arg(church_id)::uuid AND gc.child_id = sqlc.arg(child_id)::uuid
      AND app_fold_name(g.name) = app_fold_name(sqlc.arg(name)::text)
)::boolean;

-- name: GetPickupAdultForRemoval :one
-- The entry to remove, locked, if the caller may see and change it.
SELECT pa.id, pa.child_id, pa.authorized, pa.removed_at
FROM pickup_adults pa
WHERE rf_church(pa.church_id, sqlc.arg(church_id)::uuid)
  AND pa.id = sqlc.arg(adult_id)::uuid
  AND rf_guardian_own_children(pa.child_id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
FOR UPDATE OF pa;

-- name: RemovePickupAdult :one
-- Takes a live entry off the list (kept, with who removed it and when).
UPDATE pickup_adults
SET removed_at = now(), removed_by = sqlc.arg(removed_by)::uuid
WHERE church_id = sqlc.arg(church_id)::uuid AND id = sqlc.arg(adult_id)::uuid AND removed_at IS NULL
RETURNING id, removed_at;
