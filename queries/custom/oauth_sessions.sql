-- Login sessions of the authorization server (00009).

-- name: InsertOAuthLoginSession :execrows
-- Starts a session for an enabled account, fingerprinting its current password hash (a
-- federated login without a local password fingerprints the empty string).
INSERT INTO oauth_login_sessions (id_hash, church_id, user_id, role, credential_fp, amr, auth_time,
                                  idle_expires_at, expires_at)
SELECT sqlc.arg(id_hash), u.church_id, u.id, u.role,
       sha256(convert_to(coalesce(u.password_hash, ''), 'UTF8')), sqlc.arg(amr), sqlc.arg(auth_time),
       least(sqlc.arg(idle_expires_at)::timestamptz, sqlc.arg(expires_at)::timestamptz), sqlc.arg(expires_at)
FROM users u
WHERE u.church_id = sqlc.arg(church_id)::uuid AND u.id = sqlc.arg(user_id)::uuid AND u.disabled_at IS NULL;

-- name: UseOAuthLoginSession :one
-- Uses a live session: the account must still be enabled, with the role and password hash it
-- had at login; the idle deadline slides forward (never past the absolute one).
UPDATE oauth_login_sessions s
SET last_used_at = now(), idle_expires_at = least(now() + make_interval(secs => sqlc.arg(idle_seconds)::float8), s.expires_at)
FROM users u
WHERE s.id_hash = sqlc.arg(id_hash)
  AND u.church_id = s.church_id AND u.id = s.user_id
  AND u.disabled_at IS NULL AND u.role = s.role
  AND sha256(convert_to(coalesce(u.password_hash, ''), 'UTF8')) = s.credential_fp
  AND s.idle_expires_at > now() AND s.expires_at > now()
RETURNING s.church_id, s.user_id, s.role, s.amr, s.auth_time, u.email;

-- name: DeleteOAuthLoginSession :one
-- Ends a session (logout, or one found unusable), returning whose it was.
DELETE FROM oauth_login_sessions
WHERE id_hash = sqlc.arg(id_hash)
RETURNING church_id, user_id;

-- name: DeleteUserOAuthLoginSessions :execrows
-- Ends every session of an account (a new password).
DELETE FROM oauth_login_sessions
WHERE church_id = sqlc.arg(church_id)::uuid AND user_id = sqlc.arg(user_id)::uuid;

-- name: ClearOAuthAuthRequestUser :execrows
-- Forgets who a pending request was logged in as ("not you?"), so the login page asks again.
UPDATE oauth_auth_requests
SET user_id = NULL, church_id = NULL, role = NULL, auth_time = NULL, amr = NULL
WHERE id = sqlc.arg(id) AND expires_at > now();

-- name: SetOAuthAuthRequestSessionUser :execrows
-- Records who logged in through their session, keeping the session's login time.
UPDATE oauth_auth_requests
SET user_id = sqlc.arg(user_id), church_id = sqlc.arg(church_id), role = sqlc.arg(role),
    auth_time = sqlc.arg(auth_time), amr = sqlc.arg(amr)
WHERE id = sqlc.arg(id) AND user_id IS NULL AND expires_at > now();

-- name: PurgeOAuthLoginSessions :execrows
DELETE FROM oauth_login_sessions WHERE expires_at < now() OR idle_expires_at < now() - interval '1 hour';
