-- name: FindChildren :many
-- The children the caller may see whose name has a word starting with each word of the text
-- ("ana" finds "Ana Clara" and "Maria Ana", not "Santana"), compared folded (app_fold_name:
-- case and the accents of Portuguese aside; position() needs no escaping of LIKE wildcards).
-- Those whose first name is the text's first word come first, then by name; total counts
-- every match, so the caller can say how many more there are than the rows returned.
SELECT c.id, c.name, c.class_id, cl.name AS class_name, count(*) OVER ()::bigint AS total
FROM children c
LEFT JOIN classes cl ON cl.id = c.class_id
WHERE rf_has_scope('children:read')
  AND rf_church(c.church_id, sqlc.arg(church_id)::uuid)
  AND c.archived_at IS NULL AND c.consent_revoked_at IS NULL
  AND rf_guardian_own_children(c.id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
  AND rf_volunteer_assigned_classes(c.class_id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
  AND NOT EXISTS (
        SELECT 1 FROM unnest(string_to_array(app_fold_name(sqlc.arg(text)::text), ' ')) AS w
        WHERE position(' ' || w IN ' ' || app_fold_name(c.name)) = 0)
ORDER BY (split_part(app_fold_name(c.name), ' ', 1) = split_part(app_fold_name(sqlc.arg(text)::text), ' ', 1)) DESC,
         c.name, c.id
LIMIT sqlc.arg(max_results)::int;
