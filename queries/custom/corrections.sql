-- Corrections and the record's life (issue 22): neemias_child_correct,
-- neemias_guardian_correct, neemias_child_merge, neemias_guardian_merge and
-- neemias_consent_revoke. Each tool's first query selects (and locks) the rows it acts on with
-- its row filters; SELECT ... FOR UPDATE also passes the tables' UPDATE policies, so a role
-- without children:write finds nothing to act on. Grants: 00106, 00107; policies: 00110.


-- name: GetChildForCorrect :one
-- The child to correct (neemias_child_correct), locked, with the values a correction replaces.
SELECT c.id, c.handle, c.name, c.birth_date, c.class_id, c.allergies, c.medical_notes
FROM children c
WHERE rf_church(c.church_id, sqlc.arg(church_id)::uuid)
  AND c.id = sqlc.arg(child_id)::uuid
FOR UPDATE OF c;

-- name: CorrectChild :one
-- Replaces the child's values (those the call leaves alone are passed as they were).
UPDATE children
SET name = sqlc.arg(name)::text, birth_date = sqlc.arg(birth_date)::date, class_id = sqlc.narg(class_id)::uuid,
    allergies = sqlc.narg(allergies)::text, medical_notes = sqlc.narg(medical_notes)::text
WHERE church_id = sqlc.arg(church_id)::uuid AND id = sqlc.arg(child_id)::uuid
RETURNING now()::timestamptz AS corrected_at;

-- name: FindSameChildOfFamily :one
-- Another enrolled child with this name (folded) and birth date sharing a guardian with the
-- child: the record a correction would duplicate, to merge instead.
SELECT o.id FROM children o
WHERE o.church_id = sqlc.arg(church_id)::uuid
  AND o.id <> sqlc.arg(child_id)::uuid
  AND o.archived_at IS NULL
  AND app_fold_name(o.name) = app_fold_name(sqlc.arg(name)::text)
  AND o.birth_date = sqlc.arg(birth_date)::date
  AND EXISTS (SELECT 1 FROM guardian_children a
              JOIN guardian_children b ON b.guardian_id = a.guardian_id AND b.church_id = a.church_id
              WHERE a.child_id = o.id AND b.child_id = sqlc.arg(child_id)::uuid)
ORDER BY o.created_at, o.id
LIMIT 1;

-- name: GetGuardianForCorrect :one
-- The guardian to correct (neemias_guardian_correct), locked, with the values a correction replaces.
SELECT g.id, g.name, g.phone
FROM guardians g
WHERE rf_church(g.church_id, sqlc.arg(church_id)::uuid)
  AND g.id = sqlc.arg(guardian_id)::uuid
FOR UPDATE OF g;

-- name: CorrectGuardian :one
UPDATE guardians SET name = sqlc.arg(name)::text, phone = sqlc.arg(phone)::text
WHERE church_id = sqlc.arg(church_id)::uuid AND id = sqlc.arg(guardian_id)::uuid
RETURNING now()::timestamptz AS corrected_at;

-- name: GetGuardianLinkRelationship :one
-- How the guardian is related to the child, the link locked; no row when they are not linked.
SELECT gc.relationship FROM guardian_children gc
WHERE gc.church_id = sqlc.arg(church_id)::uuid
  AND gc.guardian_id = sqlc.arg(guardian_id)::uuid AND gc.child_id = sqlc.arg(child_id)::uuid
FOR UPDATE OF gc;

-- name: CorrectGuardianRelationship :execrows
UPDATE guardian_children SET relationship = sqlc.arg(relationship)::text
WHERE church_id = sqlc.arg(church_id)::uuid
  AND guardian_id = sqlc.arg(guardian_id)::uuid AND child_id = sqlc.arg(child_id)::uuid;

-- name: GuardiansWithPhoneEnding :many
-- The church's other guardians whose phone ends in the same eight digits: the candidates for
-- "the same person" (internal/logic compares the full number and the names, as the importer does).
SELECT g.id, g.name, g.phone FROM guardians g
WHERE g.church_id = sqlc.arg(church_id)::uuid
  AND g.id <> sqlc.arg(guardian_id)::uuid
  AND right(regexp_replace(g.phone, '[^0-9]', '', 'g'), 8) = sqlc.arg(tail)::text
ORDER BY g.created_at, g.id;

-- name: GetChildrenForMerge :many
-- The survivor and the duplicate of neemias_child_merge, locked in id order (two merges of
-- the same pair at once queue instead of deadlocking).
SELECT c.id, c.handle, c.archived_at
FROM children c
WHERE rf_church(c.church_id, sqlc.arg(church_id)::uuid)
  AND c.id = ANY (ARRAY[sqlc.arg(survivor_id)::uuid, sqlc.arg(duplicate_id)::uuid])
ORDER BY c.id
FOR UPDATE OF c;

-- name: SharedCheckinDate :one
-- The first service day on which both children were checked in: two children, not one.
SELECT a.service_date
FROM checkins a
JOIN checkins b ON b.church_id = a.church_id AND b.service_date = a.service_date
WHERE a.church_id = sqlc.arg(church_id)::uuid
  AND a.child_id = sqlc.arg(survivor_id)::uuid AND b.child_id = sqlc.arg(duplicate_id)::uuid
ORDER BY a.service_date
LIMIT 1;

-- name: PickupListsDisagree :one
-- Whether one adult is live on both children's pick-up lists, authorized on one and refused
-- on the other: a merge must not decide which is true.
SELECT EXISTS (
    SELECT 1 FROM pickup_adults s
    JOIN pickup_adults d ON d.church_id = s.church_id AND app_fold_name(d.name) = app_fold_name(s.name)
    WHERE s.church_id = sqlc.arg(church_id)::uuid
      AND s.child_id = sqlc.arg(survivor_id)::uuid AND d.child_id = sqlc.arg(duplicate_id)::uuid
      AND s.removed_at IS NULL AND d.removed_at IS NULL AND s.authorized <> d.authorized)::boolean AS disagree;

