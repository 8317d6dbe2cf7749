package attendanceimport_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/attendanceimport"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/logic"
	"github.com/neemias/neemias-mcp/internal/onboard"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/rosterexport"
	"github.com/neemias/neemias-mcp/internal/rosterimport"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// TestFixtureExcelPtBR: Excel's pt-BR CSV (Windows-1252, semicolons, CRLF, DD/MM/YYYY) with a
// title row above the header, a name in capitals, class names without their accents or in
// another case, an Excel serial date, a child who has left (archived), times as 09:05 and
// 9h10; and every refusal: a repeated row, the same child in two classes on one day, a name
// two children share, an unknown class, a future date, a date before the child's birth, an
// unknown child, a check-out before the check-in, a time that does not exist.
func TestFixtureExcelPtBR(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	church(t, st, "central", fixtureKids)
	rep := fixture(t, st, "excel-ptbr-windows1252.csv", attendanceimport.Options{Church: "central"}, []string{
		"Bento Teste 2025-06-15 Juniores 00:00- imported",
		"Cecília Fictícia 2025-06-01 Berçário 09:10- imported",
		"Davi Arquivado 2025-06-22 Juniores 08:55-11:00 imported",
		"João Conceição 2025-06-01 Primários 09:05-10:40 imported",
		"João Conceição 2025-06-15 Primários 09:00-10:30 imported",
	})
	if rep.Encoding != rosterimport.EncWin1252 || rep.Separator != ';' || rep.HeaderRow != 2 || rep.DateOrder != rosterimport.OrderDMY {
		t.Errorf("encoding %s separator %q header row %d date order %s", rep.Encoding, rep.Separator, rep.HeaderRow, rep.DateOrder)
	}
	if rep.Lines != 14 || rep.Imported != 5 || rep.Present != 0 || rep.Children != 4 || rep.ServiceDays != 3 || !rep.Committed {
		t.Errorf("lines %d imported %d present %d children %d service days %d committed %v", rep.Lines, rep.Imported, rep.Present, rep.Children, rep.ServiceDays, rep.Committed)
	}
	wantRefused(t, rep, map[int]string{
		7:  "repeats row 6 (same child, same day, same class)",
		8:  "row 5 already puts this child in another class on this day",
		9:  "more than one child of this church has this name: add a birth date column",
		10: "the class does not exist in this church",
		11: "the date is today or in the future",
		12: "the date is before the child's birth",
		13: "no child of this church has this full name",
		15: `the time in column "Saída" is before the one in column "Entrada"`,
		16: `column "Entrada" has a time that does not exist`,
	})
	noPII(t, rep, "João", "Cecília", "CECÍLIA", "Bento", "Ana", "Souza", "Pedro", "Barulho", "Primários", "Juniores", "2025", "45830", "09:05", "9h10")

	// The history is told apart: checked in by the import account, which cannot sign in; the
	// pick-up columns hold random bytes under no key, all different; one audit entry per run.
	var accounts, distinctHashes, keyed, attempts, locked, audits int
	var role string
	var disabled, password bool
	if err := st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT count(*), min(role), bool_and(disabled_at IS NOT NULL), bool_or(password_hash IS NOT NULL)
			FROM users WHERE email = $1`, attendanceimport.ImportAccountEmail).Scan(&accounts, &role, &disabled, &password); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT count(DISTINCT pickup_code_hash), count(pickup_key_id), sum(failed_pickup_attempts), count(locked_at)
			FROM checkins WHERE length(pickup_code_salt) = 16 AND length(pickup_code_hash) = 32`).Scan(&distinctHashes, &keyed, &attempts, &locked); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE action = 'import.attendance' AND user_id IS NULL AND client_id = 'neemias-mcp-cli'
			AND capability = 'operator' AND outcome = 'allowed'`).Scan(&audits)
	}); err != nil {
		t.Fatal(err)
	}
	if accounts != 1 || role != store.RoleVoluntario || !disabled || password {
		t.Errorf("import account: %d accounts, role %s, disabled %v, password %v", accounts, role, disabled, password)
	}
	if distinctHashes != 5 || keyed != 0 || attempts != 0 || locked != 0 {
		t.Errorf("pick-up columns: %d distinct hashes (want 5), %d keyed, %d attempts, %d locked", distinctHashes, keyed, attempts, locked)
	}
	if audits != 2 {
		t.Errorf("%d audit entries, want one per run (2)", audits)
	}
}

// TestFixtureUSExport: an English export (UTF-8, commas, MM/DD/YYYY found from the values,
// AM/PM times, an ISO date-time) with a birth-date column that tells the two Ana Souza apart,
// "Souza, Ana" order, names and a class written without accents; a birth date no Ana has and
// a class name in English refuse their rows.
func TestFixtureUSExport(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	church(t, st, "central", fixtureKids)
	rep := fixture(t, st, "us-export.csv", attendanceimport.Options{Church: "central"}, []string{
		"Ana Souza 2025-06-01 Maternal 09:15-10:45 imported",
		"Ana Souza 2025-06-01 Maternal 09:20-12:05 imported",
		"Ana Souza 2025-06-08 Maternal 09:30- imported",
		"João Conceição 2025-06-29 Primários 09:00- imported",
	})
	if rep.DateOrder != rosterimport.OrderMDY || rep.Encoding != rosterimport.EncUTF8 || rep.Separator != ',' {
		t.Errorf("date order %s encoding %s separator %q", rep.DateOrder, rep.Encoding, rep.Separator)
	}
	wantRefused(t, rep, map[int]string{4: "this church has a child of this name, but not with this birth date", 6: "the class does not exist"})
	// The 2019 Ana came twice, the 2020 one once.
	var n int
	if err := st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM checkins ck JOIN children c ON c.id = ck.child_id WHERE c.birth_date = '2019-03-14'`).Scan(&n)
	}); err != nil || n != 2 {
		t.Errorf("the 2019 Ana: %d check-ins, %v", n, err)
	}
	noPII(t, rep, "Ana", "Souza", "Juniors", "03/14", "9:15")
}

