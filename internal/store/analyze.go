package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Analyze refreshes the planner statistics of every table of the public schema (ANALYZE).
// Seeding calls it after bulk loads: with autovacuum off, or before it has run, the planner
// keeps plans made for empty tables.
func Analyze(ctx context.Context, pool *pgxpool.Pool) error {
	if _, err := pool.Exec(ctx, "ANALYZE"); err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	return nil
}

// AnalyzeStale runs ANALYZE on the tables of the public schema that hold rows but have never
// been analyzed, and returns how many it analyzed. `serve --demo` calls it at start, so a
// database loaded by other means (a restore, an import) is not served with empty-table plans.
func AnalyzeStale(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	rows, err := pool.Query(ctx, `SELECT relname FROM pg_stat_user_tables
		WHERE schemaname = 'public' AND n_live_tup > 0 AND last_analyze IS NULL AND last_autoanalyze IS NULL`)
	if err != nil {
		return 0, fmt.Errorf("analyze: listing tables: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, fmt.Errorf("analyze: listing tables: %w", err)
	}
	for _, n := range names {
		if _, err := pool.Exec(ctx, "ANALYZE "+pgx.Identifier{"public", n}.Sanitize()); err != nil {
			return 0, fmt.Errorf("analyze %s: %w", n, err)
		}
	}
	return len(names), nil
}
