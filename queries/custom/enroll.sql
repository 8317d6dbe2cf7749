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
