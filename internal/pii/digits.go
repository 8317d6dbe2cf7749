package pii

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nyaruka/phonenumbers"
)

// Numbers (CPF, CNPJ, phones) are found by their digits and how they are grouped, not by
// their punctuation: people write a CPF 529.982.247-25, 529 982 247 25, 529982247-25 or
// 529-982-247-25, and every one of them is the same CPF. The text is cut into runs of
// chunks: a chunk is a word of ASCII digits and upper-case letters, and two chunks are in one
// run when what separates them is one to four spaces, dots, hyphens, slashes or parentheses
// with at most one dot, hyphen or slash among them. A candidate is a sequence of whole chunks
// of a run whose lengths add up to a document or phone number; it is accepted only when
//
//   - its chunk boundaries fall where that number's groups do (a CPF's 3-3-3-2, a CNPJ's
//     2-3-3-4-2, a phone's area code, leading 9 and 4-digit halves), so that "5.2998224725"
//     (a decimal) or "978-85-359-0277-8" (an ISBN) never yield one;
//   - it does not cut a run where the run reads as one number: only a wide separator (two
//     characters or more, like " - " or " / ", or a parenthesis) or a word of letters next to
//     it ("CPF 529 982 247 25") may end a candidate inside a run, never a lone dot, hyphen,
//     slash or space between two groups of digits (a card number, an NF-e key,
//     "1.529.982.247-25");
//   - its check digits are right (CPF, CNPJ: mod 11) or libphonenumber says it is a valid
//     Brazilian fixed-line or mobile number (phones).
//
// A chunk holding a lower-case letter, an underscore or a non-ASCII letter is a word, not a
// number, and ends the run: "52998224725x" and "id_52998224725" hold no CPF.

// sepKind says what separates a chunk from the one before it in a run.
type sepKind uint8

const (
	sepSpace sepKind = iota + 1 // one space: the groups of one number
	sepPunct                    // one '.', '-' or '/': the groups of one number
	sepWide                     // anything longer, or with a parenthesis: a number may end here
)

// chunk is a word of ASCII digits and upper-case letters within a run.
type chunk struct {
	start, end int // bytes of the text
	digits     bool
	letters    bool    // letters only (a label such as "CPF", or the letters of a CNPJ)
	sep        sepKind // what separates it from the previous chunk (0 for a run's first)
}

// Where the groups of each number end (chunk boundaries allowed, as bit masks of digit
// offsets): CPF 000.000.000-00, CNPJ 00.000.000/0000-00.
const (
	cpfBounds  = 1<<3 | 1<<6 | 1<<9
	cnpjBounds = 1<<2 | 1<<5 | 1<<8 | 1<<12
	// phones, from the start of the national number: area code, the mobile's leading 9 and
	// the 4-digit halves (11 9 8765 4321, 11 98765 4321, 21 2555 1234)
	mobileBounds = 1<<2 | 1<<3 | 1<<7
	fixedBounds  = 1<<2 | 1<<6
)

// maxCandidate is the longest number a candidate can be: a CNPJ's 14 characters.
const maxCandidate = 14