-- name: LinkChildGuardiansToSurvivor :many
-- The duplicate child's guardians, linked to the survivor with their relationship (a guardian
-- of both keeps the survivor's link); returns the guardians newly linked.
INSERT INTO guardian_children (church_id, guardian_id, child_id, relationship, created_at)
SELECT gc.church_id, gc.guardian_id, sqlc.arg(survivor_id)::uuid, gc.relationship, gc.created_at
FROM guardian_children gc
WHERE gc.church_id = sqlc.arg(church_id)::uuid AND gc.child_id = sqlc.arg(duplicate_id)::uuid
ON CONFLICT (guardian_id, child_id) DO NOTHING
RETURNING guardian_id;

-- name: UnlinkChildGuardians :execrows
DELETE FROM guardian_children
WHERE church_id = sqlc.arg(church_id)::uuid AND child_id = sqlc.arg(child_id)::uuid;

-- name: MergeChildRows :many
-- Check-ins, pick-up entries and consents of the duplicate, moved (00106's function).
SELECT m.row_kind::text AS kind, m.row_id::uuid AS id
FROM app_merge_child_rows(sqlc.arg(survivor_id)::uuid, sqlc.arg(duplicate_id)::uuid) AS m;

-- name: DeleteChild :execrows
-- Removes a merged duplicate, which nothing refers to any more.
DELETE FROM children WHERE church_id = sqlc.arg(church_id)::uuid AND id = sqlc.arg(child_id)::uuid;

-- name: GetGuardiansForMerge :many
-- The survivor and the duplicate of neemias_guardian_merge, locked in id order, with whether
-- each has a login account.
SELECT g.id, (g.user_id IS NOT NULL)::boolean AS has_account
FROM guardians g
WHERE rf_church(g.church_id, sqlc.arg(church_id)::uuid)
  AND g.id = ANY (ARRAY[sqlc.arg(survivor_id)::uuid, sqlc.arg(duplicate_id)::uuid])
ORDER BY g.id
FOR UPDATE OF g;

-- name: LinkGuardianChildrenToSurvivor :many
-- The duplicate guardian's children, linked to the survivor with their relationship (a child
-- of both keeps the survivor's link); returns the children newly linked.
INSERT INTO guardian_children (church_id, guardian_id, child_id, relationship, created_at)
SELECT gc.church_id, sqlc.arg(survivor_id)::uuid, gc.child_id, gc.relationship, gc.created_at
FROM guardian_children gc
WHERE gc.church_id = sqlc.arg(church_id)::uuid AND gc.guardian_id = sqlc.arg(duplicate_id)::uuid
ON CONFLICT (guardian_id, child_id) DO NOTHING
RETURNING child_id;

-- name: UnlinkGuardianChildren :execrows
DELETE FROM guardian_children
WHERE church_id = sqlc.arg(church_id)::uuid AND guardian_id = sqlc.arg(guardian_id)::uuid;

-- name: MergeGuardianRows :many
-- Consents, restrictions, pick-ups and the login account of the duplicate, moved (00106).
SELECT m.row_kind::text AS kind, m.row_id::uuid AS id
FROM app_merge_guardian_rows(sqlc.arg(survivor_id)::uuid, sqlc.arg(duplicate_id)::uuid) AS m;

-- name: DeleteGuardian :execrows
-- Removes a merged duplicate, which nothing refers to any more.
DELETE FROM guardians WHERE church_id = sqlc.arg(church_id)::uuid AND id = sqlc.arg(guardian_id)::uuid;

-- name: GetChildForConsentRevoke :one
-- The child whose consent is revoked (neemias_consent_revoke), locked.
SELECT c.id, c.handle
FROM children c
WHERE rf_church(c.church_id, sqlc.arg(church_id)::uuid)
  AND c.id = sqlc.arg(child_id)::uuid
FOR UPDATE OF c;

-- name: CountConsents :one
-- The child's consent records (of one guardian, when given): all of them and those in force.
SELECT count(*)::bigint AS total,
       (count(*) FILTER (WHERE r.revoked_at IS NULL))::bigint AS in_force
FROM consent_records r
WHERE r.church_id = sqlc.arg(church_id)::uuid
  AND r.child_id = sqlc.arg(child_id)::uuid
  AND (sqlc.narg(guardian_id)::uuid IS NULL OR r.guardian_id = sqlc.narg(guardian_id)::uuid);

-- name: LastConsentRevocation :one
-- When the child's (or the guardian's) latest consent record was revoked; no row when none was.
SELECT r.revoked_at FROM consent_records r
WHERE r.church_id = sqlc.arg(church_id)::uuid
  AND r.child_id = sqlc.arg(child_id)::uuid
  AND r.revoked_at IS NOT NULL
  AND (sqlc.narg(guardian_id)::uuid IS NULL OR r.guardian_id = sqlc.narg(guardian_id)::uuid)
ORDER BY r.revoked_at DESC
LIMIT 1;

-- name: RevokeConsents :many
-- Revokes the child's consents in force (of one guardian, when given); the trigger of 00107
-- takes the child off the listings when none is left.
UPDATE consent_records SET revoked_at = greatest(now(), granted_at)
WHERE church_id = sqlc.arg(church_id)::uuid
  AND child_id = sqlc.arg(child_id)::uuid
  AND revoked_at IS NULL
  AND (sqlc.narg(guardian_id)::uuid IS NULL OR guardian_id = sqlc.narg(guardian_id)::uuid)
RETURNING id, revoked_at;
