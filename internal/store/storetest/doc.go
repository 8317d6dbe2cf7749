// Package storetest gives each test its own PostgreSQL database, cloned from a template that
// has all the embedded migrations applied, and drops it when the test ends. Tests stay
// independent and may run in parallel; the template is built once per migration set (its name
// carries a hash of the migration files) and reused by later runs.
//
// The admin connection comes from $DATABASE_URL, by default
// postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable; it must be allowed to create
// databases. When the server cannot be reached the test is skipped, or fails when $CI is set.
package storetest
