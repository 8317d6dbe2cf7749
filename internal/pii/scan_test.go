package pii

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func testKnown(t testing.TB) *KnownValues {
	t.Helper()
	k, err := NewKnownValues([]Value{
		{KindChildName, "Ana Júlia Conceição"},
		{KindChildName, "Pedro Henrique da Silva"},
		{KindChildName, "Ana"},   // one word: never used
		{KindChildName, "Li Wu"}, // 4 letters: never used
		{KindGuardianName, "José Carlos Ferreira"},
		{KindGuardianPhone, "+55 (00) 91234-5678"}, // invented area code 00, as internal/seed uses
		{KindGuardianPhone, "(11) 3456-7890"},
		{KindBirthDate, "2019-03-14"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func scanString(t *testing.T, s *Scanner, doc string) []Finding {
	t.Helper()
	got, err := s.Scan(json.RawMessage(doc))
	if err != nil {
		t.Fatalf("Scan(%s): %v", doc, err)
	}
	return got
}

func TestScanTruePositives(t *testing.T) {
	s := NewScanner(testKnown(t))
	tests := []struct {
		name string
		doc  string
		want []Finding
	}{
		{"cpf formatted", `{"cpf":"529.982.247-25"}`, []Finding{{DetectorCPF, "$.cpf", false}}},
		{"cpf bare in sentence", `{"text":"O CPF dela é 52998224725, confere?"}`, []Finding{{DetectorCPF, "$.text", false}}},
		{"cpf as JSON number", `{"n":52998224725}`, []Finding{{DetectorCPF, "$.n", false}}},
		{"cnpj formatted", `["CNPJ 11.222.333/0001-81."]`, []Finding{{DetectorCNPJ, "$[0]", false}}},
		{"cnpj bare number", `[11222333000181]`, []Finding{{DetectorCNPJ, "$[0]", false}}},
		{"cnpj alphanumeric formatted", `{"a":"12.ABC.345/01DE-35"}`, []Finding{{DetectorCNPJ, "$.a", false}}},
		{"cnpj alphanumeric bare", `{"a":"fornecedor 12ABC34501DE35"}`, []Finding{{DetectorCNPJ, "$.a", false}}},
		{"phone +55 mobile", `{"arguments":{"guardian":{"phone":"+55 11 98765-4321"}}}`, []Finding{{DetectorPhone, "$.arguments.guardian.phone", false}}},
		{"phone parentheses fixed", `{"t":"ligar (21) 2555-1234 à tarde"}`, []Finding{{DetectorPhone, "$.t", false}}},
		{"phone 11 bare digits", `{"t":"11987654321"}`, []Finding{{DetectorPhone, "$.t", false}}},
		{"phone as JSON number with country code", `{"t":5511987654321}`, []Finding{{DetectorPhone, "$.t", false}}},
		{"email", `{"content":[{"type":"text","text":"escreva para maria.silva+igreja@exemplo.com.br hoje"}]}`, []Finding{{DetectorEmail, "$.content[0].text", false}}},
		{"known child name folded", `{"content":[{"text":"A criança ANA JULIA CONCEICAO chegou"}]}`, []Finding{{DetectorKnownName, "$.content[0].text", false}}},
		{"known name across spaces and newline", `{"t":"pedro  henrique\nda silva"}`, []Finding{{DetectorKnownName, "$.t", false}}},
		{"known first and last name", `{"t":"Pedro Silva faltou"}`, []Finding{{DetectorKnownName, "$.t", false}}},
		{"known guardian name accented differently", `{"t":"Jose Carlos Férreira"}`, []Finding{{DetectorKnownName, "$.t", false}}},
		{"known phone with invalid area code", `{"t":"tel: (00) 91234-5678"}`, []Finding{{DetectorKnownPhone, "$.t", false}}},
		{"known phone digits with country code", `{"t":5500912345678}`, []Finding{{DetectorKnownPhone, "$.t", false}}},
		{"known phone subscriber only", `{"t":"ramal 91234-5678"}`, []Finding{{DetectorKnownPhone, "$.t", false}}},
		{"known birth date ISO", `{"birth":"2019-03-14"}`, []Finding{{DetectorKnownBirthDate, "$.birth", false}}},
		{"known birth date BR", `{"t":"nasceu em 14/03/2019."}`, []Finding{{DetectorKnownBirthDate, "$.t", false}}},
		{"known birth date in timestamp", `{"t":"2019-03-14T00:00:00Z"}`, []Finding{{DetectorKnownBirthDate, "$.t", false}}},
		{"odd member name", `{"a b":{"x.y":["529.982.247-25"]}}`, []Finding{{DetectorCPF, `$["a b"]["x.y"][0]`, false}}},
		{"pii in member name hides the path", `{"list":{"Ana Júlia Conceição":{"cpf":"52998224725"}}}`, []Finding{
			{DetectorKnownName, "$.list", true}, {DetectorCPF, "$.list", false}}},
		{"duplicate member names both read", `{"a":"x","a":"52998224725"}`, []Finding{{DetectorCPF, "$.a", false}}},
		{"several detectors in one string", `{"t":"CPF 529.982.247-25, fone (11) 98765-4321"}`, []Finding{
			{DetectorCPF, "$.t", false}, {DetectorPhone, "$.t", false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := scanString(t, s, tt.doc)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Scan(%s) (-want +got):\n%s", tt.doc, diff)
			}
		})
	}
}

func TestScanLookAlikes(t *testing.T) {
	s := NewScanner(testKnown(t))
	tests := []struct{ name, doc string }{
		{"11 digits failing mod 11", `{"n":"52998224726","m":12345678901,"o":"123.456.789-00"}`},
		{"all-same-digit cpf", `{"n":"111.111.111-11","m":"00000000000"}`},
		{"ISBN-13", `{"isbn":"978-85-359-0277-8","raw":9788535902778,"s":"ISBN 9780306406157"}`},
		{"order ids", `{"order":"PED-2026-000123","id":"ORD1234567890","n":1048271936}`},
		{"uuid", `{"id":"3f2b1c9e-8d7a-4b6c-9e5f-0a1b2c3d4e5f","u":"52998224-7251-4b6c-9e5f-0a1b2c3d4e5f"}`},
		{"timestamps", `{"at":"2026-11-25T10:31:05Z","ms":1764066665123,"s":1764066665}`},
		{"dates that are not a known birth date", `{"d":"2019-03-15","e":"14/03/2018","f":"2019-03-141"}`},
		{"prices", `{"p":"R$ 1.234.567,89","q":1234567.89,"r":"R$ 52.998.224,72"}`},
		{"9-digit numbers", `{"n":987654321,"s":"98765 4321 sem DDD","t":"123456789"}`},
		{"cnpj with a wrong check digit", `{"c":"11.222.333/0001-82","d":11222333000191,"e":"12.ABC.345/01DE-36"}`},
		{"number inside a longer number", `{"n":"1529982247250","m":"5.2998224725","o":"0.52998224725"}`},
		{"cpf glued to letters", `{"n":"A52998224725","m":"52998224725x"}`},
		{"invalid phone", `{"p":"(11) 1234-5678","q":"+55 (10) 98765-4321","r":"0800 123 4567"}`},
		{"email without tld", `{"e":"user@localhost","f":"a@b","g":"x@y.c"}`},
		{"short name inside a word", `{"t":"Banana com Li Wu","u":"Ana chegou"}`},
		{"known name inside words", `{"t":"Pedro Silvano","u":"pedrosilva","v":"Xjose carlos ferreira"}`},
		{"known subscriber inside a longer number", `{"t":"9991234567899","u":"a91234-5678"}`},
		{"hex and hashes", `{"h":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}`},
		{"booleans and null", `{"a":true,"b":false,"c":null,"d":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := scanString(t, s, tt.doc); len(got) != 0 {
				t.Errorf("Scan(%s) = %v, want no findings", tt.doc, got)
			}
		})
	}
}

func TestScanWithoutKnownValues(t *testing.T) {
	s := NewScanner(nil)
	got := scanString(t, s, `{"t":"Ana Júlia Conceição, 2019-03-14, (00) 91234-5678, 529.982.247-25"}`)
	want := []Finding{{DetectorCPF, "$.t", false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestScanInvalidJSON(t *testing.T) {
	s := NewScanner(nil)
	for _, doc := range []string{``, `{`, `{"a":}`, `[1,]`, `{"a":1} x`, `{1:2}`, strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)} {
		if _, err := s.Scan(json.RawMessage(doc)); !errors.Is(err, ErrInvalidJSON) {
			t.Errorf("Scan(%.20q) error = %v, want ErrInvalidJSON", doc, err)
		}
	}
}

func TestScanValue(t *testing.T) {
	var v any
	if err := json.Unmarshal([]byte(`{"guardian":{"cpf":52998224725,"nome":"José Carlos Ferreira"}}`), &v); err != nil {
		t.Fatal(err)
	}
	got, err := NewScanner(testKnown(t)).ScanValue(v)
	if err != nil {
		t.Fatal(err)
	}
	want := []Finding{{DetectorCPF, "$.guardian.cpf", false}, {DetectorKnownName, "$.guardian.nome", false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A finding has nothing to print but its detector and path.
func TestFindingNeverShowsValue(t *testing.T) {
	s := NewScanner(testKnown(t))
	got := scanString(t, s, `{"t":"Ana Júlia Conceição 529.982.247-25"}`)
	if len(got) != 2 {
		t.Fatalf("findings = %v, want 2", got)
	}
	var buf bytes.Buffer
	// No time attribute: a timestamp's digits could hold "529" by chance.
	noTime := &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}
	slog.New(slog.NewJSONHandler(&buf, noTime)).Info("pii", "finding", got[0], "all", got)
	outputs := []string{buf.String(), fmt.Sprint(got), fmt.Sprintf("%+v %#v", got, got), got[0].String()}
	for _, out := range outputs {
		for _, secret := range []string{"529", "Ana", "Conceição", "Conceicao", "ana julia"} {
			if strings.Contains(out, secret) {
				t.Errorf("output %q contains %q", out, secret)
			}
		}
	}
	if want := "known_name at $.t"; got[0].String() != want {
		t.Errorf("String() = %q, want %q", got[0].String(), want)
	}
	v := Value{KindChildName, "Ana Júlia Conceição"}
	if s := fmt.Sprint(v, v.LogValue()); strings.Contains(s, "Ana") {
		t.Errorf("Value prints its text: %q", s)
	}
}

func TestKnownValuesRules(t *testing.T) {
	if _, err := NewKnownValues([]Value{{KindBirthDate, "14/03/2019"}}); err == nil || strings.Contains(err.Error(), "2019") {
		t.Errorf("bad birth date: err = %v, want an error without the value", err)
	}
	if _, err := NewKnownValues([]Value{{Kind(99), "x"}}); err == nil {
		t.Error("unknown kind: want an error")
	}
	k, err := NewKnownValues([]Value{{KindChildName, "Ana"}, {KindChildName, "Li Wu"}, {KindGuardianPhone, "1234"}})
	if err != nil {
		t.Fatal(err)
	}
	if k.Patterns() != 0 {
		t.Errorf("Patterns() = %d, want 0: one-word names, short names and short phones are not used", k.Patterns())
	}
	if got := namePatterns("Maria Eduarda dos Santos"); !cmp.Equal(got, []string{"maria eduarda dos santos", "maria santos"}) {
		t.Errorf("namePatterns = %q", got)
	}
	if got := namePatterns("João da Silva Filho"); !cmp.Equal(got, []string{"joao da silva filho"}) {
		t.Errorf("namePatterns = %q", got)
	}
	if got := phonePatterns("+55 (11) 91234-5678"); !cmp.Equal(got, []string{"11912345678", "912345678"}) {
		t.Errorf("phonePatterns = %q", got)
	}
}
