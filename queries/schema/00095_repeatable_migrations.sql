-- The text last applied of each repeatable migration (a migration marked
-- "-- +neemias repeatable", such as the generated row-filter functions of 00090): store.Migrate
-- re-runs a marked file's Up section when its SHA-256 differs from the one kept here, because
-- goose never re-runs an applied file (internal/store/repeatable.go). Only the migrator reads
-- and writes it; the application role has no grant on it.

-- +goose Up
CREATE TABLE repeatable_migrations (
    name       text PRIMARY KEY,
    sha256     text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
REVOKE ALL ON repeatable_migrations FROM PUBLIC;

-- +goose Down
DROP TABLE repeatable_migrations;
