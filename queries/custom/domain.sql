-- Queries behind the domain rules of the tools (internal/logic): the check-in window and a
-- child's birth, and duplicate enrollments.

-- name: ChildBirthDate :one
-- A child's birth date, for the rule that nobody is checked in before being born. The caller
-- has seen the child already (GetChildForCheckin); row-level security applies as there.
SELECT c.birth_date FROM children c
WHERE c.church_id = sqlc.arg(church_id)::uuid AND c.id = sqlc.arg(child_id)::uuid;

-- name: LockEnrollment :exec
-- Serializes enrollments of one child (church, name, birth date) for the rest of the
-- transaction, so two identical enrollments at once cannot both pass FindDuplicateChild.
SELECT pg_advisory_xact_lock(hashtextextended(
    sqlc.arg(church_id)::uuid::text || '/' || lower(btrim(sqlc.arg(name)::text)) || '/' || sqlc.arg(birth_date)::date::text, 0));

-- name: FindDuplicateChild :one
-- An enrolled child of the church with the same name (case and surrounding spaces aside), birth
-- date and a guardian whose phone ends in the same ten digits (area code and number, with or
-- without the country code and punctuation); with that guardian, and when the child's consent
-- was revoked (the enrollment then records the new consent on this record).
SELECT c.id, g.id AS guardian_id, c.class_id, c.consent_revoked_at FROM children c
JOIN guardian_children gc ON gc.child_id = c.id
JOIN guardians g ON g.id = gc.guardian_id
WHERE c.church_id = sqlc.arg(church_id)::uuid
  AND c.archived_at IS NULL
  AND lower(btrim(c.name)) = lower(btrim(sqlc.arg(name)::text))
  AND c.birth_date = sqlc.arg(birth_date)::date
  AND right(regexp_replace(g.phone, '[^0-9]', '', 'g'), 10) = sqlc.arg(phone_tail)::text
ORDER BY c.created_at
LIMIT 1;
