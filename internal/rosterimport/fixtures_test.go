package rosterimport_test

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/internal/onboard"
	"github.com/neemias/neemias-mcp/internal/rosterimport"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// state is a church's roster by names, row by row: each child with its birth date and
// health alerts, each guardian with its phone, each link with its relationship, each active
// consent record with its text version and legal basis.
func state(t testing.TB, st *store.Store, slug string) []string {
	t.Helper()
	var out []string
	err := st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			SELECT 'child ' || c.name || ' ' || c.birth_date || coalesce(' allergies=' || c.allergies, '') FROM children c
				JOIN churches ch ON ch.id = c.church_id WHERE ch.slug = $1
			UNION ALL SELECT 'guardian ' || g.name || ' ' || g.phone FROM guardians g JOIN churches ch ON ch.id = g.church_id WHERE ch.slug = $1
			UNION ALL SELECT 'link ' || g.name || ' -> ' || c.name || ' ' || gc.relationship FROM guardian_children gc
				JOIN guardians g ON g.id = gc.guardian_id JOIN children c ON c.id = gc.child_id JOIN churches ch ON ch.id = gc.church_id WHERE ch.slug = $1
			UNION ALL SELECT 'consent ' || g.name || ' -> ' || c.name || ' ' || cr.text_version || ' ' || cr.legal_basis FROM consent_records cr
				JOIN guardians g ON g.id = cr.guardian_id JOIN children c ON c.id = cr.child_id JOIN churches ch ON ch.id = cr.church_id
				WHERE ch.slug = $1 AND cr.revoked_at IS NULL
			ORDER BY 1`, slug)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return sorted(out)
}

func sorted(ss []string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return out
}

// refusedEN maps each refused row to its English reason; every reason has its Portuguese.
func refusedEN(t *testing.T, rep *rosterimport.Report) map[int]string {
	t.Helper()
	got := map[int]string{}
	for _, r := range rep.Refused {
		got[r.Line] = r.EN
		if r.PT == "" {
			t.Errorf("row %d: no Portuguese reason", r.Line)
		}
	}
	return got
}

func wantRefused(t *testing.T, rep *rosterimport.Report, want map[int]string) {
	t.Helper()
	got := refusedEN(t, rep)
	for line, w := range want {
		if !strings.Contains(got[line], w) {
			t.Errorf("row %d: refused with %q, want %q", line, got[line], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("refused rows %v, want those of %v", got, want)
	}
}

// noPII checks that a report quotes none of the strings (cell contents of the fixture).
func noPII(t *testing.T, rep *rosterimport.Report, cells ...string) {
	t.Helper()
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, c := range cells {
		if strings.Contains(text.String(), c) {
			t.Errorf("the report quotes %q:\n%s", c, text.String())
		}
	}
}

// fixture imports a testdata file, checks the state row by row, imports it again and checks
// that nothing changed.
func fixture(t *testing.T, st *store.Store, file string, opts rosterimport.Options, want []string) *rosterimport.Report {
	t.Helper()
	rep := importFile(t, st, "testdata/"+file, opts)
	if diff := cmp.Diff(sorted(want), state(t, st, opts.Church)); diff != "" {
		t.Errorf("%s: roster after the import (-want +got):\n%s", file, diff)
	}
	before := snapshot(t, st, opts.Church)
	again := importFile(t, st, "testdata/"+file, opts)
	if diff := cmp.Diff(before, snapshot(t, st, opts.Church)); diff != "" {
		t.Errorf("%s: re-importing changed rows (-before +after):\n%s", file, diff)
	}
	if again.Children.Created+again.Children.Updated+again.Guardians.Created+again.Guardians.Updated+
		again.Links.Created+again.Links.Updated+again.Consents != 0 {
		t.Errorf("%s: re-import reports changes: children %+v guardians %+v links %+v consents %d", file, again.Children, again.Guardians, again.Links, again.Consents)
	}
	return rep
}

// TestFixtureExcelPtBR: Excel's pt-BR CSV (Windows-1252, semicolons, CRLF) with a title row,
// first and last name columns, names in capitals, "Souza, Márcia" order, an Excel serial
// date, an 8-digit mobile, the family WhatsApp shared by mother and father (two guardians),
// relationships of the wider vocabulary, and consent cells that mean pending or refused.
func TestFixtureExcelPtBR(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	church(t, st, "central")
	rep := fixture(t, st, "excel-ptbr-windows1252.csv", rosterimport.Options{Church: "central"}, []string{
		"child Ana Clara de Souza Teste 2019-03-14 allergies=amendoim",
		"child Bento Exemplo Teste 2020-01-01",
		"child Cecília Fictícia 2018-07-30",
		"child Davi Fictício 2017-01-05",
		"consent Débora Fictícia -> Cecília Fictícia termo-2025-01 consent",
		"consent Fernanda de Souza Teste -> Ana Clara de Souza Teste termo-2025-01 consent",
		"consent Márcia Exemplo Teste -> Bento Exemplo Teste termo-2025-01 consent",
		"consent Márcio Fictício -> Davi Fictício termo-2025-01 consent",
		"consent Rodrigo Teste -> Ana Clara de Souza Teste termo-2025-01 consent",
		"guardian Débora Fictícia +5531900004103",
		"guardian Fernanda de Souza Teste +5511900004101",
		"guardian Márcia Exemplo Teste +5521980004102",
		"guardian Márcio Fictício +5531900004104",
		"guardian Rodrigo Teste +5511900004101",
		"link Débora Fictícia -> Cecília Fictícia legal_guardian",
		"link Fernanda de Souza Teste -> Ana Clara de Souza Teste mother",
		"link Márcia Exemplo Teste -> Bento Exemplo Teste grandparent",
		"link Márcio Fictício -> Davi Fictício other",
		"link Rodrigo Teste -> Ana Clara de Souza Teste father",
	})
	if rep.Encoding != rosterimport.EncWin1252 || rep.Separator != ';' || rep.HeaderRow != 2 || rep.DateOrder != rosterimport.OrderDMY {
		t.Errorf("encoding %s separator %q header row %d date order %s", rep.Encoding, rep.Separator, rep.HeaderRow, rep.DateOrder)
	}
	wantRefused(t, rep, map[int]string{8: "consent pending", 9: "consent pending", 10: "consent pending"})
	if len(rep.Warnings) != 1 || rep.Warnings[0].Line != 5 || !strings.Contains(rep.Warnings[0].EN, "8-digit mobile") {
		t.Errorf("warnings %+v, want row 5's mobile", rep.Warnings)
	}
	noPII(t, rep, "Ana", "Souza", "Pendente", "Recusado", "4101", "2019", "amendoim", "WhatsApp")
}

// TestFixtureGoogleForm: a Google Form's export (UTF-8, its long headers, a timestamp column,
// "Sim" consent, a multi-line answer, a decomposed accent). "Sim" needs --consent-version
// naming a registered text; "Não autorizo" refuses its row.
func TestFixtureGoogleForm(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	church(t, st, "central")
	ctx := context.Background()
	// Without --consent-version every "Sim" row is refused, saying what to do.
	rep := importFile(t, st, "testdata/google-form.csv", rosterimport.Options{Church: "central", DryRun: true})
	wantRefused(t, rep, map[int]string{2: "--consent-version", 3: "--consent-version", 4: "consent pending", 5: "--consent-version"})
	// An unregistered version is refused before anything is read.
	b, _ := os.ReadFile("testdata/google-form.csv")
	if _, err := rosterimport.Run(ctx, st, bytes.NewReader(b), rosterimport.Options{Church: "central", ConsentVersion: "termo-2025-01"}); err == nil ||
		!strings.Contains(err.Error(), "consent-text add") {
		t.Errorf("unregistered --consent-version: %v", err)
	}
	if _, err := onboard.AddConsentText(ctx, st, "central", "termo-2025-01", "Termo LGPD do formulário 2025"); err != nil {
		t.Fatal(err)
	}
	rep = fixture(t, st, "google-form.csv", rosterimport.Options{Church: "central", ConsentVersion: "termo-2025-01"}, []string{
		"child Conceição Formulário 2019-04-20",
		"child Joaquim Formulário 2016-12-17",
		"child Miguel Formulário 2018-08-08",
		"consent Otávio Formulário -> Miguel Formulário termo-2025-01 consent",
		"consent Patrícia Formulário -> Conceição Formulário termo-2025-01 consent",
		"consent Raquel Formulário -> Joaquim Formulário termo-2025-01 consent",
		"guardian Otávio Formulário +5511900005103",
		"guardian Patrícia Formulário +5511900005101",
		"guardian Raquel Formulário +5511900005102",
		"link Otávio Formulário -> Miguel Formulário father",
		"link Patrícia Formulário -> Conceição Formulário mother",
		"link Raquel Formulário -> Joaquim Formulário other",
	})
	// The multi-line answer of row 2 keeps the rows after it on their spreadsheet numbers.
	wantRefused(t, rep, map[int]string{4: "consent pending"})
	// Stored in NFC: the composed spelling finds the child.
	var n int
	if err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM children WHERE name = 'Conceição Formulário'`).Scan(&n)
	}); err != nil || n != 1 {
		t.Errorf("NFC name: %d rows, %v", n, err)
	}
	noPII(t, rep, "Formulário", "Sim", "autorizo", "domingos", "5101")
}

