package audit_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

func TestEntryValidate(t *testing.T) {
	ok := audit.Entry{Capability: "roster_child", Action: "read.not_found", Outcome: audit.Denied}
	for _, tc := range []struct {
		name string
		mod  func(e *audit.Entry)
		want string // "" when valid
	}{
		{"valid", func(*audit.Entry) {}, ""},
		{"no capability", func(e *audit.Entry) { e.Capability = "" }, "capability"},
		{"long capability", func(e *audit.Entry) { e.Capability = strings.Repeat("x", 101) }, "capability"},
		{"upper-case action", func(e *audit.Entry) { e.Action = "Read" }, "action"},
		{"action with spaces", func(e *audit.Entry) { e.Action = "read child" }, "action"},
		{"unknown outcome", func(e *audit.Entry) { e.Outcome = "maybe" }, "outcome"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := ok
			tc.mod(&e)
			err := e.Validate()
			if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one about %q", err, tc.want)
			}
		})
	}
}

func TestRecordAndInsert(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	church, user, other := uuid.New(), uuid.New(), uuid.New()
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO churches (id, name, slug) VALUES ($1, 'Igreja', 'audit-test')`, church); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO users (id, church_id, email, display_name, role)
			VALUES ($2, $1, 'a@x.test', 'A', 'ADMIN'), ($3, $1, 'b@x.test', 'B', 'ADMIN')`, church, user, other)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	caller := store.Caller{ChurchID: church, UserID: user, Role: store.RoleAdmin}
	target := uuid.New()
	long := strings.Repeat("c", 250)

	if err := audit.Record(ctx, st, caller, audit.Entry{
		Capability: "roster_child", Action: "read", Outcome: audit.Allowed,
		Targets: []uuid.UUID{target, uuid.Nil, target}, ClientID: long, CorrelationID: "corr-1",
	}); err != nil {
		t.Fatal(err)
	}
	if err := audit.Record(ctx, st, store.Anonymous, audit.Entry{Capability: "roster_child", Action: "read.unauthenticated", Outcome: audit.Denied}); err != nil {
		t.Fatal(err)
	}
	// Row-level security: nobody writes entries in someone else's name.
	err = st.InTx(ctx, caller, func(ctx context.Context, tx pgx.Tx) error {
		return audit.Insert(ctx, db.New(tx), store.Caller{ChurchID: church, UserID: other, Role: store.RoleAdmin},
			audit.Entry{Capability: "x", Action: "read", Outcome: audit.Allowed})
	})
	if err == nil {
		t.Fatal("an entry on behalf of another user was accepted")
	}
	// Refused before the database: an invalid entry.
	if err := audit.Record(ctx, st, caller, audit.Entry{Capability: "x", Action: "READ", Outcome: audit.Allowed}); err == nil {
		t.Fatal("invalid action accepted")
	}

	type row struct {
		church, user *uuid.UUID
		client, corr *string
		targets      []uuid.UUID
		action       string
	}
	var rows []row
	err = st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		rs, err := tx.Query(ctx, `SELECT church_id, user_id, client_id, correlation_id, target_ids, action FROM audit_log ORDER BY id`)
		if err != nil {
			return err
		}
		defer rs.Close()
		for rs.Next() {
			var r row
			if err := rs.Scan(&r.church, &r.user, &r.client, &r.corr, &r.targets, &r.action); err != nil {
				return err
			}
			rows = append(rows, r)
		}
		return rs.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d entries, want 2", len(rows))
	}
	r := rows[0]
	if *r.church != church || *r.user != user || len(*r.client) != 200 || *r.corr != "corr-1" ||
		len(r.targets) != 1 || r.targets[0] != target || r.action != "read" {
		t.Errorf("first entry %+v", r)
	}
	if r := rows[1]; r.church != nil || r.user != nil || r.client != nil || r.corr != nil || len(r.targets) != 0 {
		t.Errorf("anonymous entry %+v", r)
	}
}
