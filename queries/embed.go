// Package queries holds the SQL of Neemias MCP: the hand-written goose migrations in schema/
// (embedded here, applied by internal/store), the queries generated from the capability spec in
// generated/ (owned by capgen, never edited by hand), the hand-written queries of the mutation
// tools in custom/, and sqlc.yaml, which turns both into gen/db.
package queries

import "embed"

// Migrations is the schema/ directory: goose migrations named NNNNN_name.sql, each with an
// `-- +goose Up` and a `-- +goose Down` section. sqlc reads the same files as its schema.
//
//go:embed schema/*.sql
var Migrations embed.FS

// MigrationsDir is the directory inside Migrations that holds the migration files.
const MigrationsDir = "schema"