// TestFixtureUSExport: a US system's export (MM/DD/YYYY, found from the values; US phones
// with --default-country US; First/Last name columns; English relationships). A Brazilian
// number with +55 is kept; one without it is not valid in the US and is refused, not re-homed.
func TestFixtureUSExport(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	church(t, st, "central")
	// With Brazil as the default country the US numbers are refused, never made Brazilian.
	rep := importFile(t, st, "testdata/us-export.csv", rosterimport.Options{Church: "central", DryRun: true})
	wantRefused(t, rep, map[int]string{2: "not an area code", 3: "not an area code", 4: "not an area code", 5: "not an area code"})
	rep = fixture(t, st, "us-export.csv", rosterimport.Options{Church: "central", DefaultCountry: "US"}, []string{
		"child Ava Placeholder 2016-12-25",
		"child Lucas Placeholder 2017-01-02",
		"child Noah Sample 2019-07-04",
		"child Olivia Sample 2018-03-15",
		"consent Emma Sample -> Noah Sample v1 consent",
		"consent Emma Sample -> Olivia Sample v1 consent",
		"consent Liam Sample -> Olivia Sample v1 consent",
		"consent Mia Placeholder -> Ava Placeholder v1 consent",
		"consent Mia Placeholder -> Lucas Placeholder v1 consent",
		"guardian Mia Placeholder +14155550134",
		"guardian Mia Placeholder +5511900006101",
		"guardian Emma Sample +14155550132",
		"guardian Liam Sample +14155550133",
		"link Emma Sample -> Noah Sample mother",
		"link Emma Sample -> Olivia Sample mother",
		"link Liam Sample -> Olivia Sample father",
		"link Mia Placeholder -> Ava Placeholder grandparent",
		"link Mia Placeholder -> Lucas Placeholder other",
	})
	if rep.DateOrder != rosterimport.OrderMDY {
		t.Errorf("date order %s, want mdy", rep.DateOrder)
	}
	wantRefused(t, rep, map[int]string{7: "invalid phone number for US"})
	noPII(t, rep, "Sample", "Placeholder", "555", "03/15")
}

