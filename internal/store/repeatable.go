package store

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// A repeatable migration is a goose migration whose Up section can run again at any time
// (CREATE OR REPLACE, DROP ... IF EXISTS then CREATE) and whose text is changed in place: the
// generated row-filter functions, which follow the spec (capgen writes 00090 with the marker
// below), and the row-level security policies of the tenant tables (00110, edited by hand).
// goose never re-runs an applied file, so without this a database migrated before a spec
// change would keep the old functions, and a function the spec added would be missing (every
// generated query calling it would fail); a changed policy would need a new migration that
// drops and re-creates it, the rule written twice. Migrate
// therefore re-runs the Up section of each marked file whose text differs from the text last
// applied, in one transaction, and records the text's SHA-256 in repeatable_migrations
// (migration 00095).
//
// What CREATE OR REPLACE cannot do, it refuses with PostgreSQL's own error (a changed
// parameter name or return type): the migration fails with the file's name and nothing of it
// is applied. A function the spec dropped stays in the database, unused.
var repeatableMarker = regexp.MustCompile(`(?m)^--\s*\+neemias\s+repeatable\b`)

// RepeatableMarker is the comment line that makes a migration repeatable.
const RepeatableMarker = "-- +neemias repeatable"

// repeatableLock serializes replicas re-applying at once; a transaction-level lock, so it
// works behind a pooler in transaction mode too.
const repeatableLock = `SELECT pg_advisory_xact_lock(hashtext('neemias.repeatable_migrations'))`

// repeatMode says which repeatable migrations applyRepeatable looks at.
type repeatMode int

const (
	// repeatAll re-runs every changed repeatable migration and records the ones goose applied.
	repeatAll repeatMode = iota
	// repeatRecordOnly only records the ones goose applied (goose stopped at a failing one).
	repeatRecordOnly
	// repeatKnownOnly re-runs only changed repeatable migrations applied before, ahead of goose:
	// a pending migration may build on what their new text defines (00110's policies of
	// pickup_adults call a row filter function the spec gained with that table, in 00096), so
	// they must be current first.
	repeatKnownOnly
)

// applyRepeatable re-runs the Up section of every repeatable migration of scanned whose text
// changed since it was last applied. appliedNow holds the files goose applied in this run:
// their text is recorded without running them a second time. mode narrows what it does (see
// repeatMode). It returns the files it re-ran.
func applyRepeatable(ctx context.Context, url string, scanned migrationFiles, appliedNow []string, mode repeatMode) ([]string, error) {
	files := scanned.repeatable
	if len(files) == 0 {
		return nil, nil
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("store: connect: %w", err)
	}
	defer conn.Close(ctx)
	var rerun []string
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, repeatableLock); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		var kept bool
		if err := tx.QueryRow(ctx, `SELECT to_regclass('repeatable_migrations') IS NOT NULL`).Scan(&kept); err != nil {
			return fmt.Errorf("bookkeeping table: %w", err)
		}
		if !kept {
			return nil // goose stopped before 00095: the next complete run records and re-runs
		}
		for _, f := range files {
			if mode == repeatRecordOnly && !slices.Contains(appliedNow, f.name) {
				continue
			}
			var last string
			err := tx.QueryRow(ctx, `SELECT sha256 FROM repeatable_migrations WHERE name = $1`, f.name).Scan(&last)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("%s: %w", f.name, err)
			}
			if mode == repeatKnownOnly && errors.Is(err, pgx.ErrNoRows) {
				continue // not applied yet: goose applies it in order
			}
			if last == f.sum {
				continue
			}
			if !slices.Contains(appliedNow, f.name) {
				// Simple protocol: the Up section is several statements.
				if _, err := tx.Exec(ctx, f.up, pgx.QueryExecModeSimpleProtocol); err != nil {
					return fmt.Errorf("migration %s (re-applied because its text changed): %w", f.name, err)
				}
				rerun = append(rerun, f.name)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO repeatable_migrations (name, sha256) VALUES ($1, $2)
				ON CONFLICT (name) DO UPDATE SET sha256 = excluded.sha256, applied_at = now()`, f.name, f.sum); err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return rerun, nil
}

// upSection is the text between "-- +goose Up" and "-- +goose Down", without goose's
// statement markers (the section runs as one multi-statement string).
func upSection(s string) (string, error) {
	_, rest, ok := strings.Cut(s, "-- +goose Up")
	if !ok {
		return "", errors.New("no -- +goose Up")
	}
	up, _, _ := strings.Cut(rest, "-- +goose Down")
	var b strings.Builder
	for _, line := range strings.Split(up, "\n") {
		if t := strings.TrimSpace(line); t == "-- +goose StatementBegin" || t == "-- +goose StatementEnd" {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String(), nil
}
