package pii

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// folded is text folded for known-value matching: lower case, accents removed (NFD, then
// combining marks dropped), every run of white space one ASCII space. start and end give, for
// each byte of b, the byte span of the original rune it came from, so a match in b maps back
// to the original text.
type folded struct {
	b          []byte
	start, end []int32
}

// foldTable caches the folding of Latin-1 and Latin Extended-A/B, which covers Portuguese.
var foldTable [0x250]string

func init() {
	for r := rune(0x80); r < 0x250; r++ {
		foldTable[r] = foldRuneSlow(r)
	}
}

func foldRuneSlow(r rune) string {
	var sb strings.Builder
	for _, c := range norm.NFD.String(string(r)) {
		if unicode.Is(unicode.Mn, c) {
			continue
		}
		sb.WriteRune(unicode.ToLower(c))
	}
	return sb.String()
}

func foldRune(r rune) string {
	if r < 0x250 {
		return foldTable[r]
	}
	return foldRuneSlow(r)
}

// foldString folds s for building patterns.
func foldString(s string) string {
	return string(foldText(s).b)
}

func foldText(s string) folded {
	f := folded{b: make([]byte, 0, len(s)), start: make([]int32, 0, len(s)), end: make([]int32, 0, len(s))}
	space := true // drop leading space
	add := func(c byte, i, j int) {
		f.b = append(f.b, c)
		f.start = append(f.start, int32(i))
		f.end = append(f.end, int32(j))
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
				if !space {
					add(' ', i, i+1)
				}
				space = true
			case c >= 'A' && c <= 'Z':
				add(c+'a'-'A', i, i+1)
				space = false
			default:
				add(c, i, i+1)
				space = false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			if !space {
				add(' ', i, i+n)
			}
			space = true
			i += n
			continue
		}
		for _, c := range []byte(foldRune(r)) {
			add(c, i, i+n)
			space = false
		}
		i += n
	}
	for len(f.b) > 0 && f.b[len(f.b)-1] == ' ' {
		f.b, f.start, f.end = f.b[:len(f.b)-1], f.start[:len(f.start)-1], f.end[:len(f.end)-1]
	}
	return f
}

// isWordByte reports whether the folded byte c is part of a word: ASCII letters and digits and
// any byte of a multi-byte rune (letters outside Latin fold to themselves).
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