// TestFixtureEncodings: Excel's "CSV (MS-DOS)" (CP850, a header without accents), Excel's
// "Unicode Text" (UTF-16 LE with BOM, tabs), and a UTF-8 file with one row pasted from a
// Windows-1252 sheet: no mojibake in any.
func TestFixtureEncodings(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	church(t, st, "dos")
	rep := fixture(t, st, "excel-msdos-cp850.csv", rosterimport.Options{Church: "dos"}, []string{
		"child Iaçanã Ávila 2019-12-25",
		"child João Conceição 2018-03-15",
		"consent Graça Conceição -> Iaçanã Ávila v1 consent",
		"consent Graça Conceição -> João Conceição v1 consent",
		"guardian Graça Conceição +5511900007101",
		"link Graça Conceição -> Iaçanã Ávila mother",
		"link Graça Conceição -> João Conceição mother",
	})
	if rep.Encoding != rosterimport.EncCP850 {
		t.Errorf("encoding %s", rep.Encoding)
	}
	church(t, st, "utf16")
	if rep := fixture(t, st, "unicode-utf16le.csv", rosterimport.Options{Church: "utf16"}, []string{
		"child Ênio Unicode 2019-02-14",
		"child Ícaro Unicode 2018-05-13",
		"consent Zélia Unicode -> Ênio Unicode v1 consent",
		"consent Zélia Unicode -> Ícaro Unicode v1 consent",
		"guardian Zélia Unicode +5511900008101",
		"link Zélia Unicode -> Ênio Unicode grandparent",
		"link Zélia Unicode -> Ícaro Unicode grandparent",
	}); rep.Encoding != rosterimport.EncUTF16LE || rep.Separator != '\t' {
		t.Errorf("encoding %s separator %q", rep.Encoding, rep.Separator)
	}
	church(t, st, "misto")
	rep = fixture(t, st, "mixed-utf8-windows1252.csv", rosterimport.Options{Church: "misto"}, []string{
		"child Mário Misto 2018-01-13",
		"child Otília Misto 2018-03-15",
		"child Tânia Misto 2018-02-14",
		"consent Lúcia Misto -> Mário Misto v1 consent",
		"consent Lúcia Misto -> Otília Misto v1 consent",
		"consent Lúcia Misto -> Tânia Misto v1 consent",
		"guardian Lúcia Misto +5511900009201",
		"link Lúcia Misto -> Mário Misto other",
		"link Lúcia Misto -> Otília Misto other",
		"link Lúcia Misto -> Tânia Misto other",
	})
	if len(rep.Warnings) != 1 || rep.Warnings[0].Line != 3 || !strings.Contains(rep.Warnings[0].EN, "read as Windows-1252") {
		t.Errorf("warnings %+v, want row 3 read as Windows-1252", rep.Warnings)
	}
}

