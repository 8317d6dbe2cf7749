package pii

import (
	"net/mail"
	"regexp"
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// span is a byte range of a string in which a detector matched.
type span struct {
	start, end int
	det        Detector
}

// Candidate patterns. They only propose text to the confirming checks (checksum, phone
// parser, mail parser); none of them decides on its own.
var (
	cpfCandidate  = regexp.MustCompile(`[0-9]{3}\.[0-9]{3}\.[0-9]{3}-[0-9]{2}|[0-9]{11}`)
	cnpjCandidate = regexp.MustCompile(`[0-9A-Z]{2}\.[0-9A-Z]{3}\.[0-9A-Z]{3}/[0-9A-Z]{4}-[0-9]{2}|[0-9A-Z]{12}[0-9]{2}`)
	// Phone-shaped text: an optional +55 (or 55 in a bare run of digits), an area code with or
	// without parentheses, then 4 or 5 and 4 digits, separated by at most one space, dot or dash.
	phoneCandidate = regexp.MustCompile(`(?:\+?55[ .-]?)?(?:\([0-9]{2}\)|[0-9]{2})[ .-]?[0-9]{4,5}[ .-]?[0-9]{4}`)
	emailCandidate = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,63}`)
)

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func isNumSep(c byte) bool { return c == '.' || c == ',' || c == '/' || c == '-' }

// numBoundary reports whether s[i:j] stands alone as a number: no letter or digit touches it,
// and neither does a separator that continues a longer number ("1.12345678909", "…-09.5").
func numBoundary(s string, i, j int) bool {
	if i > 0 {
		p := s[i-1]
		if isAlnum(p) || isNumSep(p) && i >= 2 && isDigit(s[i-2]) || p == '+' {
			return false
		}
	}
	if j < len(s) {
		n := s[j]
		if isAlnum(n) || isNumSep(n) && j+1 < len(s) && isDigit(s[j+1]) {
			return false
		}
	}
	return true
}

// patternSpans appends the spans of the pattern detectors (CPF, CNPJ, phone, e-mail) in s.
func patternSpans(s string, out []span) []span {
	hasDigit := strings.ContainsAny(s, "0123456789")
	if hasDigit {
		for _, m := range cpfCandidate.FindAllStringIndex(s, -1) {
			if !numBoundary(s, m[0], m[1]) {
				continue
			}
			if validCPF(stripSeps(s[m[0]:m[1]])) {
				out = append(out, span{m[0], m[1], DetectorCPF})
			}
		}
		for _, m := range cnpjCandidate.FindAllStringIndex(s, -1) {
			if !numBoundary(s, m[0], m[1]) {
				continue
			}
			if validCNPJ(stripSeps(s[m[0]:m[1]])) {
				out = append(out, span{m[0], m[1], DetectorCNPJ})
			}
		}
		for _, m := range phoneCandidate.FindAllStringIndex(s, -1) {
			if !numBoundary(s, m[0], m[1]) {
				continue
			}
			if validBRPhone(s[m[0]:m[1]]) {
				out = append(out, span{m[0], m[1], DetectorPhone})
			}
		}
	}
	if strings.IndexByte(s, '@') >= 0 {
		for _, m := range emailCandidate.FindAllStringIndex(s, -1) {
			if m[1] < len(s) && (isAlnum(s[m[1]]) || s[m[1]] == '-' || s[m[1]] == '@' ||
				s[m[1]] == '.' && m[1]+1 < len(s) && isAlnum(s[m[1]+1])) {
				continue
			}
			if validEmail(s[m[0]:m[1]]) {
				out = append(out, span{m[0], m[1], DetectorEmail})
			}
		}
	}
	return out
}

func stripSeps(s string) []byte {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '.' && c != '/' && c != '-' {
			b = append(b, c)
		}
	}
	return b
}

// validBRPhone reports whether the phone-shaped text c is a valid Brazilian fixed-line or
// mobile number for phonenumbers. Shape: with +55, or parentheses, or 10 or 11 digits (area
// code + subscriber); a bare 12- or 13-digit run must start with the country code 55.
func validBRPhone(c string) bool {
	digits := make([]byte, 0, 13)
	for i := 0; i < len(c); i++ {
		if isDigit(c[i]) {
			digits = append(digits, c[i])
		}
	}
	// Cheap shape check before the parser: a real area code and, after it, a subscriber of 8
	// digits starting 2-5 (fixed) or 9 digits starting 9 (mobile).
	nat := digits
	if len(nat) >= 12 && nat[0] == '5' && nat[1] == '5' {
		nat = nat[2:]
	}
	if len(nat) < 10 || !validDDD[int(nat[0]-'0')*10+int(nat[1]-'0')] ||
		len(nat) == 11 && nat[2] != '9' || len(nat) == 10 && (nat[2] < '2' || nat[2] > '5') {
		return false
	}
	text := c
	switch {
	case strings.HasPrefix(c, "+55"):
	case len(digits) >= 12 && strings.HasPrefix(string(digits), "55"):
		text = "+" + string(digits)
	case strings.Contains(c, "("), len(digits) == 10 || len(digits) == 11:
	default:
		return false
	}
	num, err := phonenumbers.Parse(text, "BR")
	if err != nil || num.GetCountryCode() != 55 || !phonenumbers.IsValidNumberForRegion(num, "BR") {
		return false
	}
	switch phonenumbers.GetNumberType(num) {
	case phonenumbers.MOBILE, phonenumbers.FIXED_LINE, phonenumbers.FIXED_LINE_OR_MOBILE:
		return true
	}
	return false
}

// validEmail confirms an e-mail candidate with net/mail and checks the domain's labels.
func validEmail(c string) bool {
	a, err := mail.ParseAddress(c)
	if err != nil || a.Address != c {
		return false
	}
	at := strings.LastIndexByte(c, '@')
	for _, label := range strings.Split(c[at+1:], ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
	}
	return true
}

// validDDD holds Brazil's area codes (DDD), a prefilter only: phonenumbers decides.
var validDDD = func() (t [100]bool) {
	for _, d := range []int{11, 12, 13, 14, 15, 16, 17, 18, 19, 21, 22, 24, 27, 28,
		31, 32, 33, 34, 35, 37, 38, 41, 42, 43, 44, 45, 46, 47, 48, 49, 51, 53, 54, 55,
		61, 62, 63, 64, 65, 66, 67, 68, 69, 71, 73, 74, 75, 77, 79,
		81, 82, 83, 84, 85, 86, 87, 88, 89, 91, 92, 93, 94, 95, 96, 97, 98, 99} {
		t[d] = true
	}
	return t
}()
