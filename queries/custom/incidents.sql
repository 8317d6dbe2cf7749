-- The incident register (migration 00109, internal/incident). Every query runs in the owner's
-- maintenance transaction: requests' role cannot reach these tables.

-- name: InsertIncident :one
INSERT INTO incidents (recorded_by, detected_at, occurred_from, occurred_until, summary,
                       actor_user_id, actor_client_id, scope_basis, data_kinds, relevant_risk,
                       measures, dpo)
VALUES (sqlc.arg(recorded_by)::text, sqlc.arg(detected_at)::timestamptz,
        sqlc.narg(occurred_from)::timestamptz, sqlc.narg(occurred_until)::timestamptz,
        sqlc.arg(summary)::text, sqlc.narg(actor_user_id)::uuid, sqlc.narg(actor_client_id)::text,
        sqlc.arg(scope_basis)::text, sqlc.arg(data_kinds)::text[], sqlc.arg(relevant_risk)::boolean,
        sqlc.narg(measures)::text, sqlc.narg(dpo)::text)
RETURNING id, recorded_at;

-- name: InsertIncidentChurch :exec
INSERT INTO incident_churches (incident_id, church_id, children, guardians, audit_entries,
                               children_total, guardians_total)
VALUES (sqlc.arg(incident_id)::uuid, sqlc.arg(church_id)::uuid, sqlc.arg(children)::integer,
        sqlc.arg(guardians)::integer, sqlc.arg(audit_entries)::integer,
        sqlc.arg(children_total)::integer, sqlc.arg(guardians_total)::integer);