// TestFixtureBrokenQuotes: a "sep=;" line, a quoted cell with a line break, a row with an
// extra field, an unclosed quote: reported by spreadsheet row, and the rows after the
// unclosed quote are imported, not swallowed.
func TestFixtureBrokenQuotes(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	church(t, st, "central")
	rep := fixture(t, st, "broken-quotes.csv", rosterimport.Options{Church: "central"}, []string{
		"child Quintino Quebrado 2018-04-16",
		"child Quênia Quebrada 2018-05-17",
		"child Quésia Quebrada 2018-01-13",
		"consent Rute Quebrada -> Quintino Quebrado v1 consent",
		"consent Rute Quebrada -> Quênia Quebrada v1 consent",
		"consent Rute Quebrada -> Quésia Quebrada v1 consent",
		"guardian Rute Quebrada +5511900009101",
		"link Rute Quebrada -> Quintino Quebrado other",
		"link Rute Quebrada -> Quênia Quebrada other",
		"link Rute Quebrada -> Quésia Quebrada other",
	})
	wantRefused(t, rep, map[int]string{3: "the row has 7 fields and the header 6", 4: `a quote (") opened in column "Observações" is never closed`})
	if rep.Lines != 5 || rep.Imported != 3 {
		t.Errorf("rows read %d imported %d, want 5 and 3", rep.Lines, rep.Imported)
	}
	noPII(t, rep, "Quebrad", "sem fechar", "linha um", "9101")
}

