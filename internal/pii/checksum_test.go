package pii

import "testing"

func TestValidCPF(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"52998224725", true},
		{"11144477735", true},
		{"52998224726", false}, // second check digit wrong
		{"52998224715", false}, // first check digit wrong
		{"11111111111", false}, // all same digit passes mod 11 but is rejected
		{"00000000000", false},
		{"1234567890", false},
		{"5299822472A", false},
	}
	for _, tt := range tests {
		if got := validCPF([]byte(tt.in)); got != tt.want {
			t.Errorf("validCPF(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestValidCNPJ(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"11222333000181", true},
		{"11444777000161", true},
		{"12ABC34501DE35", true}, // the Receita Federal's alphanumeric example, 12.ABC.345/01DE-35
		{"12ABC34501DE36", false},
		{"11222333000182", false},
		{"11222333000191", false},
		{"00000000000000", false},
		{"12abc34501de35", false}, // lower case is not a CNPJ
		{"12ABC34501DEX5", false}, // check digits are numeric
	}
	for _, tt := range tests {
		if got := validCNPJ([]byte(tt.in)); got != tt.want {
			t.Errorf("validCNPJ(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