-- name: IncidentReachByAudit :many
-- What one actor (a user, an OAuth client or both) reached in a period, per church, from the
-- allowed entries of the audit log: the entries, the capabilities used (their PII rules say
-- which kinds of data), and the children and guardians among the records the entries name. A
-- check-in, consent or pick-up entry reaches its child; a child reaches its guardians (they are
-- the data subjects who are told, and a child's record shows them). No until: up to the
-- transaction's now(), which is the recorded_at of an entry written in the same transaction.
WITH hits AS (
    SELECT a.id AS entry, a.church_id, a.capability, t.id AS target
    FROM audit_log a
    LEFT JOIN LATERAL unnest(a.target_ids) AS t (id) ON true
    WHERE a.outcome = 'allowed'
      AND a.church_id IS NOT NULL
      AND a.at >= sqlc.arg(since)::timestamptz
      AND a.at < coalesce(sqlc.narg(until)::timestamptz, now())
      AND (sqlc.narg(user_id)::uuid IS NULL OR a.user_id = sqlc.narg(user_id)::uuid)
      AND (sqlc.narg(client_id)::text IS NULL OR a.client_id = sqlc.narg(client_id)::text)
      AND (sqlc.narg(church_id)::uuid IS NULL OR a.church_id = sqlc.narg(church_id)::uuid)
),
kids AS (
    SELECT h.church_id, c.id FROM hits h JOIN children c ON c.id = h.target AND c.church_id = h.church_id
    UNION
    SELECT h.church_id, k.child_id FROM hits h JOIN checkins k ON k.id = h.target AND k.church_id = h.church_id
    UNION
    SELECT h.church_id, r.child_id FROM hits h JOIN consent_records r ON r.id = h.target AND r.church_id = h.church_id
    UNION
    SELECT h.church_id, p.child_id FROM hits h JOIN pickup_adults p ON p.id = h.target AND p.church_id = h.church_id
),
adults AS (
    SELECT h.church_id, g.id FROM hits h JOIN guardians g ON g.id = h.target AND g.church_id = h.church_id
    UNION
    SELECT k.church_id, gc.guardian_id FROM kids k JOIN guardian_children gc ON gc.child_id = k.id
)
SELECT e.church_id::uuid AS church_id,
       e.entries::integer AS entries,
       e.capabilities::text[] AS capabilities,
       coalesce((SELECT array_agg(k.id ORDER BY k.id) FROM kids k WHERE k.church_id = e.church_id), '{}')::uuid[] AS child_ids,
       coalesce((SELECT array_agg(a.id ORDER BY a.id) FROM adults a WHERE a.church_id = e.church_id), '{}')::uuid[] AS guardian_ids
FROM (SELECT h.church_id, count(DISTINCT h.entry) AS entries,
             array_agg(DISTINCT h.capability ORDER BY h.capability) AS capabilities
      FROM hits h GROUP BY h.church_id) e
ORDER BY e.church_id;

-- name: ChurchRecordIDs :one
-- Every child and guardian a church holds: the reach of an incident that took the whole
-- church's data (a lost backup, a leaked dump), and the total the notification asks for.
SELECT coalesce((SELECT array_agg(c.id ORDER BY c.id) FROM children c WHERE c.church_id = sqlc.arg(church_id)::uuid), '{}')::uuid[] AS child_ids,
       coalesce((SELECT array_agg(g.id ORDER BY g.id) FROM guardians g WHERE g.church_id = sqlc.arg(church_id)::uuid), '{}')::uuid[] AS guardian_ids;

-- name: GuardiansToNotify :many
-- The guardians an incident reached, with the contact the church holds and their children's
-- names, for the operator's notification of the data subjects (written to a file of mode 0600).
SELECT g.id, ch.name AS church_name, g.name, g.phone,
       coalesce(string_agg(c.name, '; ' ORDER BY c.name), '')::text AS children
FROM guardians g
JOIN churches ch ON ch.id = g.church_id
LEFT JOIN guardian_children gc ON gc.guardian_id = g.id
LEFT JOIN children c ON c.id = gc.child_id
WHERE g.id = ANY (sqlc.arg(guardian_ids)::uuid[])
GROUP BY g.id, ch.name, g.name, g.phone
ORDER BY ch.name, g.name, g.id;

-- name: ListIncidents :many
SELECT i.id, i.recorded_at, i.detected_at, i.summary, i.relevant_risk, i.anpd_notified_at,
       i.subjects_notified_at, i.not_notified_reason,
       coalesce((SELECT sum(ic.children) FROM incident_churches ic WHERE ic.incident_id = i.id), 0)::integer AS children,
       coalesce((SELECT sum(ic.guardians) FROM incident_churches ic WHERE ic.incident_id = i.id), 0)::integer AS guardians
FROM incidents i
WHERE (sqlc.narg(since)::timestamptz IS NULL OR i.recorded_at >= sqlc.narg(since)::timestamptz)
ORDER BY i.recorded_at, i.id;

-- name: GetIncident :one
SELECT id, recorded_at, recorded_by, detected_at, occurred_from, occurred_until, summary,
       actor_user_id, actor_client_id, scope_basis, data_kinds, relevant_risk, measures, dpo,
       anpd_notified_at, subjects_notified_at, not_notified_reason
FROM incidents WHERE id = sqlc.arg(id)::uuid;

-- name: IncidentChurches :many
SELECT ic.church_id, ch.name, ch.slug, ic.children, ic.guardians, ic.audit_entries,
       ic.children_total, ic.guardians_total
FROM incident_churches ic JOIN churches ch ON ch.id = ic.church_id
WHERE ic.incident_id = sqlc.arg(incident_id)::uuid
ORDER BY ch.slug;

-- name: UpdateIncidentFollowUp :execrows
-- The follow-up of an entry: each argument given replaces its column, the others stay.
UPDATE incidents SET
    measures             = coalesce(sqlc.narg(measures)::text, measures),
    dpo                  = coalesce(sqlc.narg(dpo)::text, dpo),
    anpd_notified_at     = coalesce(sqlc.narg(anpd_notified_at)::timestamptz, anpd_notified_at),
    subjects_notified_at = coalesce(sqlc.narg(subjects_notified_at)::timestamptz, subjects_notified_at),
    not_notified_reason  = coalesce(sqlc.narg(not_notified_reason)::text, not_notified_reason)
WHERE id = sqlc.arg(id)::uuid;