// TestFixtureIdentity: the identity rules, on a second sheet of the same church (without a
// relationship column): another family's child of the same name and birth date stays
// another child; the same mother written with her middle name is the same guardian (her
// record gets the fuller name); two people on one phone stay two guardians; another family's
// guardian on a known phone is a new guardian, not a rename; links keep their relationships.
// Importing the first sheet again flips nothing back.
func TestFixtureIdentity(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	church(t, st, "central")
	fixture(t, st, "identity-base.csv", rosterimport.Options{Church: "central"}, []string{
		"child Pedro Homônimo 2019-01-13",
		"child Rosa Irmã 2018-02-14",
		"child Tomé Irmão 2017-03-15",
		"consent Alice Primeira -> Pedro Homônimo v1 consent",
		"consent Jonas Corrigido -> Tomé Irmão v1 consent",
		"consent Rosa Corrigida -> Rosa Irmã v1 consent",
		"consent Rosa Corrigida -> Tomé Irmão v1 consent",
		"guardian Alice Primeira +5511900009301",
		"guardian Jonas Corrigido +5511900009302",
		"guardian Rosa Corrigida +5511900009302",
		"link Alice Primeira -> Pedro Homônimo mother",
		"link Jonas Corrigido -> Tomé Irmão father",
		"link Rosa Corrigida -> Rosa Irmã mother",
		"link Rosa Corrigida -> Tomé Irmão mother",
	})
	want := []string{
		"child Pedro Homônimo 2019-01-13",
		"child Pedro Homônimo 2019-01-13",
		"child Rosa Irmã 2018-02-14",
		"child Tomé Irmão 2017-03-15",
		"child Úrsula Vizinha 2016-04-16",
		"consent Alice Primeira -> Pedro Homônimo v1 consent",
		"consent Bruno Segundo -> Pedro Homônimo v1 consent",
		"consent Carla Vizinha -> Úrsula Vizinha v1 consent",
		"consent Jonas Corrigido -> Tomé Irmão v1 consent",
		"consent Rosa Maria Corrigida -> Rosa Irmã v1 consent",
		"consent Rosa Maria Corrigida -> Tomé Irmão v1 consent",
		"guardian Alice Primeira +5511900009301",
		"guardian Bruno Segundo +5521900009311",
		"guardian Carla Vizinha +5511900009301",
		"guardian Jonas Corrigido +5511900009302",
		"guardian Rosa Maria Corrigida +5511900009302",
		"link Alice Primeira -> Pedro Homônimo mother",
		"link Bruno Segundo -> Pedro Homônimo other",
		"link Carla Vizinha -> Úrsula Vizinha other",
		"link Jonas Corrigido -> Tomé Irmão father",
		"link Rosa Maria Corrigida -> Rosa Irmã mother",
		"link Rosa Maria Corrigida -> Tomé Irmão mother",
	}
	rep := fixture(t, st, "identity-next.csv", rosterimport.Options{Church: "central"}, want)
	if rep.Children != (rosterimport.Counts{Created: 2, Unchanged: 2}) || rep.Guardians != (rosterimport.Counts{Created: 2, Updated: 1, Unchanged: 1}) {
		t.Errorf("children %+v guardians %+v", rep.Children, rep.Guardians)
	}
	if len(rep.Warnings) != 1 || rep.Warnings[0].Line != 2 || !strings.Contains(rep.Warnings[0].EN, "same name and birth date") {
		t.Errorf("warnings %+v, want row 2's homonym", rep.Warnings)
	}
	// The two Pedros are in two families: no guardian of one is linked to the other.
	var crossed int
	if err := st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(DISTINCT gc.child_id) FROM guardian_children gc JOIN children c ON c.id = gc.child_id
			JOIN guardians g ON g.id = gc.guardian_id WHERE c.name = 'Pedro Homônimo' AND g.name IN ('Alice Primeira', 'Bruno Segundo')`).Scan(&crossed)
	}); err != nil || crossed != 2 {
		t.Errorf("the Pedros: %d children for their two guardians, %v", crossed, err)
	}
	// The first sheet again: Rosa keeps her fuller name, nothing else changes.
	importFile(t, st, "testdata/identity-base.csv", rosterimport.Options{Church: "central"})
	if diff := cmp.Diff(sorted(want), state(t, st, "central")); diff != "" {
		t.Errorf("the first sheet again (-want +got):\n%s", diff)
	}
}

// TestFileRefusals: whole-file problems name the columns or what to give, and import nothing.
func TestFileRefusals(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	church(t, st, "central")
	for _, tc := range []struct {
		name, file, want string
		opts             rosterimport.Options
	}{
		{"ambiguous dates", "nome;nascimento;responsável;telefone;consentimento\nAna Teste;05/03/2018;Rosa Teste;(11) 90000-0001;v1\n",
			"give the order with --date-order", rosterimport.Options{}},
		{"contradicting dates", "nome;nascimento;responsável;telefone;consentimento\nAna Teste;25/03/2018;Rosa Teste;(11) 90000-0001;v1\nBia Teste;03/25/2018;Rosa Teste;(11) 90000-0001;v1\n",
			"day first (row 2) and month first (row 3)", rosterimport.Options{}},
		{"closest column", "Nome;Data Nasc.;Responsável;Fone Resp\n", `lacks columns: "telefone"; columns found: "Nome", "Data Nasc.", "Responsável", "Fone Resp"; is column "Fone Resp" meant as "telefone"?`,
			rosterimport.Options{}},
		{"UTF-16 without BOM", "n\x00o\x00m\x00e\x00\n\x00", "NUL bytes", rosterimport.Options{}},
		{"bad default country", "nome;nascimento;responsável;telefone\n", "--default-country", rosterimport.Options{DefaultCountry: "ZZ"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Church = "central"
			rep, err := rosterimport.Run(context.Background(), st, strings.NewReader(tc.file), tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) || rep != nil {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	// The ambiguous file with --date-order.
	rep := importBytes(t, st, []byte("nome;nascimento;responsável;telefone;consentimento\nAna Teste;05/03/2018;Rosa Teste;(11) 90000-0001;v1\n"),
		rosterimport.Options{Church: "central", DateOrder: rosterimport.OrderMDY})
	if rep.Imported != 1 || !strings.Contains(strings.Join(state(t, st, "central"), "\n"), "child Ana Teste 2018-05-03") {
		t.Errorf("--date-order mdy: %+v %v", rep, state(t, st, "central"))
	}
}
