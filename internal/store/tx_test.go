package store_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// roundTrips counts what a pool sends: one per simple or extended query, one per batch.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// TestDeferredStatements: a statement deferred with store.Deferred runs with COMMIT, in the
// same round trip; it commits only with the transaction, and its failure fails it.
func TestDeferredStatements(t *testing.T) {
	t.Parallel()
	url := storetest.NewDatabase(t)
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	trips := &roundTrips{}
	cfg.ConnConfig.Tracer = trips
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	st := store.FromPool(pool)
	t.Cleanup(st.Close)
	if _, err := pool.Exec(ctx, `CREATE TABLE t_deferred (v int PRIMARY KEY CHECK (v > 0))`); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM t_deferred`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	// Commits with the transaction: BEGIN + query + (deferred + COMMIT) = 3 round trips.
	before := trips.n.Load()
	err = st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1`).Scan(&one); err != nil {
			return err
		}
		_, err := store.Deferred(tx).Exec(ctx, `INSERT INTO t_deferred VALUES ($1)`, 1)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := trips.n.Load() - before; got != 3 {
		t.Errorf("%d round trips, want 3 (BEGIN, the query, the deferred insert with COMMIT)", got)
	}
	if n := count(); n != 1 {
		t.Fatalf("%d rows after commit, want 1", n)
	}

	// Not run when fn fails.
	_ = st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		_, _ = store.Deferred(tx).Exec(ctx, `INSERT INTO t_deferred VALUES ($1)`, 2)
		return context.Canceled
	})
	// Its own failure fails the transaction, and nothing of it commits.
	err = st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO t_deferred VALUES (3)`); err != nil {
			return err
		}
		_, err := store.Deferred(tx).Exec(ctx, `INSERT INTO t_deferred VALUES ($1)`, -1) // violates the CHECK
		return err
	})
	if err == nil {
		t.Error("a failing deferred statement did not fail the transaction")
	}
	if n := count(); n != 1 {
		t.Errorf("%d rows, want 1: a failed or rolled-back transaction left rows", n)
	}
	// The connection is usable afterwards (the pool destroyed or cleaned it).
	if err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO t_deferred VALUES (4)`)
		return err
	}); err != nil {
		t.Fatalf("after a failed commit: %v", err)
	}
}

// TestUUIDRoundTrip: uuid values (and arrays, NULLs via pointers) survive the binary codec.
func TestUUIDRoundTrip(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	want := []uuid.UUID{uuid.New(), uuid.New()}
	var got uuid.UUID
	var arr []uuid.UUID
	var null *uuid.UUID
	if err := st.Pool().QueryRow(ctx, `SELECT $1::uuid, $2::uuid[], NULL::uuid`, want[0], want).Scan(&got, &arr, &null); err != nil {
		t.Fatal(err)
	}
	if got != want[0] || len(arr) != 2 || arr[1] != want[1] || null != nil {
		t.Errorf("got %v %v %v, want %v %v nil", got, arr, null, want[0], want)
	}
	var fromText uuid.UUID
	if err := st.Pool().QueryRow(ctx, `SELECT $1::text::uuid`, want[1].String()).Scan(&fromText); err != nil || fromText != want[1] {
		t.Errorf("text-cast uuid: %v %v", fromText, err)
	}
	if err := st.Pool().QueryRow(ctx, `SELECT NULL::uuid`).Scan(&got); err == nil {
		t.Error("NULL scanned into uuid.UUID without an error")
	}
}
