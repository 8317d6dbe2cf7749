-- name: InsertAudit :exec
-- Appends an entry to the append-only audit log: ids only, never personal data. church_id and
-- user_id must be the caller's (NULL for the anonymous caller): row-level security refuses
-- entries on behalf of someone else. No RETURNING: only an ADMIN may read the log back.
INSERT INTO audit_log (church_id, user_id, client_id, capability, action, target_ids, outcome, correlation_id)
VALUES (sqlc.narg(church_id)::uuid, sqlc.narg(user_id)::uuid, sqlc.narg(client_id)::text,
        sqlc.arg(capability)::text, sqlc.arg(action)::text, sqlc.arg(target_ids)::uuid[],
        sqlc.arg(outcome)::text, sqlc.narg(correlation_id)::text);
