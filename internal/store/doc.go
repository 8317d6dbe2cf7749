// Package store is the data layer's plumbing, written by hand: the pgx connection pool, the
// transactions that carry the caller's church, user and role into PostgreSQL row-level
// security, the embedded goose migrations (queries/schema), the mapping of database errors to
// the domain errors of internal/errs, and the small formats the schema stores (argon2id
// password hashes, salted pick-up code hashes).
//
// Every request runs in [Store.InTx]: the transaction sets app.church_id, app.user_id and
// app.role with set_config(..., true) and switches to the application role neemias_app with
// SET LOCAL ROLE, so the policies of migration 00110 apply to every statement, including one
// that forgot its WHERE clause, even when the pool itself connects as the schema owner.
// [Store.InSystemTx] is the maintenance context (seeding, operator tasks): it runs as the
// connecting role, the owner, without row-level security.
//
// The queries themselves are sqlc's (gen/db, from queries/generated and queries/custom); this
// package hands them a pgx.Tx.
package store
