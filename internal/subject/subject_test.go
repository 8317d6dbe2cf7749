package subject_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
	"github.com/neemias/neemias-mcp/internal/subject"
)

// family is a fixture of the demo church: guardian A (with an account) is the only guardian
// of child X and shares child Y with guardian B.
type family struct {
	a, b, account, x, y uuid.UUID
	checkinsX           int
}

// The fixture's personal values; erasing A must leave none of the first group anywhere.
const (
	nameA      = "Zuleica Quintanilha"
	phoneA     = "+55 11 97777-1234"
	emailA     = "zuleica.q@demo.neemias.test"
	nameX      = "<script>alert(1)</script> Ximena"
	birthX     = "2019-05-17"
	allergyX   = "Amendoim torrado"
	medicalX   = "Asma leve noturna"
	trustedX   = "Tereza Confiavel"
	trustedTel = "+55 11 96666-4321"
	restricted = "Rogerio Impedido"
	restrictN  = "Ordem judicial: ligar para a coordenação"
	nameB      = "Bartolomeu Borges"
	nameY      = "Yuri Borges"
)

var erased = []string{nameA, phoneA, emailA, "Ximena", allergyX, medicalX, trustedX, trustedTel, restricted, restrictN}

func exec(t *testing.T, st *store.Store, fn func(ctx context.Context, tx pgx.Tx) error) {
	t.Helper()
	if err := st.InSystemTx(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func newFamily(t *testing.T, st *store.Store) family {
	t.Helper()
	f := family{a: uuid.New(), b: uuid.New(), account: uuid.New(), x: uuid.New(), y: uuid.New()}
	church, admin := seed.DemoChurchID, seed.DemoAdminID
	exec(t, st, func(ctx context.Context, tx pgx.Tx) error {
		var class uuid.UUID
		if err := tx.QueryRow(ctx, `SELECT id FROM classes WHERE church_id = $1 ORDER BY name LIMIT 1`, church).Scan(&class); err != nil {
			return err
		}
		stmts := []struct {
			sql  string
			args []any
		}{
			{`INSERT INTO users (id, church_id, email, display_name, role) VALUES ($1, $2, $3, $4, 'RESPONSAVEL')`, []any{f.account, church, emailA, nameA}},
			{`INSERT INTO guardians (id, church_id, user_id, name, phone) VALUES ($1, $2, $3, $4, $5)`, []any{f.a, church, f.account, nameA, phoneA}},
			{`INSERT INTO guardians (id, church_id, name, phone) VALUES ($1, $2, $3, '+55 11 95555-0000')`, []any{f.b, church, nameB}},
			{`INSERT INTO children (id, church_id, name, birth_date, class_id, allergies, medical_notes) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
				[]any{f.x, church, nameX, birthX, class, allergyX, medicalX}},
			{`INSERT INTO children (id, church_id, name, birth_date, class_id) VALUES ($1, $2, $3, '2018-03-09', $4)`, []any{f.y, church, nameY, class}},
			{`INSERT INTO guardian_children (guardian_id, child_id, church_id, relationship) VALUES ($1, $2, $3, 'mother'), ($1, $4, $3, 'mother'), ($5, $4, $3, 'father')`,
				[]any{f.a, f.x, church, f.y, f.b}},
			{`INSERT INTO consent_records (church_id, guardian_id, child_id, text_version, legal_basis, granted_by) VALUES
				($1, $2, $3, 'v1', 'consent', $6), ($1, $2, $4, 'v1', 'consent', $6), ($1, $5, $4, 'v1', 'consent', $6)`,
				[]any{church, f.a, f.x, f.y, f.b, admin}},
			{`INSERT INTO pickup_adults (church_id, child_id, name, relationship, phone, authorized, created_by) VALUES ($1, $2, $3, 'tia', $4, true, $5)`,
				[]any{church, f.x, trustedX, trustedTel, admin}},
			{`INSERT INTO pickup_adults (church_id, child_id, name, relationship, authorized, note, created_by) VALUES ($1, $2, $3, 'pai', false, $4, $5)`,
				[]any{church, f.x, restricted, restrictN, admin}},
			{`INSERT INTO service_days (church_id, service_date) VALUES ($1, '2026-01-04'), ($1, '2026-01-11') ON CONFLICT DO NOTHING`, []any{church}},
		}
		for _, s := range stmts {
			if _, err := tx.Exec(ctx, s.sql, s.args...); err != nil {
				return fmt.Errorf("%.60s: %w", s.sql, err)
			}
		}
		for _, d := range []string{"2026-01-04", "2026-01-11"} {
			for _, child := range []uuid.UUID{f.x, f.y} {
				if _, err := tx.Exec(ctx, `INSERT INTO checkins (church_id, child_id, class_id, service_date, checked_in_at, checked_in_by,
						pickup_code_salt, pickup_code_hash, checked_out_at, checked_out_by, picked_up_by_guardian, picked_up_by_name)
					VALUES ($1, $2, $3, $4::date, $4::date + time '09:00', $5, $6, $7, $4::date + time '11:00', $5, $8, $9)`,
					church, child, class, d, admin, bytes.Repeat([]byte{1}, 16), bytes.Repeat([]byte{2}, 32), f.a, nameA); err != nil {
					return err
				}
			}
		}
		f.checkinsX = 2
		_, err := tx.Exec(ctx, `INSERT INTO audit_log (church_id, user_id, client_id, capability, action, target_ids, outcome)
			VALUES ($1, $2, 'claude', 'roster_child', 'read', ARRAY[$3::uuid], 'allowed')`, church, admin, f.x)
		return err
	})
	return f
}

// TestExport: every section holds the right rows for the fixture family and for the demo
// guardian, and nothing of another family; restrictions are withheld; the HTML escapes.
func TestExport(t *testing.T) {
	t.Parallel()
	st := storetest.NewSeeded(t, seed.Options{ChildrenPerChurch: 20, Months: 1})
	f := newFamily(t, st)
	ctx := context.Background()

	var demoGuardian uuid.UUID
	exec(t, st, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT id FROM guardians WHERE user_id = $1`, seed.DemoResponsavelID).Scan(&demoGuardian)
	})

	t.Run("fixture", func(t *testing.T) {
		r, err := subject.Export(ctx, st, seed.DemoChurchSlug, f.a)
		if err != nil {
			t.Fatal(err)
		}
		restrictions, trusted := 0, 0
		for _, p := range r.Pickups {
			if p.Withheld {
				restrictions++
				if p.Name != "" || p.Note != "" {
					t.Error("a restriction's person or note is in the export")
				}
			} else if p.Name == trustedX && p.Phone == trustedTel {
				trusted++
			}
		}
		var x subject.Child
		for _, c := range r.Children {
			if c.ID == f.x {
				x = c
			}
		}
		var auditX bool
		for _, a := range r.Audit {
			auditX = auditX || (a.Capability == "roster_child" && len(a.Targets) == 1 && a.Targets[0] == f.x)
		}
		for _, tc := range []struct {
			name      string
			got, want any
		}{
			{"guardian name", r.Guardian.Name, nameA},
			{"guardian phone", r.Guardian.Phone, phoneA},
			{"account", r.Guardian.Account != nil && r.Guardian.Account.Email == emailA, true},
			{"children", len(r.Children), 2},
			{"child X's alerts", x.Allergies + "|" + x.MedicalNotes + "|" + x.BirthDate + "|" + x.Name, allergyX + "|" + medicalX + "|" + birthX + "|" + nameX},
			{"links (B's too, by id)", len(r.Links), 3},
			{"consents", len(r.Consents), 3},
			{"trusted adult", trusted, 1},
			{"restriction withheld", restrictions, 1},
			{"check-ins", len(r.Checkins), 4},
			{"picked up by", r.Checkins[0].PickedUpBy, nameA},
			{"audit read of X", auditX, true},
			{"retained statements", len(r.Retained) > 0, true},
		} {
			if fmt.Sprint(tc.got) != fmt.Sprint(tc.want) {
				t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
			}
		}
		var js bytes.Buffer
		if err := subject.WriteJSON(&js, r); err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{nameB, "95555-0000", restricted, restrictN} {
			if strings.Contains(js.String(), s) {
				t.Errorf("the JSON export holds %q (another person's data)", s)
			}
		}
		var h bytes.Buffer
		if err := subject.WriteHTML(&h, r); err != nil {
			t.Fatal(err)
		}
		page := h.String()
		if strings.Contains(page, "<script>") || !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt; Ximena") {
			t.Error("the HTML does not escape the child's name")
		}
		for _, s := range []string{"src=", "href=", "@import", "url("} {
			if strings.Contains(page, s) {
				t.Errorf("the HTML refers to an external resource (%q)", s)
			}
		}
		for _, s := range []string{nameY, trustedX, allergyX, "O registro de auditoria"} {
			if !strings.Contains(page, s) {
				t.Errorf("the HTML lacks %q", s)
			}
		}
	})

	t.Run("demo guardian", func(t *testing.T) {
		r, err := subject.Export(ctx, st, seed.DemoChurchSlug, demoGuardian)
		if err != nil {
			t.Fatal(err)
		}
		var children, checkins, consents int
		var others []string
		exec(t, st, func(ctx context.Context, tx pgx.Tx) error {
			if err := tx.QueryRow(ctx, `SELECT count(*), (SELECT count(*) FROM checkins WHERE child_id IN (SELECT child_id FROM guardian_children WHERE guardian_id = $1))
				FROM guardian_children WHERE guardian_id = $1`, demoGuardian).Scan(&children, &checkins); err != nil {
				return err
			}
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM consent_records WHERE guardian_id = $1
				OR child_id IN (SELECT child_id FROM guardian_children WHERE guardian_id = $1)`, demoGuardian).Scan(&consents); err != nil {
				return err
			}
			rows, err := tx.Query(ctx, `SELECT name FROM children WHERE church_id = $1 AND id NOT IN (SELECT child_id FROM guardian_children WHERE guardian_id = $2)
				AND name NOT IN (SELECT c.name FROM children c JOIN guardian_children gc ON gc.child_id = c.id WHERE gc.guardian_id = $2)
				UNION SELECT phone FROM guardians WHERE church_id = $1 AND id <> $2`, seed.DemoChurchID, demoGuardian)
			if err != nil {
				return err
			}
			others, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
		if children == 0 || len(r.Children) != children || len(r.Checkins) != checkins || len(r.Consents) != consents {
			t.Errorf("children %d/%d, check-ins %d/%d, consents %d/%d (export/database)", len(r.Children), children, len(r.Checkins), checkins, len(r.Consents), consents)
		}
		var js, h bytes.Buffer
		if err := subject.WriteJSON(&js, r); err != nil {
			t.Fatal(err)
		}
		if err := subject.WriteHTML(&h, r); err != nil {
			t.Fatal(err)
		}
		for _, s := range others {
			if strings.Contains(js.String(), s) || strings.Contains(h.String(), s) {
				t.Errorf("the export holds another family's child name or phone")
			}
		}
		if !json.Valid(js.Bytes()) {
			t.Error("invalid JSON")
		}
	})

	t.Run("unknown guardian", func(t *testing.T) {
		if _, err := subject.Export(ctx, st, seed.DemoChurchSlug, uuid.New()); err == nil || !strings.Contains(err.Error(), "no guardian") {
			t.Errorf("got %v", err)
		}
	})
}

// snapshot is a digest of every row of every table.
func snapshot(t *testing.T, st *store.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	exec(t, st, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`)
		if err != nil {
			return err
		}
		tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		for _, tb := range tables {
			var d *string
			if err := tx.QueryRow(ctx, fmt.Sprintf(`SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM %s t`, pgx.Identifier{tb}.Sanitize())).Scan(&d); err != nil {
				return err
			}
			out[tb] = fmt.Sprint(d)
			if d != nil {
				out[tb] = *d
			}
		}
		return nil
	})
	return out
}

// traces counts, per table and column, the rows of every text, array, JSON and date column of
// every table that hold any of values (dates compared as dates).
func traces(t *testing.T, st *store.Store, values []string, date string) []string {
	t.Helper()
	var found []string
	exec(t, st, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c
			JOIN information_schema.tables tb ON tb.table_schema = c.table_schema AND tb.table_name = c.table_name AND tb.table_type = 'BASE TABLE'
			WHERE c.table_schema = 'public' AND c.data_type IN ('text', 'character varying', 'ARRAY', 'jsonb', 'json', 'date')`)
		if err != nil {
			return err
		}
		type col struct{ table, column, typ string }
		cols, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (col, error) {
			var c col
			return c, r.Scan(&c.table, &c.column, &c.typ)
		})
		if err != nil {
			return err
		}
		for _, c := range cols {
			ref := pgx.Identifier{c.table}.Sanitize() + "." + pgx.Identifier{c.column}.Sanitize()
			var n int
			if c.typ == "date" {
				err = tx.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s WHERE %s = $1::date`, pgx.Identifier{c.table}.Sanitize(), ref), date).Scan(&n)
			} else {
				err = tx.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s WHERE EXISTS (SELECT 1 FROM unnest($1::text[]) v WHERE strpos(lower(%s::text), lower(v)) > 0)`,
					pgx.Identifier{c.table}.Sanitize(), ref), values).Scan(&n)
			}
			if err != nil {
				return err
			}
			if n > 0 {
				found = append(found, fmt.Sprintf("%s.%s (%d rows)", c.table, c.column, n))
			}
		}
		return nil
	})
	return found
}

// TestErase: erasing A leaves none of A's or X's personal values in any column of any table,
// keeps X's check-ins and every audit row, leaves Y (who keeps B) intact but unlinked from A;
// the dry run changes nothing.
func TestErase(t *testing.T) {
	t.Parallel()
	st := storetest.NewSeeded(t, seed.Options{ChildrenPerChurch: 10, Months: 1})
	f := newFamily(t, st)
	ctx := context.Background()
	if found := traces(t, st, erased, birthX); len(found) == 0 {
		t.Fatal("the fixture's values are not found before the erasure: the search is broken")
	}
	count := func(sql string, args ...any) (n int) {
		t.Helper()
		exec(t, st, func(ctx context.Context, tx pgx.Tx) error { return tx.QueryRow(ctx, sql, args...).Scan(&n) })
		return n
	}
	auditBefore := count(`SELECT count(*) FROM audit_log`)

	before := snapshot(t, st)
	dry, err := subject.Erase(ctx, st, seed.DemoChurchSlug, f.a, true)
	if err != nil {
		t.Fatal(err)
	}
	if after := snapshot(t, st); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Error("the dry run changed the database")
	}

	p, err := subject.Erase(ctx, st, seed.DemoChurchSlug, f.a, false)
	if err != nil {
		t.Fatal(err)
	}
	p.DryRun = true
	if fmt.Sprint(p) != fmt.Sprint(dry) {
		t.Errorf("plan %+v, dry run said %+v", p, dry)
	}
	if found := traces(t, st, erased, birthX); len(found) > 0 {
		t.Errorf("personal data left after the erasure: %v", found)
	}
	for _, tc := range []struct {
		name string
		got  int
		want int
	}{
		{"anonymized children", len(p.ChildrenAnonymized), 1},
		{"unlinked children", len(p.ChildrenUnlinked), 1},
		{"X's check-ins kept", count(`SELECT count(*) FROM checkins WHERE child_id = $1`, f.x), f.checkinsX},
		{"X archived, birth year kept", count(`SELECT count(*) FROM children WHERE id = $1 AND archived_at IS NOT NULL AND birth_date = '2019-01-01' AND name = $2`, f.x, subject.Marker), 1},
		{"Y intact", count(`SELECT count(*) FROM children WHERE id = $1 AND name = $2 AND archived_at IS NULL AND birth_date = '2018-03-09'`, f.y, nameY), 1},
		{"Y keeps B", count(`SELECT count(*) FROM guardian_children WHERE child_id = $1 AND guardian_id = $2`, f.y, f.b), 1},
		{"Y unlinked from A", count(`SELECT count(*) FROM guardian_children WHERE child_id = $1 AND guardian_id = $2`, f.y, f.a), 0},
		{"B intact", count(`SELECT count(*) FROM guardians WHERE id = $1 AND name = $2`, f.b, nameB), 1},
		{"A's consents revoked, kept", count(`SELECT count(*) FROM consent_records WHERE guardian_id = $1 AND revoked_at IS NOT NULL`, f.a), 2},
		{"B's consent untouched", count(`SELECT count(*) FROM consent_records WHERE guardian_id = $1 AND revoked_at IS NULL`, f.b), 1},
		{"account disabled", count(`SELECT count(*) FROM users WHERE id = $1 AND disabled_at IS NOT NULL AND password_hash IS NULL`, f.account), 1},
		{"audit rows kept, erasure audited", count(`SELECT count(*) FROM audit_log`) - auditBefore, 1},
		{"erasure entry names A", count(`SELECT count(*) FROM audit_log WHERE action = 'subject.erase' AND $1 = ANY(target_ids) AND client_id = 'neemias-mcp-cli'`, f.a), 1},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, tc.got, tc.want)
		}
	}
	// The export still works on the erased guardian, and shows the marker.
	r, err := subject.Export(ctx, st, seed.DemoChurchSlug, f.a)
	if err != nil || r.Guardian.Name != subject.Marker || len(r.Children) != 1 {
		t.Errorf("export after erasure: %v, %q, %d children", err, r.Guardian.Name, len(r.Children))
	}
}

// TestRetention: the dry run counts and changes nothing; the run erases exactly those
// guardians; a recent family is untouched; a period under 30 days is refused.
func TestRetention(t *testing.T) {
	t.Parallel()
	st := storetest.NewSeeded(t, seed.Options{ChildrenPerChurch: 10, Months: 1, Until: time.Now().AddDate(-3, 0, 0)})
	f := newFamily(t, st) // enrolled now: recent, kept
	ctx := context.Background()
	period, err := subject.ParsePeriod("24m")
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, st)
	dry, err := subject.Retention(ctx, st, seed.DemoChurchSlug, period, true)
	if err != nil {
		t.Fatal(err)
	}
	if after := snapshot(t, st); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Error("the dry run changed the database")
	}
	if dry.Guardians == 0 || dry.ChildrenAnonymized == 0 {
		t.Fatalf("dry run found nothing: %+v", dry)
	}
	res, err := subject.Retention(ctx, st, seed.DemoChurchSlug, period, false)
	if err != nil {
		t.Fatal(err)
	}
	res.DryRun, res.Cutoff = true, dry.Cutoff
	if res != dry {
		t.Errorf("run %+v, dry run %+v", res, dry)
	}
	var erasedN, entries, fixtureKept int
	exec(t, st, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM guardians WHERE church_id = $1 AND name = $2),
			(SELECT count(*) FROM audit_log WHERE action = 'subject.retention'),
			(SELECT count(*) FROM guardians WHERE id IN ($3, $4) AND name <> $2)`, seed.DemoChurchID, subject.Marker, f.a, f.b).Scan(&erasedN, &entries, &fixtureKept)
	})
	if erasedN != dry.Guardians || entries != dry.Guardians || fixtureKept != 2 {
		t.Errorf("erased %d, audited %d, want %d; recent family kept %d of 2", erasedN, entries, dry.Guardians, fixtureKept)
	}
	again, err := subject.Retention(ctx, st, seed.DemoChurchSlug, period, true)
	if err != nil || again.Guardians != 0 {
		t.Errorf("a second run finds %d guardians (%v)", again.Guardians, err)
	}
	for _, s := range []string{"10d", "0m", "24", "2h", "-1y"} {
		p, err := subject.ParsePeriod(s)
		if err == nil {
			_, err = subject.Retention(ctx, st, seed.DemoChurchSlug, p, true)
		}
		if err == nil {
			t.Errorf("period %q accepted", s)
		}
	}
}
