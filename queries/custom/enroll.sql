-- name: InsertChild :one
-- neemias_child_enroll writes the child, the guardian, the link and the consent in one
-- store.InTx; only ADMIN and CADASTRO may (row-level security). Returns nothing personal.
INSERT INTO children (church_id, name, birth_date, class_id, created_by, allergies, medical_notes)
VALUES (sqlc.arg(church_id)::uuid, sqlc.arg(name)::text, sqlc.arg(birth_date)::date,
        sqlc.narg(class_id)::uuid, sqlc.arg(created_by)::uuid,
        sqlc.narg(allergies)::text, sqlc.narg(medical_notes)::text)
RETURNING id, class_id, created_at;

-- name: InsertGuardian :one
-- user_id links the guardian to a login account, when they have one.
INSERT INTO guardians (church_id, user_id, name, phone)
VALUES (sqlc.arg(church_id)::uuid, sqlc.narg(user_id)::uuid, sqlc.arg(name)::text,
        sqlc.arg(phone)::text)
RETURNING id;

-- name: LinkGuardianChild :exec
INSERT INTO guardian_children (church_id, guardian_id, child_id, relationship)
VALUES (sqlc.arg(church_id)::uuid, sqlc.arg(guardian_id)::uuid, sqlc.arg(child_id)::uuid,
        sqlc.arg(relationship)::text);

-- name: InsertConsent :one
-- The guardian's consent (LGPD art. 14), recorded by the calling user (granted_by).
INSERT INTO consent_records (church_id, guardian_id, child_id, text_version, legal_basis, granted_by)
VALUES (sqlc.arg(church_id)::uuid, sqlc.arg(guardian_id)::uuid, sqlc.arg(child_id)::uuid,
        sqlc.arg(text_version)::text, sqlc.arg(legal_basis)::text, sqlc.arg(granted_by)::uuid)
RETURNING id, granted_at;

-- name: GetChildForArchive :one
-- The child to archive (neemias_child_archive), locked for the rest of the transaction, with
-- whether they are checked in on the church's today and not picked up yet.
SELECT c.id, c.handle, c.archived_at,
       EXISTS (SELECT 1 FROM checkins ck
               WHERE ck.church_id = c.church_id AND ck.child_id = c.id
                 AND ck.service_date = sqlc.arg(today)::date AND ck.checked_out_at IS NULL) AS in_class
FROM children c
WHERE rf_church(c.church_id, sqlc.arg(church_id)::uuid)
  AND c.id = sqlc.arg(child_id)::uuid
FOR UPDATE OF c;

-- name: ArchiveChild :one
-- Archives the child; nothing else changes (check-ins, consents and pick-up lists are history).
UPDATE children SET archived_at = now()
WHERE church_id = sqlc.arg(church_id)::uuid AND id = sqlc.arg(child_id)::uuid AND archived_at IS NULL
RETURNING archived_at;

-- name: GetGuardianLinkForUnlink :one
-- The child and guardian of neemias_guardian_unlink, the child locked for the rest of the
-- transaction (two unlinks at once cannot leave the child with no guardian): whether they are
-- linked, and how many guardians the child has.
SELECT c.id AS child_id, g.id AS guardian_id,
       EXISTS (SELECT 1 FROM guardian_children gc WHERE gc.child_id = c.id AND gc.guardian_id = g.id) AS linked,
       (SELECT count(*) FROM guardian_children gc WHERE gc.child_id = c.id)::bigint AS guardians
FROM children c
JOIN guardians g ON g.church_id = c.church_id
WHERE rf_church(c.church_id, sqlc.arg(church_id)::uuid)
  AND c.id = sqlc.arg(child_id)::uuid
  AND g.id = sqlc.arg(guardian_id)::uuid
FOR UPDATE OF c;

-- name: UnlinkGuardian :execrows
-- Removes the link; the guardian's record and consent records stay.
DELETE FROM guardian_children
WHERE church_id = sqlc.arg(church_id)::uuid AND child_id = sqlc.arg(child_id)::uuid AND guardian_id = sqlc.arg(guardian_id)::uuid;
