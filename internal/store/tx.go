package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/neemias/neemias-mcp/gen/db"
)

// callerTx is the transaction InTx and InSystemTx hand to their fn. It is a pgx.Tx on one pooled
// connection, written here rather than taken from pgx for one reason: round trips. A request's
// statements reach PostgreSQL in three of them, not five:
//
//  1. BEGIN and the caller context (set_config, SET ROLE) as one simple-protocol message;
//  2. the request's own queries;
//  3. the statements deferred with [Deferred] (the audit row) and COMMIT, as one pipelined batch.
//
// Nested transactions (Begin), Commit and Rollback are the store's, not fn's.
type callerTx struct {
	conn     *pgxpool.Conn
	deferred *pgx.Batch
}

var _ pgx.Tx = (*callerTx)(nil)

func (t *callerTx) Begin(context.Context) (pgx.Tx, error) {
	return nil, errors.New("store: nested transactions are not supported")
}

func (t *callerTx) Commit(context.Context) error {
	return errors.New("store: the transaction is committed by InTx when fn returns")
}

func (t *callerTx) Rollback(context.Context) error {
	return errors.New("store: the transaction is rolled back by InTx when fn fails")
}

func (t *callerTx) CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error) {
	return t.conn.CopyFrom(ctx, table, cols, src)
}

func (t *callerTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return t.conn.SendBatch(ctx, b)
}

// LargeObjects is not supported (no table here holds large objects).
func (t *callerTx) LargeObjects() pgx.LargeObjects { return pgx.LargeObjects{} }

func (t *callerTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	return t.conn.Conn().Prepare(ctx, name, sql)
}

func (t *callerTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return t.conn.Exec(ctx, sql, args...)
}

func (t *callerTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return t.conn.Query(ctx, sql, args...)
}

func (t *callerTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return t.conn.QueryRow(ctx, sql, args...)
}

func (t *callerTx) Conn() *pgx.Conn { return t.conn.Conn() }

// Deferred returns a db.DBTX over tx whose Exec statements are not sent at once but queued
// to run just before COMMIT, in the commit's round trip. A deferred statement's failure fails
// the transaction like any other (nothing commits), so it suits writes whose result nobody
// reads, such as the audit row of a read. Query and QueryRow run at once. Over a pgx.Tx that is
// not the store's, everything runs at once.
func Deferred(tx pgx.Tx) db.DBTX {
	if t, ok := tx.(*callerTx); ok {
		return deferredTx{t}
	}
	return tx
}

type deferredTx struct{ *callerTx }

func (d deferredTx) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if d.deferred == nil {
		d.deferred = &pgx.Batch{}
	}
	d.deferred.Queue(sql, args...)
	return pgconn.CommandTag{}, nil
}

// beginSQL is BEGIN plus, for a request's caller, the caller context and the plan cache mode,
// as one simple-protocol
// statement list (pgx sends an argument-less Exec in one message). The interpolated values are
// two UUIDs in their canonical form, a role and the space-separated effective scopes, both of
// which Validate checked against the spec's fixed lists, so nothing of the request is ever
// spliced into it. app.scopes is what rf_has_scope (migration 00090) reads: the database
// gates the generated resource queries by scope from the same caller context as the row filters.
//
// plan_cache_mode: the request queries go through row-level security policies and views, and
// PostgreSQL kept re-planning them for every execution of the prepared statement (a custom
// plan: 0.4 ms of planning against 0.3 to 0.9 ms of execution on the demo church); the generic
// plan executes as fast and plans in 0.01 to 0.03 ms. Set per transaction, not as a startup
// parameter, so connection poolers (PgBouncer refuses unknown startup parameters) need nothing.
func beginSQL(caller Caller, system bool) string {
	const begin = "BEGIN ISOLATION LEVEL READ COMMITTED"
	if system {
		return begin
	}
	church, user, granted := "", "", ""
	if !caller.IsAnonymous() {
		church, user, granted = caller.ChurchID.String(), caller.UserID.String(), caller.Scopes.String()
	}
	var b strings.Builder
	b.WriteString(begin)
	fmt.Fprintf(&b, "; SELECT set_config('app.church_id', '%s', true), set_config('app.user_id', '%s', true), "+
		"set_config('app.role', '%s', true), set_config('app.scopes', '%s', true), set_config('role', '%s', true), "+
		"set_config('plan_cache_mode', 'force_generic_plan', true)", church, user, caller.Role, granted, AppRole)
	return b.String()
}

// runTx runs fn once in a transaction on a connection of its own: BEGIN (with the caller
// context unless system), fn, then the deferred statements and COMMIT in one batch, or
// ROLLBACK. A connection left in any state but idle is destroyed by the pool on release.
func (s *Store) runTx(ctx context.Context, caller Caller, system bool, fn func(ctx context.Context, tx pgx.Tx) error) (err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("store: acquire: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, beginSQL(caller, system)); err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	tx := &callerTx{conn: conn}
	defer func() {
		if err != nil && conn.Conn().PgConn().TxStatus() != 'I' {
			// The rollback error, if any, tells nothing the first error does not; a
			// connection it leaves in a transaction is destroyed on release.
			_, _ = conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	ferr := fn(ctx, tx)
	var keep *commitError
	if ferr != nil && !errors.As(ferr, &keep) {
		return ferr
	}
	if cerr := tx.commit(ctx); cerr != nil {
		return cerr
	}
	if keep != nil {
		return keep.err
	}
	return nil
}

// commit sends the deferred statements and COMMIT in one round trip.
func (t *callerTx) commit(ctx context.Context) error {
	if t.deferred == nil || t.deferred.Len() == 0 {
		tag, err := t.conn.Exec(ctx, "COMMIT")
		if err != nil {
			return fmt.Errorf("store: commit: %w", err)
		}
		if tag.String() == "ROLLBACK" {
			return fmt.Errorf("store: commit: %w", pgx.ErrTxCommitRollback)
		}
		return nil
	}
	b := t.deferred
	t.deferred = nil
	n := b.Len()
	b.Queue("COMMIT")
	br := t.conn.SendBatch(ctx, b)
	for range n {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return fmt.Errorf("store: deferred statement: %w", err)
		}
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	if tag.String() == "ROLLBACK" {
		return fmt.Errorf("store: commit: %w", pgx.ErrTxCommitRollback)
	}
	return nil
}
