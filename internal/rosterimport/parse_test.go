package rosterimport

import (
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

func TestParseDate(t *testing.T) {
	for _, tc := range []struct {
		in, want, reason string
	}{
		{"15/03/2018", "2018-03-15", ""},
		{"5/3/2018", "2018-03-05", ""},
		{"15-03-2018", "2018-03-15", ""},
		{"15.03.2018", "2018-03-15", ""},
		{"2018-03-15", "2018-03-15", ""},
		{"15/03/2018 00:00:00", "2018-03-15", ""},
		{"2018-03-15T00:00:00", "2018-03-15", ""},
		{"29/02/2020", "2020-02-29", ""},
		{"29/02/2019", "", "does not exist in the calendar"},
		{"03/15/2018", "", "does not exist in the calendar"}, // month first in a day-first file
		{"43831", "2020-01-01", ""},                          // an Excel serial date
		{"43831.5", "2020-01-01", ""},
		{"15/03/18", "", "2-digit year"},
		{"março de 2018", "", "unreadable"},
		{"", "", "missing"},
	} {
		got, reason := parseDate(tc.in, OrderDMY)
		switch {
		case tc.reason == "" && (reason != nil || got.Format(time.DateOnly) != tc.want):
			t.Errorf("parseDate(%q) = %v, %v; want %s", tc.in, got, reason, tc.want)
		case tc.reason != "" && (reason == nil || !strings.Contains(reason.EN, tc.reason) || reason.PT == ""):
			t.Errorf("parseDate(%q) reason %v, want one about %q", tc.in, reason, tc.reason)
		}
	}
}

func TestParsePhone(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"(11) 98765-4321", "+5511987654321"},
		{"11 98765 4321", "+5511987654321"},
		{"011987654321", "+5511987654321"},
		{"+55 (11) 98765-4321", "+5511987654321"},
		{"5511987654321", "+5511987654321"},
		{"(21) 3000-0001", "+552130000001"}, // a landline
		{"+351 912 345 678", "+351912345678"},
		{"98765-4321", ""}, // no area code
		{"1234", ""},
		{"(00) 91234-5678", ""}, // area code 00 does not exist
		{"não tem", ""},
		{"(415) 555-0132", ""}, // a US number is not a Brazilian landline (41) 5555-0132
		{"415-555-0132", ""},
		{"+1 (415) 555-0132", "+14155550132"},
		{"(11) 8765-4321", "+5511987654321"}, // an 8-digit mobile of before 2016 gets its 9
		{"(11) 9 8765-4321", "+5511987654321"},
		{"+55 11 98765 4321", "+5511987654321"},
		{"(011) 98765-4321", "+5511987654321"},
	} {
		got, _, reason := parsePhone(tc.in, "BR")
		if got != tc.want || (tc.want == "") != (reason != nil) {
			t.Errorf("parsePhone(%q) = %q, %v; want %q", tc.in, got, reason, tc.want)
		}
	}
}

func TestParsePhoneUS(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"(415) 555-0132", "+14155550132"},
		{"415.555.0132", "+14155550132"},
		{"(11) 98765-4321", ""}, // a Brazilian number needs +55 in a US file
		{"+55 (11) 98765-4321", "+5511987654321"},
	} {
		got, _, reason := parsePhone(tc.in, "US")
		if got != tc.want || (tc.want == "") != (reason != nil) {
			t.Errorf("parsePhone(%q, US) = %q, %v; want %q", tc.in, got, reason, tc.want)
		}
	}
}

