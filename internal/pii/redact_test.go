package pii

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRedact(t *testing.T) {
	s := NewScanner(testKnown(t))
	tests := []struct {
		name, in, want string
	}{
		{"cpf in text", `{"t":"CPF 529.982.247-25 ok"}`, `{"t":"CPF [redacted cpf] ok"}`},
		{"number becomes a string", `{"n":52998224725,"m":42}`, `{"n":"[redacted cpf]","m":42}`},
		{"accented name keeps its neighbours", `{"t":"Oi, Ana Júlia Conceição!"}`, `{"t":"Oi, [redacted known_name]!"}`},
		{"overlapping detectors merge", `{"t":"11987654374"}`, `{"t":"[redacted cpf]"}`},
		{"phone with parenthesis", `{"t":"ligue (00) 91234-5678."}`, `{"t":"ligue [redacted known_phone]."}`},
		{"member names, with clash suffix", `{"Ana Júlia Conceição":1,"Pedro Silva":2,"[redacted known_name]":3}`,
			`{"[redacted known_name]":1,"[redacted known_name] 2":2,"[redacted known_name] 3":3}`},
		{"redacted name after a plain one", `{"[redacted known_name]":3,"Ana Júlia Conceição":1}`,
			`{"[redacted known_name]":3,"[redacted known_name] 2":1}`},
		{"order and non-PII kept", `{"b":[true,null,1.5,"x"],"a":{"e":"a@b.com.br"}}`, `{"b":[true,null,1.5,"x"],"a":{"e":"[redacted email]"}}`},
		{"several in one string", `{"t":"a@b.com.br, 14/03/2019 e 12.ABC.345/01DE-35"}`, `{"t":"[redacted email], [redacted known_birth_date] e [redacted cnpj]"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, findings, err := s.Redact(json.RawMessage(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if len(findings) == 0 {
				t.Error("Redact returned no findings")
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("Redact (-want +got):\n%s", diff)
			}
			if again, err := s.Scan(got); err != nil || len(again) != 0 {
				t.Errorf("Scan after Redact = %v, %v: masking left data behind", again, err)
			}
		})
	}
}

// "11987654321" is both a valid CPF and a valid mobile number; the test above must not pass by
// accident of the test data.
func TestRedactOverlapIsReallyBoth(t *testing.T) {
	got, _ := NewScanner(nil).Scan(json.RawMessage(`"11987654374"`))
	if len(got) != 2 {
		t.Fatalf("test data is not both a CPF and a phone (%v); pick another", got)
	}
}

func TestRedactValue(t *testing.T) {
	s := NewScanner(testKnown(t))
	in := map[string]any{"guardian": map[string]any{"phone": "+55 11 98765-4321", "age": 40}}
	out, findings, err := s.RedactValue(in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"guardian": map[string]any{"phone": "[redacted phone]", "age": json.Number("40")}}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(findings) != 1 || findings[0].Path != "$.guardian.phone" {
		t.Errorf("findings = %v", findings)
	}
	if in["guardian"].(map[string]any)["phone"] != "+55 11 98765-4321" {
		t.Error("RedactValue changed its input")
	}
	if strings.Contains(findings[0].String(), "98765") {
		t.Error("finding shows the value")
	}
}
