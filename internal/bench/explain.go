package bench

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/store"
)

// explainer is a db.DBTX that, before each query, runs EXPLAIN (ANALYZE, BUFFERS) of the very
// SQL text and arguments the generated function sends, and keeps the plan; then it runs the
// query itself so the generated code scans its rows as usual. That way the plans in the report
// are of gen/db's statements, not of a copy that could drift.
type explainer struct {
	tx    pgx.Tx
	plans []string
}

func (e *explainer) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return e.tx.Exec(ctx, sql, args...)
}

func (e *explainer) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := e.explain(ctx, sql, args); err != nil {
		return nil, err
	}
	return e.tx.Query(ctx, sql, args...)
}

func (e *explainer) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if err := e.explain(ctx, sql, args); err != nil {
		return errRow{err}
	}
	return e.tx.QueryRow(ctx, sql, args...)
}

func (e *explainer) explain(ctx context.Context, sql string, args []any) error {
	rows, err := e.tx.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+sql, args...)
	if err != nil {
		return fmt.Errorf("bench: explain: %w", err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("bench: explain: %w", err)
	}
	e.plans = append(e.plans, strings.Join(lines, "\n"))
	return nil
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

var _ db.DBTX = (*explainer)(nil)

// ExplainReads returns the plans of the read operations' queries, run as the server runs
// them: in a store.InTx transaction acting for the fixture's caller (application role, so
// the row-level security policies are part of the plan).
func ExplainReads(ctx context.Context, d *Database, f *Fixture) (map[string]string, error) {
	st := store.FromPool(d.Pool)
	granted, _ := scopes.RoleScopes(f.Role)
	caller := store.Caller{ChurchID: f.ChurchID, UserID: f.UserID, Role: f.Role, Scopes: granted}
	plans := map[string]string{}
	reads := map[string]func(ctx context.Context, q *db.Queries) error{
		OpCheckins: func(ctx context.Context, q *db.Queries) error {
			_, err := q.CheckinsByDate(ctx, db.CheckinsByDateParams{ChurchID: f.ChurchID, Role: f.Role, UserID: f.UserID, Date: f.BusiestDay})
			return err
		},
		OpRosterChild: func(ctx context.Context, q *db.Queries) error {
			_, err := q.RosterChild(ctx, db.RosterChildParams{ChurchID: f.ChurchID, Role: f.Role, UserID: f.UserID, ID: f.Child})
			return err
		},
		OpAttendance: func(ctx context.Context, q *db.Queries) error {
			_, err := q.AttendanceSummary(ctx, db.AttendanceSummaryParams{ChurchID: f.ChurchID, Role: f.Role, UserID: f.UserID, FromValue: f.MonthFrom, ToValue: f.MonthTo})
			return err
		},
	}
	for _, op := range ReadOps {
		var e *explainer
		err := st.InTx(ctx, caller, func(ctx context.Context, tx pgx.Tx) error {
			e = &explainer{tx: tx}
			return reads[op](ctx, db.New(e))
		})
		if err != nil {
			return nil, fmt.Errorf("bench: explain %s: %w", op, err)
		}
		plans[op] = strings.Join(e.plans, "\n\n")
	}
	return plans, nil
}
