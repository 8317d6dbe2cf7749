-- name: InsertAudit :exec
-- Appends an entry to the append-only audit log: ids only, never personal data. church_id and
-- user_id must be the caller's (NULL for the anonymous caller): row-level security refuses
-- entries on behalf of someone else. No RETURNING: only an ADMIN may read the log back.
INSERT INTO audit_log (church_id, user_id, client_id, capability, action, target_ids, outcome, correlation_id)
VALUES (sqlc.narg(church_id)::uuid, sqlc.narg(user_id)::uuid, sqlc.narg(client_id)::text,
        sqlc.arg(capability)::text, sqlc.arg(action)::text, sqlc.arg(target_ids)::uuid[],
        sqlc.arg(outcome)::text, sqlc.narg(correlation_id)::text);

-- name: ListAudit :many
-- The audit trail of one church for an operator (neemias-mcp audit list|export, the answer to a
-- guardian's data-access request): optionally only the entries naming one record (a child's id
-- among the targets), one user, one client, and a period [since, until); oldest first, at most
-- max_rows. Run in the owner's maintenance transaction.
SELECT id, at, church_id, user_id, client_id, capability, action, target_ids, outcome, correlation_id
FROM audit_log
WHERE church_id = sqlc.arg(church_id)::uuid
  AND (sqlc.narg(target_id)::uuid IS NULL OR sqlc.narg(target_id)::uuid = ANY (target_ids))
  AND (sqlc.narg(user_id)::uuid IS NULL OR user_id = sqlc.narg(user_id)::uuid)
  AND (sqlc.narg(client_id)::text IS NULL OR client_id = sqlc.narg(client_id)::text)
  AND (sqlc.narg(since)::timestamptz IS NULL OR at >= sqlc.narg(since)::timestamptz)
  AND (sqlc.narg(until)::timestamptz IS NULL OR at < sqlc.narg(until)::timestamptz)
ORDER BY at, id
LIMIT sqlc.arg(max_rows)::integer;
