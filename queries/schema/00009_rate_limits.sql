-- Rate limits shared by every replica (internal/ratelimit): one row per limited key (a caller
-- of /mcp and REST, a client address at /authorize, /token, /register and /login, a user's
-- wrong pick-up codes), holding the key's GCRA theoretical arrival time. A request updates
-- its row with one INSERT … ON CONFLICT DO UPDATE … RETURNING; a row whose time has passed
-- is a full bucket, the same as no row, and is deleted by the periodic clean-up.
--
-- UNLOGGED: the rows are not worth WAL. A crash empties the table (every bucket full again),
-- which is harmless; a clean restart keeps it. fillfactor leaves room for HOT updates, the
-- only kind this table sees (tat is not indexed). Like the oauth_* tables it belongs to the
-- owner: the application role has no privilege on it.

-- +goose Up
CREATE UNLOGGED TABLE rate_limits (
    key text PRIMARY KEY CHECK (length(key) <= 300),
    tat timestamptz NOT NULL
) WITH (fillfactor = 50);

-- +goose Down
DROP TABLE rate_limits;
