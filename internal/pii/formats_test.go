package pii

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// formatCases are the ways people write the numbers and names the scanner protects, and
// their look-alikes (issue 26: only 000.000.000-00 and the bare 11 digits used to be found).
// Each names why it is, or is not, personal data.
var formatCases = []struct {
	name, in string
	want     []Detector // nil: nothing found
}{
	// CPF 529.982.247-25, whatever separates its groups.
	{"cpf formatted", "529.982.247-25", []Detector{DetectorCPF}},
	{"cpf bare", "52998224725", []Detector{DetectorCPF}},
	{"cpf spaces", "529 982 247 25", []Detector{DetectorCPF}},
	{"cpf hyphens", "529-982-247-25", []Detector{DetectorCPF}},
	{"cpf dots only", "529.982.247.25", []Detector{DetectorCPF}},
	{"cpf slashes", "529/982/247/25", []Detector{DetectorCPF}},
	{"cpf 9 digits space 2", "529982247 25", []Detector{DetectorCPF}},
	{"cpf 9 digits hyphen 2", "529982247-25", []Detector{DetectorCPF}},
	{"cpf mixed separators", "529.982 247/25", []Detector{DetectorCPF}},
	{"cpf spaced hyphen", "529.982.247 - 25", []Detector{DetectorCPF}},
	{"cpf after a label", "CPF 529 982 247 25, confere", []Detector{DetectorCPF}},
	{"cpf after a label and hyphen", "CPF-529.982.247-25", []Detector{DetectorCPF}},
	{"cpf in parentheses", "(529.982.247-25)", []Detector{DetectorCPF}},
	{"cpf with a zero-width space", "529\u200b.982.247-25", []Detector{DetectorCPF}},
	{"cpf with zero-width joiners between digits", "5\u200d2\u200c9982247\u206025", []Detector{DetectorCPF}},
	{"cpf with a soft hyphen", "529\u00ad982\u00ad247\u00ad25", []Detector{DetectorCPF}},
	{"cpf with a byte-order mark", "\ufeff52998224725", []Detector{DetectorCPF}},
	{"cpf in full-width digits", "５２９．９８２．２４７－２５", []Detector{DetectorCPF}},
	{"cpf with en dashes", "529–982–247–25", []Detector{DetectorCPF}},
	{"cpf with a Unicode hyphen and minus", "529‐982‐247−25", []Detector{DetectorCPF}},
	{"cpf with no-break spaces", "529\u00a0982\u00a0247\u00a025", []Detector{DetectorCPF}},
	{"cpf with thin and ideographic spaces", "529\u2009982\u3000247 25", []Detector{DetectorCPF}},
	{"cpf in Arabic-Indic digits", "٥٢٩٩٨٢٢٤٧٢٥", []Detector{DetectorCPF}},
	{"cpf in keycap emoji", "5\ufe0f\u20e32\ufe0f\u20e39\ufe0f\u20e39\ufe0f\u20e38\ufe0f\u20e32\ufe0f\u20e32\ufe0f\u20e34\ufe0f\u20e37\ufe0f\u20e32\ufe0f\u20e35\ufe0f\u20e3", []Detector{DetectorCPF}},
	{"cpf in mathematical digits", "𝟓𝟐𝟗𝟗𝟖𝟐𝟐𝟒𝟕𝟐𝟓", []Detector{DetectorCPF}},
	{"cpf after a bullet", "•52998224725", []Detector{DetectorCPF}},
	// CPF look-alikes.
	{"cpf wrong check digit", "529.982.247-26", nil},
	{"cpf wrong check digit spaced", "529 982 247 26", nil},
	{"cpf one digit repeated", "111 111 111 11", nil},
	{"cpf digits grouped otherwise", "5299 8224 725", nil}, // right check digits, not a CPF's groups
	{"cpf digits grouped 2-3-3-3", "52 998 224 725", nil},
	{"decimal with a CPF's digits", "5.2998224725", nil},
	{"decimal fraction with a CPF's digits", "0.52998224725", nil},
	{"cpf inside a longer number", "1.529.982.247-25", nil},
	{"cpf inside a longer bare number", "1529982247250", nil},
	{"cpf glued to a letter", "52998224725x", nil},
	{"cpf in an identifier", "id_52998224725", nil},

	// CNPJ 11.222.333/0001-81 and the alphanumeric 12.ABC.345/01DE-35.
	{"cnpj formatted", "11.222.333/0001-81", []Detector{DetectorCNPJ}},
	{"cnpj bare", "11222333000181", []Detector{DetectorCNPJ}},
	{"cnpj spaces", "11 222 333 0001 81", []Detector{DetectorCNPJ}},
	{"cnpj mixed", "11.222.333 0001-81", []Detector{DetectorCNPJ}},
	{"cnpj without dots", "11222333/0001-81", []Detector{DetectorCNPJ}},
	{"cnpj hyphens", "11-222-333-0001-81", []Detector{DetectorCNPJ}},
	{"cnpj full-width", "１１.２２２.３３３／０００１-８１", []Detector{DetectorCNPJ}},
	{"cnpj with a zero-width space", "11.222.333/0001\u200b-81", []Detector{DetectorCNPJ}},
	{"cnpj alphanumeric formatted", "12.ABC.345/01DE-35", []Detector{DetectorCNPJ}},
	{"cnpj alphanumeric spaces", "12 ABC 345 01DE 35", []Detector{DetectorCNPJ}},
	{"cnpj alphanumeric bare", "12ABC34501DE35", []Detector{DetectorCNPJ}},
	{"cnpj alphanumeric full-width", "１２.ＡＢＣ.３４５/０１ＤＥ-３５", []Detector{DetectorCNPJ}},
	// CNPJ look-alikes.
	{"cnpj wrong check digit", "11.222.333/0001-82", nil},
	{"cnpj alphanumeric wrong check digit", "12 ABC 345 01DE 36", nil},
	{"cnpj in lower case", "12.abc.345/01de-35", nil},
	{"cnpj digits grouped otherwise", "1122 2333 0001 81", nil},
	{"nf-e access key holding a CNPJ", "3520 0811 2223 3300 0181 5500 1000 0000 0110 0000 0010", nil},

	// Brazilian phones, of anyone (not only the church's guardians).
	{"mobile spaced 9", "11 9 8765 4321", []Detector{DetectorPhone}},
	{"mobile with trunk 0", "011 98765-4321", []Detector{DetectorPhone}},
	{"mobile with trunk 0 in parentheses", "(011) 98765-4321", []Detector{DetectorPhone}},
	{"mobile with trunk 0 set apart", "0 11 98765 4321", []Detector{DetectorPhone}},
	{"mobile +55", "+55 11 98765-4321", []Detector{DetectorPhone}},
	{"mobile +55 parentheses spaced 9", "+55 (11) 9 8765-4321", []Detector{DetectorPhone}},
	{"mobile 55 without plus", "55 11 98765 4321", []Detector{DetectorPhone}},
	{"mobile with dots", "11.98765.4321", []Detector{DetectorPhone}},
	{"mobile with hyphens", "11-98765-4321", []Detector{DetectorPhone}},
	{"mobile area code apart", "11 987654321", []Detector{DetectorPhone}},
	{"mobile bare", "11987654321", []Detector{DetectorPhone}},
	{"mobile with a zero-width space", "(11) 98765\u200b-4321", []Detector{DetectorPhone}},
	{"mobile full-width", "（１１）９８７６５－４３２１", []Detector{DetectorPhone}},
	{"two phones with a slash", "11 98765 4321 / 21 2555 1234", []Detector{DetectorPhone}},
	{"fixed line parentheses", "(21) 2555-1234", []Detector{DetectorPhone}},
	{"fixed line spaces", "21 2555 1234", []Detector{DetectorPhone}},
	{"fixed line trunk 0", "021 2555-1234", []Detector{DetectorPhone}},
	{"phone after a comma", "sala 3, 11 98765 4321", []Detector{DetectorPhone}},
	// Phone look-alikes.
	{"phone glued to another number by a space (a known limit)", "sala 3 11 98765 4321", nil},
	{"mobile without area code", "98765 4321", nil},
	{"fixed line starting 1", "(11) 1234-5678", nil},
	{"invalid area code", "+55 (10) 98765-4321", nil},
	{"toll-free", "0800 123 4567", nil},
	{"US number", "+1 212 555 1234", nil},
	{"mobile grouped otherwise", "11 9876 54321", nil},
	{"decimal with a phone's digits", "0.11987654321", nil},
	{"card number", "4111 1111 1111 1111", nil},
	{"ISBN-13 hyphenated", "978-85-359-0277-8", nil},
	{"ISBN-13 spaced", "978 85 359 0277 8", nil},
	{"ISBN-13 bare", "ISBN 9788535902778", nil},
	{"ISBN-10", "85-359-0277-5", nil},

	// Other numbers that are not personal data.
	{"version", "v2.10.3 e 1.2.3.4", nil},
	{"order number", "PED-2026-000123", nil},
	{"order number bare", "pedido 1048271936", nil},
	{"timestamp", "2026-11-25T10:31:05Z", nil},
	{"money", "R$ 1.234.567,89", nil},
	{"date and hour", "14/03/2026 às 10h30", nil},

	// Known values written otherwise (the church's child Ana Júlia Conceição, born
	// 2019-03-14; guardian phone (00) 91234-5678).
	{"name with a zero-width space", "Ana J\u200búlia Conceição", []Detector{DetectorKnownName}},
	{"name with zero-width space between words", "Ana\u200b Júlia\u200b Conceição", []Detector{DetectorKnownName}},
	{"name with a soft hyphen", "Ana Júlia Concei\u00adção", []Detector{DetectorKnownName}},
	{"name decomposed (NFD)", "Ana Ju\u0301lia Conceic\u0327a\u0303o", []Detector{DetectorKnownName}},
	{"name in full-width letters", "ＡＮＡ ＪＵＬＩＡ ＣＯＮＣＥＩＣＡＯ", []Detector{DetectorKnownName}},
	{"name with no-break spaces", "Ana\u00a0Júlia\u00a0Conceição", []Detector{DetectorKnownName}},
	{"birth date full-width", "１４/０３/２０１９", []Detector{DetectorKnownBirthDate}},
	{"birth date with en dashes", "14–03–2019", []Detector{DetectorKnownBirthDate}},
	{"known phone full-width", "(００) ９１２３４-５６７８", []Detector{DetectorKnownPhone}},
	{"e-mail with a full-width at", "ana＠exemplo.com.br", []Detector{DetectorEmail}},
	{"another name inside words", "Banana Júlia Conceiçãozinha", nil},
}

