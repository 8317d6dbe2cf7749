-- name: LoginCandidates :many
-- The enabled accounts with this email, in every church, with their password hashes (check
-- with store.CheckPassword). Runs as the anonymous caller: app_login_candidates is the
-- application role's only way to read password hashes.
SELECT lc.id, lc.church_id, lc.role, lc.display_name, lc.password_hash
FROM app_login_candidates(sqlc.arg(email)::text) AS lc;

-- name: GetUser :one
-- An account of the church, without its password hash.
SELECT u.id, u.church_id, u.email, u.display_name, u.role, u.disabled_at
FROM users u
WHERE u.church_id = sqlc.arg(church_id)::uuid AND u.id = sqlc.arg(user_id)::uuid;

-- name: GetUserByEmail :one
-- An account of the church by email (stored lower-case), without its password hash.
SELECT u.id, u.church_id, u.email, u.display_name, u.role, u.disabled_at
FROM users u
WHERE u.church_id = sqlc.arg(church_id)::uuid AND u.email = lower(btrim(sqlc.arg(email)::text));

-- name: GetChurch :one
-- The caller's church. time_zone (IANA) says which day "today" is there.
SELECT ch.id, ch.name, ch.slug, ch.time_zone,
       (now() AT TIME ZONE ch.time_zone)::date AS today
FROM churches ch
WHERE ch.id = sqlc.arg(church_id)::uuid;
