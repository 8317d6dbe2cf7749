package pii

// validCPF reports whether d (exactly 11 ASCII digits) has both CPF check digits right and is
// not one digit repeated.
func validCPF(d []byte) bool {
	if len(d) != 11 || allSame(d) {
		return false
	}
	for i := range 11 {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	for n := 9; n <= 10; n++ {
		sum := 0
		for i := range n {
			sum += int(d[i]-'0') * (n + 1 - i)
		}
		dv := sum * 10 % 11
		if dv == 10 {
			dv = 0
		}
		if int(d[n]-'0') != dv {
			return false
		}
	}
	return true
}

// validCNPJ reports whether c (exactly 14 characters) is a CNPJ: 12 characters in [0-9A-Z],
// two check digits, each computed over the characters before it with value ASCII − 48, weights
// 2..9 cycling from the right, DV = 0 when sum mod 11 < 2 and 11 − (sum mod 11) otherwise. The
// numeric CNPJ is the special case of digits only. One character repeated is rejected.
func validCNPJ(c []byte) bool {
	if len(c) != 14 || allSame(c) {
		return false
	}
	for i := range 12 {
		if !(c[i] >= '0' && c[i] <= '9' || c[i] >= 'A' && c[i] <= 'Z') {
			return false
		}
	}
	if c[12] < '0' || c[12] > '9' || c[13] < '0' || c[13] > '9' {
		return false
	}
	for n := 12; n <= 13; n++ {
		sum, w := 0, 2
		for i := n - 1; i >= 0; i-- {
			sum += int(c[i]-'0') * w
			if w++; w > 9 {
				w = 2
			}
		}
		dv := 0
		if r := sum % 11; r >= 2 {
			dv = 11 - r
		}
		if int(c[n]-'0') != dv {
			return false
		}
	}
	return true
}

func allSame(b []byte) bool {
	for i := 1; i < len(b); i++ {
		if b[i] != b[0] {
			return false
		}
	}
	return true
}
