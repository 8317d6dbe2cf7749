-- Intentionally empty. This migration once rewrote the write policies of the tenant tables
-- (and app_visible_child_ids) in terms of the spec's row filters (rf_*) and scope matrix
-- (app_role_has_scope), both generated in 00090, re-creating policies 00004 had created. Those
-- policies, like every other policy of the request role on a tenant table, are now written
-- once, in 00110_rls_policies.sql, a repeatable migration that gives every database, fresh or
-- migrated before, the same final policies. The file stays because goose records 00091 as
-- applied in every database migrated since; it does nothing.

-- +goose Up

-- +goose Down
