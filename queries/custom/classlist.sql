-- name: ClassListClasses :many
-- The classes of the class list (resource class_list): those the caller may see (a volunteer
-- their own), each with the children enrolled in it that the caller may see. A guardian gets
-- only their children's classes: rf_guardian_own_children(NULL) passes every other role and
-- is NULL for a guardian, so the EXISTS decides for them alone.
SELECT cl.id AS class_id, cl.name AS class_name,
       cl.soft_capacity, cl.firm_capacity, cl.children_per_volunteer,
       app_class_volunteers(cl.id)::bigint AS volunteers,
       (SELECT count(*) FROM children c
        WHERE c.church_id = cl.church_id AND c.class_id = cl.id AND c.archived_at IS NULL AND c.consent_revoked_at IS NULL
          AND rf_guardian_own_children(c.id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text))::bigint AS enrolled
FROM classes cl
WHERE rf_has_scope('checkins:read')
  AND rf_church(cl.church_id, sqlc.arg(church_id)::uuid)
  AND cl.archived_at IS NULL
  AND rf_volunteer_assigned_classes(cl.id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
  AND (rf_guardian_own_children(NULL::uuid, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
       OR EXISTS (SELECT 1 FROM children c
                  WHERE c.church_id = cl.church_id AND c.class_id = cl.id AND c.archived_at IS NULL AND c.consent_revoked_at IS NULL
                    AND rf_guardian_own_children(c.id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)))
ORDER BY cl.min_age, cl.name
LIMIT 1000;

-- name: ClassListChildren :many
-- The class list of a service day (resource class_list): every child the caller may see, in
-- the class of that day's check-in or else their own class, with the check-in's state and who
-- took and released the child. Children archived since are listed only when checked in that
-- day, as are children whose consent was revoked (00107). Labels are made from child_name by the generated Finalize (spec: otherwise short_name).
-- Check-in and check-out resolve a child named by handle, label or first name against these
-- same rows (internal/logic/resolve.go), so a label read here names the same child there.
SELECT cl.id AS class_id, cl.name AS class_name,
       c.id AS child_id, c.handle, c.name AS child_name, c.allergies, c.medical_notes,
       ck.id AS checkin_id, ck.checked_in_at, ck.checked_out_at, ck.picked_up_by_name,
       coalesce(app_user_name(ck.checked_out_by), '')::text AS released_by
FROM children c
LEFT JOIN checkins ck ON ck.child_id = c.id AND ck.church_id = c.church_id
                     AND ck.service_date = sqlc.arg(service_date)::date
JOIN classes cl ON cl.church_id = c.church_id AND cl.id = coalesce(ck.class_id, c.class_id)
WHERE rf_has_scope('checkins:read')
  AND rf_church(c.church_id, sqlc.arg(church_id)::uuid)
  AND ((c.archived_at IS NULL AND c.consent_revoked_at IS NULL) OR ck.id IS NOT NULL)
  AND rf_guardian_own_children(c.id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
  AND rf_volunteer_assigned_classes(cl.id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
ORDER BY cl.min_age, cl.name, c.name, c.id
LIMIT 10000;