// TestFixtureCP850: Excel's "CSV (MS-DOS)" (CP850), its header with accents ("Nome da
// criança", "Dia", "Sala", "Hora de entrada"): no mojibake, so the names are found.
func TestFixtureCP850(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	church(t, st, "dos", fixtureKids)
	rep := fixture(t, st, "excel-msdos-cp850.csv", attendanceimport.Options{Church: "dos"}, []string{
		"Iaçanã Ávila 2025-06-07 Maternal 09:00- imported",
		"Iaçanã Ávila 2025-06-14 Maternal 08:50- imported",
		"João Conceição 2025-06-14 Primários 09:10- imported",
	})
	if rep.Encoding != rosterimport.EncCP850 || len(rep.Refused) != 0 {
		t.Errorf("encoding %s, refused %v", rep.Encoding, rep.Refused)
	}
}

// TestAttendanceSummarySeesImports: after the imports, attendance_summary for June 2025 (as the
// church's admin, through internal/logic) counts the imported days: the answer to "how many
// kids came in June?".
func TestAttendanceSummarySeesImports(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	church(t, st, "central", fixtureKids)
	for _, f := range []string{"excel-ptbr-windows1252.csv", "us-export.csv", "excel-msdos-cp850.csv"} {
		importFile(t, st, "testdata/"+f, attendanceimport.Options{Church: "central"})
	}
	ctx := context.Background()
	admin, err := onboard.AddUser(ctx, st, "central", onboard.NewUser{Email: "pastora@central.example", Role: store.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	var churchID = mustChurch(t, st, "central")
	sc, _ := scopes.RoleScopes(store.RoleAdmin)
	ctx = principal.With(ctx, principal.Principal{UserID: admin.ID, ChurchID: churchID, Role: store.RoleAdmin, Scopes: sc, ClientID: "test"})
	from, to := capability.DateOf(date("2025-06-01")), capability.DateOf(date("2025-06-30"))
	out, err := logic.New(st).AttendanceSummary(ctx, &capapi.AttendanceSummaryInput{From: &from, To: &to})
	if err != nil {
		t.Fatal(err)
	}
	// Check-ins: 5 (pt-BR) + 4 (US) + 3 (CP850) = 12, of 7 children: both Anas, João,
	// Cecília, Bento, Davi, Iaçanã.
	if out.TotalCheckins != 12 || out.Children != 7 {
		t.Errorf("June: %d check-ins of %d children, want 12 of 7", out.TotalCheckins, out.Children)
	}
	got := map[string][2]int64{}
	for _, c := range out.Classes {
		got[c.ClassName] = [2]int64{c.Children, c.Checkins}
	}
	want := map[string][2]int64{"Berçário": {1, 1}, "Juniores": {2, 2}, "Maternal": {3, 5}, "Primários": {1, 4}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("June by class, [children, check-ins] (-want +got):\n%s", diff)
	}
	days := map[string]int64{}
	for _, d := range out.Days {
		days[d.Date.String()] += d.Checkins
	}
	if days["2025-06-01"] != 4 || days["2025-06-22"] != 1 || len(days) != 7 {
		t.Errorf("days %v", days)
	}
}

func mustChurch(t testing.TB, st *store.Store, slug string) (id uuid.UUID) {
	t.Helper()
	if err := st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		ch, err := onboard.ChurchBySlug(ctx, tx, slug)
		id = ch.ID
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestExportRoundTrip: `export attendance`'s file (UTF-8 BOM, its pt header with the child's
// handle, "Retirada por" ignored) imports as it is: every row already present; into a church
// without those check-ins, it brings back the same rows, times included.
func TestExportRoundTrip(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	church(t, st, "central", fixtureKids)
	importFile(t, st, "testdata/excel-ptbr-windows1252.csv", attendanceimport.Options{Church: "central"})
	importFile(t, st, "testdata/us-export.csv", attendanceimport.Options{Church: "central"})
	want := checkins(t, st, "central")
	ctx := context.Background()
	for _, lang := range []rosterexport.Lang{rosterexport.PT, rosterexport.EN} {
		var buf bytes.Buffer
		if _, err := rosterexport.Attendance(ctx, st, "central", date("2025-06-01"), date("2025-06-30"), lang, &buf); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, st, "central")
		rep := importBytes(t, st, buf.Bytes(), attendanceimport.Options{Church: "central"})
		if rep.Present != len(want) || rep.Imported != 0 || len(rep.Refused) != 0 || len(rep.Warnings) != 0 {
			t.Errorf("%s: present %d (want %d), imported %d, refused %v, warnings %v", lang, rep.Present, len(want), rep.Imported, rep.Refused, rep.Warnings)
		}
		if diff := cmp.Diff(before, snapshot(t, st, "central")); diff != "" {
			t.Errorf("%s: importing the export changed rows (-before +after):\n%s", lang, diff)
		}
		if lang == rosterexport.PT && (rep.Columns[attendanceimport.FieldHandle] != "Código" || !strings.Contains(strings.Join(rep.Ignored, ","), "Retirada por")) {
			t.Errorf("columns %v, ignored %v", rep.Columns, rep.Ignored)
		}
		// Without the check-ins, the export brings them back.
		if err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `DELETE FROM checkins`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		rep = importBytes(t, st, buf.Bytes(), attendanceimport.Options{Church: "central"})
		if diff := cmp.Diff(want, checkins(t, st, "central")); diff != "" || rep.Imported != len(want) {
			t.Errorf("%s: re-created %d check-ins (-want +got):\n%s", lang, rep.Imported, diff)
		}
	}
}

// TestHandles: a handle column, or a child cell that is a handle, names the child whatever
// its name; a handle that is not this church's refuses the row, or with a name the name finds
// the child (with a warning); a handle and a name of two children refuse it.
func TestHandles(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	h := church(t, st, "central", fixtureKids)
	ana19, ana20, joao := h["Ana Souza 2019-03-14"], h["Ana Souza 2020-08-02"], h["João Conceição 2018-03-15"]
	other := "ZZZZZZ"
	for _, v := range h {
		if v == other {
			t.Fatal("the fixture has handle ZZZZZZ")
		}
	}
	file := strings.Join([]string{
		"Código;Criança;Data;Turma",
		ana19 + ";;01/06/2025;Maternal",                           // 2: by handle
		strings.ToLower(ana20) + ";Ana Souza;01/06/2025;Maternal", // 3: handle and name agree
		other + ";;08/06/2025;Maternal",                           // 4: unknown handle, no name
		other + ";João Conceição;08/06/2025;Primários",            // 5: unknown handle, found by name
		joao + ";Ana Souza;15/06/2025;Maternal",                   // 6: two children
		"K-7;;15/06/2025;Maternal",                                // 7: not a handle
		";;15/06/2025;Maternal",                                   // 8: no child
		"",
	}, "\n")
	rep := importBytes(t, st, []byte(file), attendanceimport.Options{Church: "central"})
	wantRefused(t, rep, map[int]string{
		4: "no child of this church has this handle",
		6: "the row's handle and name belong to different children",
		7: `column "Código" does not hold a Neemias child handle`,
		8: "the child is missing",
	})
	if len(rep.Warnings) != 1 || rep.Warnings[0].Line != 5 || !strings.Contains(rep.Warnings[0].EN, "found by name") {
		t.Errorf("warnings %+v", rep.Warnings)
	}
	// Without a handle column, a child cell that is a handle is read as one.
	rep = importBytes(t, st, []byte("Criança;Data;Turma\n"+ana20+";15/06/2025;Maternal\n"), attendanceimport.Options{Church: "central"})
	if rep.Imported != 1 || len(rep.Refused) != 0 {
		t.Errorf("a handle in the child column: imported %d, refused %v", rep.Imported, rep.Refused)
	}
	want := []string{
		"Ana Souza 2025-06-01 Maternal 00:00- imported",
		"Ana Souza 2025-06-01 Maternal 00:00- imported",
		"Ana Souza 2025-06-15 Maternal 00:00- imported",
		"João Conceição 2025-06-08 Primários 00:00- imported",
	}
	if diff := cmp.Diff(want, checkins(t, st, "central")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	noPII(t, rep, ana20)
}

// TestRecordedCheckins: a check-in made at the door is never changed by an import: a row of the
// same child, day and class is already present, one in another class is refused.
func TestRecordedCheckins(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	church(t, st, "central", fixtureKids)
	ctx := context.Background()
	staff, err := onboard.AddUser(ctx, st, "central", onboard.NewUser{Email: "secretaria@central.example", Role: store.RoleCadastro})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `
			WITH ch AS (SELECT id FROM churches WHERE slug = 'central'),
			     d AS (INSERT INTO service_days (church_id, service_date) SELECT id, '2025-06-01' FROM ch RETURNING church_id)
			INSERT INTO checkins (church_id, child_id, class_id, service_date, checked_in_at, checked_in_by, pickup_code_salt, pickup_code_hash)
			SELECT d.church_id, c.id, cl.id, '2025-06-01', '2025-06-01 09:00-03', $1, '\x00000000000000000000000000000000', sha256('x'::bytea)
			FROM d JOIN children c ON c.church_id = d.church_id JOIN classes cl ON cl.church_id = d.church_id
			WHERE (c.name, cl.name) IN (('João Conceição', 'Primários'), ('Bento Teste', 'Juniores'))`, staff.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, st, "central")
	rep := importBytes(t, st, []byte("Criança;Data;Turma;Entrada\nJoão Conceição;01/06/2025;Primários;10:00\nBento Teste;01/06/2025;Maternal;\n"),
		attendanceimport.Options{Church: "central", DateOrder: rosterimport.OrderDMY})
	if rep.Present != 1 || rep.Imported != 0 {
		t.Errorf("present %d imported %d", rep.Present, rep.Imported)
	}
	wantRefused(t, rep, map[int]string{3: "already has a check-in on this day in another class; the import does not change a recorded check-in"})
	after := snapshot(t, st, "central")
	// Only the audit entry was written: not even the import account (no check-in to write).
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("(-before +after):\n%s", diff)
	}
}

// TestDryRunAndStrict: a dry run reports what it would import and writes nothing (no
// check-in, service day, account or audit entry); --strict with a refused row imports nothing
// and says so; a whole-file problem imports nothing.
func TestDryRunAndStrict(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	church(t, st, "central", fixtureKids)
	ctx := context.Background()
	audits := func() (n int) {
		if err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE action = 'import.attendance'`).Scan(&n)
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := snapshot(t, st, "central")
	rep := importFile(t, st, "testdata/excel-ptbr-windows1252.csv", attendanceimport.Options{Church: "central", DryRun: true})
	if rep.Imported != 5 || rep.ServiceDays != 3 || rep.Committed || !rep.DryRun {
		t.Errorf("dry run: imported %d service days %d committed %v", rep.Imported, rep.ServiceDays, rep.Committed)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text, ""); err != nil || !strings.Contains(text.String(), "dry run (--dry-run), nothing was written") {
		t.Errorf("report: %v\n%s", err, text.String())
	}
	if diff := cmp.Diff(before, snapshot(t, st, "central")); diff != "" || audits() != 0 {
		t.Errorf("the dry run wrote (-before +after):\n%s", diff)
	}

	b := mustRead(t, "testdata/excel-ptbr-windows1252.csv")
	rep, err := attendanceimport.Run(ctx, st, bytes.NewReader(b), attendanceimport.Options{Church: "central", Strict: true})
	if !errors.Is(err, attendanceimport.ErrRefusedRows) || rep == nil || rep.Committed || len(rep.Refused) != 9 {
		t.Errorf("strict: err %v, report %+v", err, rep)
	}
	if diff := cmp.Diff(before, snapshot(t, st, "central")); diff != "" || audits() != 0 {
		t.Errorf("the strict run wrote (-before +after):\n%s", diff)
	}

	for _, tc := range []struct{ name, file, want string }{
		{"missing class column", "Criança;Data;Sala de aula\nAna Souza;01/06/2025;Maternal\n",
			`the header lacks columns: "turma"; columns found: "Criança", "Data", "Sala de aula"; is column "Sala de aula" meant as "turma"?`},
		{"missing child column", "Nome do menino;Data;Turma\nAna Souza;01/06/2025;Maternal\n", `the header lacks columns: "criança"`},
		{"ambiguous dates", "Criança;Data;Turma\nAna Souza;01/06/2025;Maternal\n", "give the order with --date-order"},
		{"contradicting columns", "Criança;Nascimento;Data;Turma\nAna Souza;14/03/2019;06/29/2025;Maternal\n",
			`column "Nascimento" has dates day first (row 2) and column "Data" month first (row 2)`},
		{"empty", "", "the file is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := attendanceimport.Run(ctx, st, strings.NewReader(tc.file), attendanceimport.Options{Church: "central"})
			if err == nil || !strings.Contains(err.Error(), tc.want) || rep != nil {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	// The ambiguous file with --date-order.
	rep = importBytes(t, st, []byte("Criança;Data;Turma\nJoão Conceição;01/06/2025;Primários\n"), attendanceimport.Options{Church: "central", DateOrder: rosterimport.OrderMDY})
	if got := checkins(t, st, "central"); rep.Imported != 1 || len(got) != 1 || got[0] != "João Conceição 2025-01-06 Primários 00:00- imported" {
		t.Errorf("--date-order mdy: %+v %v", rep, got)
	}
	if _, err := attendanceimport.Run(ctx, st, strings.NewReader("x"), attendanceimport.Options{Church: "nenhuma"}); err == nil || !strings.Contains(err.Error(), "no church with slug") {
		t.Errorf("unknown church: %v", err)
	}
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// syntheticAttendance is a file of n rows: kids children over n/kids Sundays from 2024-01-07,
// each in its class, with check-in and check-out times.
func syntheticAttendance(kids int, n int) ([]kid, []byte) {
	var ks []kid
	for i := range kids {
		ks = append(ks, kid{name: fmt.Sprintf("Criança %s Sintética", words(i)), birth: fmt.Sprintf("%d-%02d-%02d", 2014+i%8, 1+i%12, 1+i%28)})
	}
	classes := []string{"Juniores", "Primários", "Maternal", "Berçário"}
	var b strings.Builder
	b.WriteString("Criança;Nascimento;Data;Turma;Entrada;Saída\r\n")
	sunday := date("2024-01-07")
	for r := range n {
		k := ks[r%kids]
		day := sunday.AddDate(0, 0, 7*(r/kids))
		birth := date(k.birth)
		fmt.Fprintf(&b, "%s;%s;%s;%s;09:%02d;11:%02d\r\n", k.name, birth.Format("02/01/2006"), day.Format("02/01/2006"),
			classes[(r%kids)%len(classes)], r%60, r%60)
	}
	return ks, []byte(b.String())
}

// words spells i as letters, so that every synthetic name is distinct and a name ("Criança
// Bcd Sintética").
func words(i int) string {
	const letters = "bcdfghjklmnpqrstvwxz"
	s := ""
	for {
		s = string(letters[i%len(letters)]) + s
		i /= len(letters)
		if i == 0 {
			break
		}
	}
	return strings.ToUpper(s[:1]) + s[1:] + "a"
}

// TestImport20000 imports 20,000 attendance rows (400 children over 50 Sundays) and prints the
// time, then imports the file again (every row already present).
func TestImport20000(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	st := storetest.New(t)
	ks, file := syntheticAttendance(400, 20000)
	church(t, st, "grande", ks)
	rep := importBytes(t, st, file, attendanceimport.Options{Church: "grande"})
	if rep.Imported != 20000 || len(rep.Refused) != 0 || rep.ServiceDays != 50 || rep.Children != 400 {
		t.Fatalf("imported %d, service days %d, children %d, refused %d: %v", rep.Imported, rep.ServiceDays, rep.Children, len(rep.Refused), rep.Refused[:min(3, len(rep.Refused))])
	}
	again := importBytes(t, st, file, attendanceimport.Options{Church: "grande"})
	if again.Present != 20000 || again.Imported != 0 {
		t.Errorf("re-import: present %d imported %d", again.Present, again.Imported)
	}
	t.Logf("import of 20000 attendance rows (400 children, 50 service days): %s; re-import (all present): %s", rep.Elapsed, again.Elapsed)
	if rep.Elapsed > 30*time.Second {
		t.Errorf("20000 rows took %s", rep.Elapsed)
	}
}

// BenchmarkImport20000 measures an import of 20,000 attendance rows into a church without
// check-ins (each iteration in a church of its own).
func BenchmarkImport20000(b *testing.B) {
	st := storetest.New(b)
	ks, file := syntheticAttendance(400, 20000)
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		slug := fmt.Sprintf("bench-%d", i)
		church(b, st, slug, ks)
		b.StartTimer()
		rep, err := attendanceimport.Run(context.Background(), st, bytes.NewReader(file), attendanceimport.Options{Church: slug})
		if err != nil || rep.Imported != 20000 {
			b.Fatalf("imported %v, %v", rep, err)
		}
	}
}