func TestNames(t *testing.T) {
	for in, want := range map[string]string{
		"ANA CLARA DE SOUZA":      "Ana Clara de Souza",
		"Souza, Ana Clara":        "Ana Clara Souza",
		"  Ana   Clara  Souza  ":  "Ana Clara Souza",
		"JOÃO DOS SANTOS E SILVA": "João dos Santos e Silva",
		"MARIA D'ÁVILA":           "Maria D'Ávila",
		"Ana de Souza":            "Ana de Souza",
		"DE PAULA, JOSÉ":          "José de Paula",
	} {
		if got := normalizeName(in); got != want {
			t.Errorf("normalizeName(%q) = %q, want %q", in, got, want)
		}
	}
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"Rosa Corrigida", "Rosa Maria Corrigida", true},
		{"ROSA CORRIGIDA", "rosa corrigida", true},
		{"Rosa Corrigida", "Rosa Lima", false},
		{"Rosa Corrigida", "Jonas Corrigido", false},
		{"Ana", "Ana Souza", false},
	} {
		if got := samePerson(tc.a, tc.b); got != tc.same {
			t.Errorf("samePerson(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}

func TestConsentCells(t *testing.T) {
	for in, want := range map[string]consentKind{
		"": consentEmpty, "Não": consentNo, "NAO": consentNo, "Pendente": consentNo, "Não assinou": consentNo, "Não autorizo": consentNo,
		"Recusado": consentNo, "Falta assinar": consentNo, "No": consentNo, "Pending": consentNo, "Refused": consentNo, "-": consentNo,
		"Sim": consentYes, "sim": consentYes, "Yes": consentYes, "X": consentYes, "✓": consentYes, "Sim, autorizo": consentYes, "Assinado": consentYes,
		"v1": consentVersion, "termo-2025-01": consentVersion, "2024-01": consentVersion,
		"Entregue": consentUnreadable, "termo assinado em 2024": consentUnreadable,
	} {
		if got := classifyConsent(in); got != want {
			t.Errorf("classifyConsent(%q) = %v, want %v", in, got, want)
		}
	}
}

// fold skips the Unicode normalization of ASCII text and reuses its transformers: what it
// returns is what a fresh chain per call returned, ASCII or not, from one goroutine or many.
func TestFoldIsTheNormalization(t *testing.T) {
	reference := func(s string) string {
		n, _, err := transform.String(transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC), s)
		if err != nil {
			n = s
		}
		var b strings.Builder
		space := false
		for _, r := range strings.ToLower(n) {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				if space && b.Len() > 0 {
					b.WriteByte(' ')
				}
				space = false
				b.WriteRune(r)
			} else {
				space = true
			}
		}
		return b.String()
	}
	var ascii strings.Builder
	for c := 0; c < 128; c++ {
		ascii.WriteByte(byte(c))
	}
	in := []string{"", ascii.String(), " NOME_DA-CRIANCA ", "Nome da Criança", "AVÔ", "Ñandú Ŀ ǅ ﬁ", "e\u0301 a\u0300", "\xff\xfeinvalid", strings.Repeat("ção ", 2000)}
	for _, s := range in {
		if got, want := fold(s), reference(s); got != want {
			t.Errorf("fold(%.40q) = %.40q, want %.40q", s, got, want)
		}
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				for _, s := range in {
					if got, want := fold(s), reference(s); got != want {
						t.Errorf("concurrent fold(%.40q) = %.40q, want %.40q", s, got, want)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

func TestFoldHeaders(t *testing.T) {
	for in, want := range map[string]Field{
		"Nome da Criança": FieldChild, " NOME DA CRIANCA ": FieldChild, "nome_da_crianca": FieldChild, "Name": FieldChild,
		"Data de Nascimento": FieldBirthDate, "birth_date": FieldBirthDate, "Birth Date": FieldBirthDate,
		"Responsável": FieldGuardian, "RESPONSAVEL": FieldGuardian, "Celular": FieldPhone, "Telefone": FieldPhone,
		"Parentesco": FieldRelationship, "Consentimento": FieldConsent, "Base Legal": FieldLegalBasis, "legal_basis": FieldLegalBasis,
		"Turma": FieldClass,
	} {
		if got := aliasIndex[fold(in)]; got != want {
			t.Errorf("header %q: %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]Field{
		"Nome completo da criança": FieldChild, "Telefone (WhatsApp)": FieldPhone, "Termo LGPD": FieldConsent, "First Name": FieldChild,
		"Last Name": FieldChildLast, "Sobrenome": FieldChildLast, "Mobile Phone": FieldPhone, "Guardian Last Name": FieldGuardianLast,
	} {
		if got := aliasIndex[fold(in)]; got != want {
			t.Errorf("header %q: %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"Mãe": "mother", "AVÔ": "grandparent", "avó": "grandparent", "Responsável Legal": "legal_guardian", "pai": "father", "Outro": "other",
		"Avó materna": "grandparent", "Mom": "mother", "Tutora legal": "legal_guardian", "Padrasto": "other", "Dad": "father", "Grandma": "grandparent", "Stepmom": "other"} {
		if got := Relationships[fold(in)]; got != want {
			t.Errorf("relationship %q: %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"Obrigação legal": "legal_obligation", "legal_obligation": "legal_obligation", "Legítimo Interesse": "legitimate_interest", "CONSENT": "consent"} {
		if got := LegalBases[fold(in)]; got != want {
			t.Errorf("legal basis %q: %q, want %q", in, got, want)
		}
	}
}

// TestParseEncodingsAndSeparators: the same roster in UTF-8 (with BOM), Windows-1252, with
// commas, semicolons and tabs parses to the same rows.
func TestParseEncodingsAndSeparators(t *testing.T) {
	const utf8Text = "Criança;Nascimento;Responsável;Telefone;Parentesco;Consentimento\n" +
		"\"Conceição; a Pequena\";21/02/2019;João Ávila;(11) 90000-0001;avó;v1\n"
	win, err := charmap.Windows1252.NewEncoder().String(utf8Text)
	if err != nil {
		t.Fatal(err)
	}
	today := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, text, enc string
		sep             rune
	}{
		{"utf-8 semicolon", utf8Text, "UTF-8", ';'},
		{"utf-8 BOM comma", "\ufeffCriança,Nascimento,Responsável,Telefone,Parentesco,Consentimento\n" +
			"\"Conceição, a Pequena\",21/02/2019,João Ávila,(11) 90000-0001,avó,v1\n", "UTF-8 (BOM)", ','},
		{"windows-1252 semicolon CRLF", strings.ReplaceAll(win, "\n", "\r\n"), "Windows-1252", ';'},
		{"tab", strings.ReplaceAll(utf8Text, ";", "\t"), "UTF-8", '\t'},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse(strings.NewReader(tc.text), today, ParseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if f.Encoding != tc.enc || f.Separator != tc.sep || len(f.Rows) != 1 || len(f.Refused) != 0 {
				t.Fatalf("encoding %s separator %q rows %+v refused %+v", f.Encoding, f.Separator, f.Rows, f.Refused)
			}
			r := f.Rows[0]
			if r.GuardianName != "João Ávila" || r.Phone != "+5511900000001" || r.Relationship != "grandparent" || r.LegalBasis != "consent" || r.Line != 2 {
				t.Errorf("row %+v", r)
			}
			if !strings.HasPrefix(r.ChildName, "Conceição") || !strings.HasSuffix(r.ChildName, "a Pequena") {
				t.Errorf("child %q", r.ChildName)
			}
		})
	}
}
