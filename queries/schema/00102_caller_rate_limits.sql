-- The rate limits a request takes inside its own transaction (issue 24): an account's wrong
-- pick-up codes (logic.PickupAttemptLimit) and its searches by name (logic.FindLimit). Their
-- buckets are rows of rate_limits (00009) like every other limit, so every replica shares them,
-- and they are keyed by the caller context of the transaction (church and user, never the
-- OAuth client or API key), so all of a user's clients share them too.
--
-- app_rate_take reserves one unit before the work it guards and keeps the bucket's row locked
-- until the transaction ends: concurrent requests of one account take their units one after
-- the other, and none of them can see a unit another is about to spend (the wrong pick-up
-- code budget was checked before and charged after the comparison, so 20 wrong codes sent at
-- once were all compared against a budget of 10). A rolled-back transaction takes nothing;
-- app_rate_refund gives a unit back inside the transaction that took it (a right pick-up code).
--
-- The application role still has no privilege on rate_limits: these functions run as the
-- owner and reach only the caller's own buckets of the two names below, so a request cannot
-- read or reset another user's budget or the per-address limits of the OAuth endpoints.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION app_rate_take(bucket text, interval_secs double precision, tolerance_secs double precision,
                              OUT allowed boolean, OUT retry_after_secs double precision)
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    k    text;
    cur  timestamptz;
    t    timestamptz;
    next timestamptz;
BEGIN
    IF bucket NOT IN ('pickup', 'find') OR app_church_id() IS NULL OR app_user_id() IS NULL
       OR NOT (interval_secs > 0) OR NOT (tolerance_secs >= interval_secs) THEN
        RAISE EXCEPTION 'app_rate_take: unknown bucket, no caller or a bad limit' USING ERRCODE = '22023';
    END IF;
    k := bucket || ':' || app_church_id()::text || '/' || app_user_id()::text;
    -- Lock the bucket (creating it full), then decide on the clock after the lock: a request
    -- that waited for another's must not decide on the time it started waiting.
    LOOP
        INSERT INTO rate_limits (key, tat) VALUES (k, '-infinity') ON CONFLICT (key) DO NOTHING;
        SELECT r.tat INTO cur FROM rate_limits r WHERE r.key = k FOR UPDATE;
        EXIT WHEN FOUND; -- else the clean-up deleted the row in between: insert it again
    END LOOP;
    t := clock_timestamp();
    next := greatest(cur, t) + make_interval(secs => interval_secs);
    IF next <= t + make_interval(secs => tolerance_secs) THEN
        UPDATE rate_limits SET tat = next WHERE key = k;
        allowed := true;
        retry_after_secs := 0;
    ELSE
        allowed := false;
        retry_after_secs := extract(epoch FROM next - (t + make_interval(secs => tolerance_secs)));
    END IF;
END
$$;
-- +goose StatementEnd
REVOKE ALL ON FUNCTION app_rate_take(text, double precision, double precision) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION app_rate_take(text, double precision, double precision) TO neemias_app;

-- +goose StatementBegin
CREATE FUNCTION app_rate_refund(bucket text, interval_secs double precision) RETURNS void
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
BEGIN
    IF bucket NOT IN ('pickup', 'find') OR app_church_id() IS NULL OR app_user_id() IS NULL OR NOT (interval_secs > 0) THEN
        RAISE EXCEPTION 'app_rate_refund: unknown bucket, no caller or a bad limit' USING ERRCODE = '22023';
    END IF;
    UPDATE rate_limits SET tat = tat - make_interval(secs => interval_secs)
    WHERE key = bucket || ':' || app_church_id()::text || '/' || app_user_id()::text;
END
$$;
-- +goose StatementEnd
REVOKE ALL ON FUNCTION app_rate_refund(text, double precision) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION app_rate_refund(text, double precision) TO neemias_app;

-- +goose Down
DROP FUNCTION IF EXISTS app_rate_refund(text, double precision);
DROP FUNCTION IF EXISTS app_rate_take(text, double precision, double precision);
