-- name: FindChildren :many
-- The children the caller may see whose name contains text, case and the accents of
-- Portuguese aside (translate folds them; strpos needs no escaping of LIKE wildcards).
SELECT c.id, c.name, c.class_id, cl.name AS class_name
FROM children c
LEFT JOIN classes cl ON cl.id = c.class_id
WHERE rf_has_scope('children:read')
  AND rf_church(c.church_id, sqlc.arg(church_id)::uuid)
  AND c.archived_at IS NULL
  AND rf_guardian_own_children(c.id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
  AND rf_volunteer_assigned_classes(c.class_id, sqlc.arg(church_id)::uuid, sqlc.arg(user_id)::uuid, sqlc.arg(role)::text)
  AND strpos(
        translate(lower(c.name), 'áàâãäéèêëíìîïóòôõöúùûüçñ', 'aaaaaeeeeiiiiooooouuuucn'),
        translate(lower(sqlc.arg(text)::text), 'áàâãäéèêëíìîïóòôõöúùûüçñ', 'aaaaaeeeeiiiiooooouuuucn')) > 0
ORDER BY c.name, c.id
LIMIT sqlc.arg(max_results)::int;
