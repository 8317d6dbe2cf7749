-- The rate limits a request takes in its own transaction (migration 00102): the caller's own
-- buckets, keyed by church and user from the caller context.

-- name: TakeCallerRate :one
-- Takes one unit of the caller's bucket, locking it until the transaction ends; allowed false
-- takes nothing and says how long until a unit comes back.
SELECT t.allowed::boolean AS allowed, t.retry_after_secs::double precision AS retry_after_secs
FROM app_rate_take(sqlc.arg(bucket)::text, sqlc.arg(interval_secs)::double precision, sqlc.arg(tolerance_secs)::double precision) AS t;

-- name: RefundCallerRate :exec
-- Gives back the unit this transaction took with TakeCallerRate.
SELECT app_rate_refund(sqlc.arg(bucket)::text, sqlc.arg(interval_secs)::double precision);
