package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// TestAuditAtIsTheDatabases (issue 24, migration 00105): an entry's `at` is the database's
// clock whatever the INSERT gives, for the application role and the owner alike, and no
// UPDATE changes it, not even the owner's with the append-only trigger disabled (a retention
// purge's transaction). Before 00105 the application role could insert a backdated entry.
func TestAuditAtIsTheDatabases(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	f := newChurchFixture(t, s, "igreja-at", false)
	ctx := context.Background()
	backdated := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

	var appAt, dbNow time.Time
	err := s.InTx(ctx, f.caller(store.RoleAdmin), func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `INSERT INTO audit_log (at, church_id, user_id, capability, action, outcome)
			VALUES ($3, $1, $2, 'x', 'call', 'allowed') RETURNING at, now()`, f.church, f.admin, backdated).Scan(&appAt, &dbNow)
	})
	if err != nil {
		t.Fatalf("app role insert: %v", err)
	}
	if !appAt.Equal(dbNow) {
		t.Errorf("the app role's backdated entry has at = %s, want the database's now() %s", appAt, dbNow)
	}

	var ownerAt, ownerNow time.Time
	var id int64
	err = s.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `INSERT INTO audit_log (at, church_id, capability, action, outcome)
			VALUES (now() + interval '1 day', $1, 'x', 'call', 'allowed') RETURNING id, at, now()`, f.church).Scan(&id, &ownerAt, &ownerNow)
	})
	if err != nil {
		t.Fatalf("owner insert: %v", err)
	}
	if !ownerAt.Equal(ownerNow) {
		t.Errorf("the owner's future-dated entry has at = %s, want now() %s", ownerAt, ownerNow)
	}

	err = s.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update_delete`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE audit_log SET at = $2 WHERE id = $1`, id, backdated)
		return err
	})
	if !store.IsPermissionDenied(err) {
		t.Errorf("owner UPDATE of at with the append-only trigger disabled: err = %v, want refused", err)
	}
}
