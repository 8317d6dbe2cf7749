package rosterexport_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/internal/rosterexport"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// TestExports: on the demo church, the roster and a month's attendance as Excel reads them: the
// UTF-8 BOM, the language's header and separator, one row per enrolled child and guardian (an
// archived child left out), the same check-ins as the database, a formula-leading name
// neutralized, and the export audited with the children's ids.
func TestExports(t *testing.T) {
	t.Parallel()
	st := storetest.NewSeeded(t, seed.Options{ChildrenPerChurch: 30, Months: 2})
	ctx := context.Background()
	sys := func(sql string, args ...any) (n int) {
		t.Helper()
		if err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
			if strings.HasPrefix(sql, "SELECT") {
				return tx.QueryRow(ctx, sql, args...).Scan(&n)
			}
			_, err := tx.Exec(ctx, sql, args...)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	sys(`UPDATE children SET name = '=cmd|'' /C calc''!A0' WHERE id = (SELECT id FROM children WHERE church_id = $1 AND archived_at IS NULL ORDER BY id LIMIT 1)`, seed.DemoChurchID)
	sys(`UPDATE children SET archived_at = now() WHERE id = (SELECT id FROM children WHERE church_id = $1 AND archived_at IS NULL ORDER BY id DESC LIMIT 1)`, seed.DemoChurchID)
	wantRows := sys(`SELECT count(*) FROM children c LEFT JOIN guardian_children gc ON gc.child_id = c.id WHERE c.church_id = $1 AND c.archived_at IS NULL`, seed.DemoChurchID)
	wantKids := sys(`SELECT count(*) FROM children WHERE church_id = $1 AND archived_at IS NULL`, seed.DemoChurchID)

	read := func(t *testing.T, b []byte, sep rune) [][]string {
		t.Helper()
		if !bytes.HasPrefix(b, []byte("\uFEFF")) {
			t.Fatalf("no UTF-8 BOM: %q", b[:min(len(b), 20)])
		}
		r := csv.NewReader(bytes.NewReader(b[3:]))
		r.Comma = sep
		recs, err := r.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	for _, tc := range []struct {
		lang   rosterexport.Lang
		sep    rune
		header string
	}{{rosterexport.PT, ';', "Nome da criança"}, {rosterexport.EN, ',', "Child's name"}} {
		t.Run(string(tc.lang), func(t *testing.T) {
			var buf bytes.Buffer
			n, err := rosterexport.Roster(ctx, st, seed.DemoChurchSlug, tc.lang, &buf)
			if err != nil {
				t.Fatal(err)
			}
			recs := read(t, buf.Bytes(), tc.sep)
			if n != wantKids || len(recs) != wantRows+1 || recs[0][0] != tc.header {
				t.Errorf("%d children, %d rows (want %d children, %d rows), header %q", n, len(recs)-1, wantKids, wantRows, recs[0][0])
			}
			injected := 0
			for _, r := range recs[1:] {
				if strings.HasPrefix(r[0], "=") {
					t.Errorf("a formula cell went out as is: %q", r[0])
				}
				if strings.HasPrefix(r[0], "'=cmd") {
					injected++
				}
			}
			if injected == 0 {
				t.Error("the formula-leading name is not in the roster")
			}
			if !bytes.Contains(buf.Bytes(), []byte("\r\n")) {
				t.Error("rows do not end in CRLF")
			}
		})
	}
	if got := sys(`SELECT count(*) FROM audit_log WHERE action = 'export.roster' AND cardinality(target_ids) = $1`, wantKids); got != 2 {
		t.Errorf("%d roster exports audited with every child, want 2", got)
	}

	// A month of attendance: as many rows as check-ins, times in the church's zone.
	to := time.Now().UTC().Truncate(24 * time.Hour)
	from := to.AddDate(0, -1, 0)
	wantCk := sys(`SELECT count(*) FROM checkins WHERE church_id = $1 AND service_date BETWEEN $2 AND $3`, seed.DemoChurchID, from, to)
	var buf bytes.Buffer
	n, err := rosterexport.Attendance(ctx, st, seed.DemoChurchSlug, from, to, rosterexport.PT, &buf)
	if err != nil {
		t.Fatal(err)
	}
	recs := read(t, buf.Bytes(), ';')
	if n != wantCk || len(recs) != wantCk+1 || wantCk == 0 || recs[0][0] != "Data" {
		t.Errorf("%d check-ins, %d rows; want %d", n, len(recs)-1, wantCk)
	}
	for _, r := range recs[1:] {
		if _, err := time.Parse("02/01/2006", r[0]); err != nil || len(r[4]) != 5 {
			t.Errorf("row %q: date or time not as Excel pt-BR reads it", r)
			break
		}
	}
	if _, err := rosterexport.Attendance(ctx, st, seed.DemoChurchSlug, to, from, rosterexport.PT, &buf); err == nil || !strings.Contains(err.Error(), "is before --from") {
		t.Errorf("a reversed range: %v", err)
	}
	if _, err := rosterexport.Roster(ctx, st, "no-such-church", rosterexport.PT, &buf); err == nil {
		t.Error("an unknown church exported")
	}
	if _, err := rosterexport.ParseLang("fr"); err == nil {
		t.Error("--lang fr accepted")
	}
}
