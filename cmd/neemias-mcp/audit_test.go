package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// TestAuditExport: audit list|export answer by child, user, client and period, in a table,
// CSV and JSON; each read is itself audited (and part of later answers).
func TestAuditExport(t *testing.T) {
	st := storetest.NewSeeded(t, seed.Options{ChildrenPerChurch: 4, Months: 1})
	dbURL := st.Pool().Config().ConnString()
	childA, childB := uuid.New(), uuid.New()
	ctx := context.Background()
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		q := db.New(tx)
		for _, e := range []struct {
			user   uuid.UUID
			client string
			child  uuid.UUID
			action string
		}{
			{seed.DemoAdminID, "claude", childA, "read"},
			{seed.DemoAdminID, "claude", childB, "read"},
			{seed.DemoVoluntarioID, "cursor", childA, "checkin"},
		} {
			if err := audit.InsertFor(ctx, q, seed.DemoChurchID, e.user, audit.Entry{Capability: "roster_child", Action: e.action,
				Targets: []uuid.UUID{e.child}, Outcome: audit.Allowed, ClientID: e.client}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		cmd := root()
		cmd.SetOut(&out)
		cmd.SetErr(io.Discard)
		cmd.SetArgs(append(append([]string{"audit"}, args...), "--church", seed.DemoChurchSlug, "--database-url", dbURL))
		if err := cmd.Execute(); err != nil {
			t.Fatalf("audit %v: %v", args, err)
		}
		return out.String()
	}
	csvRows := func(s string) [][]string {
		t.Helper()
		rs, err := csv.NewReader(strings.NewReader(s)).ReadAll()
		if err != nil || len(rs) == 0 || strings.Join(rs[0], ",") != strings.Join(audit.Columns, ",") {
			t.Fatalf("CSV %q: %v", s, err)
		}
		var out [][]string
		for _, r := range rs[1:] {
			if r[5] != "audit_log" { // the earlier reads, audited, are part of the answer too
				out = append(out, r)
			}
		}
		return out
	}
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"export", "--child", childA.String()}, 2},
		{[]string{"export", "--child", childA.String(), "--user", seed.DemoAdminEmail}, 1},
		{[]string{"export", "--child", childA.String(), "--client", "cursor"}, 1},
		{[]string{"export", "--child", childB.String(), "--since", "2999-01-01"}, 0},
		{[]string{"export", "--child", childB.String(), "--until", "2999-01-01"}, 1},
	} {
		if got := csvRows(run(tc.args...)); len(got) != tc.want {
			t.Errorf("audit %v: %d rows, want %d: %v", tc.args, len(got), tc.want, got)
		}
	}
	var rs []audit.Row
	if err := json.Unmarshal([]byte(run("export", "--format", "json", "--user", seed.DemoVoluntarioID.String())), &rs); err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].ClientID != "cursor" || rs[0].Targets[0] != childA || *rs[0].UserID != seed.DemoVoluntarioID {
		t.Errorf("JSON export: %+v", rs)
	}
	if table := run("list", "--child", childA.String()); !strings.Contains(table, "audit.export") || !strings.Contains(table, "claude") || !strings.Contains(table, "cursor") {
		t.Errorf("table:\n%s", table)
	}
	// Every read was audited, naming the child it was about.
	var n int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE action = 'audit.export' AND $1 = ANY (target_ids)`, childA).Scan(&n); err != nil || n != 4 {
		t.Errorf("audit.export entries naming the child: %d (%v), want 4", n, err)
	}
}