// numberSpans appends the CPF, CNPJ and phone spans of the normalized text s.
func numberSpans(s string, out []span) []span {
	var buf [16]chunk
	run := buf[:0]
	plus := false // the run starts right after a '+': an international number
	prevEnd := -1 // end of the previous chunk of the run
	for i := 0; i < len(s); {
		c := s[i]
		if !isWordChar(c) {
			i++
			continue
		}
		// a word: s[i:j]
		j, digits, letters, usable := i, true, true, true
	word:
		for j < len(s) {
			c := s[j]
			if c < utf8.RuneSelf {
				switch {
				case c >= '0' && c <= '9':
					letters = false
				case c >= 'A' && c <= 'Z':
					digits = false
				case c >= 'a' && c <= 'z' || c == '_':
					usable = false
				default:
					break word
				}
				j++
				continue
			}
			r, n := utf8.DecodeRuneInString(s[j:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.In(r, unicode.Mn, unicode.Me) {
				break
			}
			usable = false
			j += n
		}
		if j == i { // a non-ASCII rune that is no letter or digit: a separator like any other
			_, n := utf8.DecodeRuneInString(s[i:])
			i += n
			continue
		}
		if !usable {
			out = scanRun(s, run, plus, out)
			run, prevEnd = run[:0], -1
			i = j
			continue
		}
		ch := chunk{start: i, end: j, digits: digits, letters: letters}
		if prevEnd >= 0 {
			if k := separator(s[prevEnd:i]); k != 0 {
				ch.sep = k
			} else {
				out = scanRun(s, run, plus, out)
				run = run[:0]
			}
		}
		if len(run) == 0 {
			ch.sep = 0
			plus = i > 0 && s[i-1] == '+'
		}
		run = append(run, ch)
		prevEnd = j
		i = j
	}
	return scanRun(s, run, plus, out)
}

// isWordChar reports whether c starts a word: an ASCII letter, digit or underscore, or a
// non-ASCII rune (decided by numberSpans).
func isWordChar(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= utf8.RuneSelf
}

// separator classifies what lies between two chunks; 0 means they are not in one run.
func separator(sep string) sepKind {
	if len(sep) == 0 || len(sep) > 4 {
		return 0
	}
	punct, open, closed := 0, 0, 0
	for i := 0; i < len(sep); i++ {
		switch sep[i] {
		case ' ':
		case '.', '-', '/':
			punct++
		case '(':
			open++
		case ')':
			closed++
		default:
			return 0
		}
	}
	switch {
	case punct > 1 || open > 1 || closed > 1:
		return 0
	case len(sep) > 1 || open+closed > 0:
		return sepWide
	case punct == 1:
		return sepPunct
	}
	return sepSpace
}

// canSplit reports whether a candidate may end before run[k] (and another start at it).
func canSplit(run []chunk, k int) bool {
	return run[k].sep == sepWide || run[k].letters || run[k-1].letters
}

// scanRun appends the spans of the candidates of run.
func scanRun(s string, run []chunk, plus bool, out []span) []span {
	for i := range run {
		if i > 0 && !canSplit(run, i) {
			continue
		}
		n := 0
		for j := i; j < len(run); j++ {
			n += run[j].end - run[j].start
			if n > maxCandidate {
				break
			}
			if j+1 < len(run) && !canSplit(run, j+1) {
				continue
			}
			if n >= 10 {
				out = candidate(s, run[i:j+1], plus && i == 0, out)
			}
		}
	}
	return out
}

// candidate appends the spans of the detectors that accept the chunks cs (10 to 14
// characters in all). plus: cs follows a '+', so it can only be a phone with its country
// code.
func candidate(s string, cs []chunk, plus bool, out []span) []span {
	var buf [maxCandidate]byte
	var bounds [maxCandidate]uint8
	var seps [maxCandidate]sepKind
	d, nb, digits := buf[:0], 0, true
	for k, c := range cs {
		if k > 0 {
			bounds[nb], seps[nb] = uint8(len(d)), c.sep
			nb++
		}
		d = append(d, s[c.start:c.end]...)
		digits = digits && c.digits
	}
	mask := uint32(0)
	for _, b := range bounds[:nb] {
		mask |= 1 << b
	}
	start, end := cs[0].start, cs[len(cs)-1].end
	if !plus {
		if len(d) == 11 && digits && mask&^cpfBounds == 0 && validCPF(d) {
			out = append(out, span{start, end, DetectorCPF})
		}
		if len(d) == 14 && mask&^cnpjBounds == 0 && validCNPJ(d) {
			out = append(out, span{start, end, DetectorCNPJ})
		}
	}
	if digits && len(d) <= 13 && phoneDigits(d, bounds[:nb], seps[:nb], plus) {
		// take an opening parenthesis around the area code and a leading '+' with it
		if start > 0 && s[start-1] == '(' && strings.IndexByte(s[start:end], ')') >= 0 {
			start--
		}
		if start > 0 && s[start-1] == '+' {
			start--
		}
		out = append(out, span{start, end, DetectorPhone})
	}
	return out
}

// phoneDigits reports whether the digits d, with chunk boundaries bounds (and their
// separators), are a Brazilian phone number: the national number (area code and subscriber)
// alone, after the country code 55, or after the trunk prefix 0 ("011 98765-4321"); after a
// '+' (plus), only with the country code.
func phoneDigits(d []byte, bounds []uint8, seps []sepKind, plus bool) bool {
	cc := len(d) >= 12 && d[0] == '5' && d[1] == '5'
	if plus {
		return cc && nationalPhone(d, 2, bounds, seps)
	}
	return nationalPhone(d, 0, bounds, seps) ||
		cc && nationalPhone(d, 2, bounds, seps) ||
		d[0] == '0' && nationalPhone(d, 1, bounds, seps)
}

// nationalPhone reports whether d[p:] is a Brazilian national number grouped as people
// write one, after a prefix of p digits that no boundary cuts. A trunk prefix 0 is set off
// by a space or a parenthesis, never by a lone dot, hyphen or slash ("0.11987654321" is a
// decimal).
func nationalPhone(d []byte, p int, bounds []uint8, seps []sepKind) bool {
	nat := d[p:]
	rel := uint32(0)
	for k, b := range bounds {
		switch {
		case int(b) < p:
			return false
		case int(b) == p:
			if p == 1 && seps[k] == sepPunct {
				return false
			}
		default:
			rel |= 1 << (int(b) - p)
		}
	}
	switch len(nat) {
	case 11: // mobile: 9 and 8 digits; "11 9 8765 4321" sets the 9 apart only after the area code
		if nat[2] != '9' || rel&^mobileBounds != 0 || rel&(1<<3) != 0 && rel&(1<<2) == 0 {
			return false
		}
	case 10: // fixed line: 8 digits starting 2 to 5
		if nat[2] < '2' || nat[2] > '5' || rel&^fixedBounds != 0 {
			return false
		}
	default:
		return false
	}
	if !validDDD[int(nat[0]-'0')*10+int(nat[1]-'0')] {
		return false
	}
	return validBRPhone(nat)
}

// validBRPhone reports whether nat, the digits of a national number, is a valid Brazilian
// fixed-line or mobile number for libphonenumber.
func validBRPhone(nat []byte) bool {
	num, err := phonenumbers.Parse("+55"+string(nat), "BR")
	if err != nil || num.GetCountryCode() != 55 || !phonenumbers.IsValidNumberForRegion(num, "BR") {
		return false
	}
	switch phonenumbers.GetNumberType(num) {
	case phonenumbers.MOBILE, phonenumbers.FIXED_LINE, phonenumbers.FIXED_LINE_OR_MOBILE:
		return true
	}
	return false
}

// validDDD holds Brazil's area codes (DDD), a prefilter only: libphonenumber decides.
var validDDD = func() (t [100]bool) {
	for _, d := range []int{11, 12, 13, 14, 15, 16, 17, 18, 19, 21, 22, 24, 27, 28,
		31, 32, 33, 34, 35, 37, 38, 41, 42, 43, 44, 45, 46, 47, 48, 49, 51, 53, 54, 55,
		61, 62, 63, 64, 65, 66, 67, 68, 69, 71, 73, 74, 75, 77, 79,
		81, 82, 83, 84, 85, 86, 87, 88, 89, 91, 92, 93, 94, 95, 96, 97, 98, 99} {
		t[d] = true
	}
	return t
}()