// TestScanFormats: the scanner finds personal data however it is written, and only it.
func TestScanFormats(t *testing.T) {
	s := NewScanner(testKnown(t))
	for _, tc := range formatCases {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := json.Marshal(map[string]string{"t": tc.in})
			if err != nil {
				t.Fatal(err)
			}
			findings, err := s.Scan(doc)
			if err != nil {
				t.Fatal(err)
			}
			var got []Detector
			for _, f := range findings {
				got = append(got, f.Detector)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Scan(%q) detectors (-want +got):\n%s", tc.in, diff)
			}
			red, _, err := s.Redact(doc)
			if err != nil {
				t.Fatal(err)
			}
			if again, err := s.Scan(red); err != nil || len(again) > 0 {
				t.Errorf("Scan(Redact(%q)) = %v, %v; want nothing left (%s)", tc.in, again, err, red)
			}
		})
	}
}

// TestRedactNormalizedSpans: a finding in normalized text is redacted in the original,
// invisible characters included, and its neighbours are kept.
func TestRedactNormalizedSpans(t *testing.T) {
	s := NewScanner(testKnown(t))
	for _, tc := range []struct{ in, want string }{
		{"CPF ５２９.９８２.２４７-２５, ok", "CPF [redacted cpf], ok"},
		{"tel (11) 98765\u200b-4321.", "tel [redacted phone]."},
		{"oi Ana J\u200búlia Conceição!", "oi [redacted known_name]!"},
		{"+55 11 9 8765 4321", "[redacted phone]"},
	} {
		doc, _ := json.Marshal(tc.in)
		red, _, err := s.Redact(doc)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if err := json.Unmarshal(red, &got); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestHoldsNumbersNormalized: a zero-width space does not split a run of digits.
func TestHoldsNumbersNormalized(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"ligar 1234\u200b5678", true},
		{"ligar ９８７６ ５４３２", true},
		{"sala 12, turma 3", false},
	} {
		if got := HoldsNumbers(tc.in); got != tc.want {
			t.Errorf("HoldsNumbers(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
