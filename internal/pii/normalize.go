package pii

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// normText is a string prepared for matching, and the way back to the original: detectors
// run on s, and a span of s maps to the original text through start and end (for each byte of
// s, the byte range of the original it came from). start is nil when s is the original text
// unchanged, the common case (ASCII, or text already in normal form).
//
// Detection must not depend on how a value was typed: a CPF with a zero-width space in it, a
// phone in full-width digits or a name with a soft hyphen are the same data to a reader, so
// they must be the same data to the scanner.
type normText struct {
	s          string
	start, end []int32
}

// span maps a span of n.s back to the original text.
func (n *normText) span(sp span) span {
	if n.start == nil {
		return sp
	}
	return span{int(n.start[sp.start]), int(n.end[sp.end-1]), sp.det}
}

// normalize prepares s for the detectors, in three steps:
//
//  1. invisible characters are removed: format characters (Unicode category Cf: zero-width
//     space and joiners, soft hyphen, word joiner, byte-order mark, bidi controls), variation
//     selectors and the other default-ignorable code points (Hangul fillers, …);
//  2. Unicode NFKC: full-width and other compatibility forms become their plain forms
//     (full-width digits and letters, ＠, superscripts, circled digits, ligatures), and
//     decomposed accents are composed;
//  3. what NFKC leaves alone is folded: every decimal digit of any script becomes its ASCII
//     digit, every dash (Pd) and the minus sign become '-', middle dots and one-dot leaders
//     '.', fraction and division slashes '/', every space separator ' ', line and paragraph
//     separators '\n'; combining marks on anything but a letter (a keycap on a digit, a
//     strike-through) are dropped.
//
// Letter case and the accents of letters are kept: CNPJ letters are upper case by rule, and
// known names are folded by their own matcher.
func normalize(s string) normText {
	if !needsNormalizing(s) {
		return normText{s: s}
	}
	// Step 1, with a map of every kept byte to the original rune it is.
	a := make([]byte, 0, len(s))
	aStart := make([]int32, 0, len(s))
	aEnd := make([]int32, 0, len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !ignorable(r) {
			for k := range n {
				a = append(a, s[i+k])
				aStart = append(aStart, int32(i))
				aEnd = append(aEnd, int32(i+n))
			}
		}
		i += n
	}
	// Steps 2 and 3, one NFKC segment at a time: each output byte maps to its segment's range
	// of the original.
	out := normText{}
	b := make([]byte, 0, len(a))
	start := make([]int32, 0, len(a))
	end := make([]int32, 0, len(a))
	prevLetter := false
	var it norm.Iter
	it.Init(norm.NFKC, a)
	for !it.Done() {
		p0 := it.Pos()
		seg := it.Next()
		p1 := it.Pos()
		if p1 <= p0 { // cannot happen; never loop forever on a broken iterator
			break
		}
		os, oe := aStart[p0], aEnd[p1-1]
		for j := 0; j < len(seg); {
			r, n := utf8.DecodeRune(seg[j:])
			j += n
			if r < utf8.RuneSelf {
				b = append(b, byte(r))
				start, end = append(start, os), append(end, oe)
				prevLetter = r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
				continue
			}
			if ignorable(r) || (unicode.In(r, unicode.Mn, unicode.Me) && !prevLetter) {
				continue
			}
			if f := foldPunct(r); f != 0 {
				b = append(b, f)
				start, end = append(start, os), append(end, oe)
				prevLetter = false
				continue
			}
			if d, ok := digitValue(r); ok {
				b = append(b, '0'+byte(d))
				start, end = append(start, os), append(end, oe)
				prevLetter = false
				continue
			}
			var buf [utf8.UTFMax]byte
			for _, c := range buf[:utf8.EncodeRune(buf[:], r)] {
				b = append(b, c)
				start, end = append(start, os), append(end, oe)
			}
			if !unicode.In(r, unicode.Mn, unicode.Me) {
				prevLetter = unicode.IsLetter(r)
			}
		}
	}
	out.s, out.start, out.end = string(b), start, end
	return out
}

// needsNormalizing reports whether normalize would change s. ASCII never changes; nor does
// text in NFKC whose every non-ASCII rune is a letter left as it is (Portuguese text typed
// with precomposed accents).
func needsNormalizing(s string) bool {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	if i == len(s) {
		return false
	}
	for j := i; j < len(s); {
		if s[j] < utf8.RuneSelf {
			j++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[j:])
		j += n
		if r >= 0xC0 && r < 0x250 { // Latin-1 and Latin Extended letters (and × ÷): kept
			continue
		}
		if r == utf8.RuneError || ignorable(r) || foldPunct(r) != 0 || unicode.IsDigit(r) ||
			unicode.In(r, unicode.Mn, unicode.Me) {
			return true
		}
	}
	return !norm.NFKC.IsNormalString(s[i:])
}

// ignorable reports whether r is invisible and carries no text: a format character (Cf), a
// variation selector or another default-ignorable code point.
func ignorable(r rune) bool {
	if r < 0xAD {
		return false
	}
	return unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}

// foldPunct is the ASCII separator r stands for in numbers ('-', '.', '/', ' ', '\n'), or 0.
func foldPunct(r rune) byte {
	switch r {
	case 0x2212, 0x2043, 0xFE63, 0xFF0D: // minus sign, hyphen bullet, small and full-width hyphen-minus
		return '-'
	case 0x00B7, 0x2024, 0x2027, 0x2219, 0x22C5, 0x30FB, 0xFF0E, 0xFF65: // middle dots, one-dot leader, dot operators
		return '.'
	case 0x2044, 0x2215, 0x29F8, 0xFF0F: // fraction, division, big and full-width solidus
		return '/'
	case 0x2028, 0x2029, 0x0085: // line and paragraph separators, next line
		return '\n'
	}
	switch {
	case unicode.Is(unicode.Pd, r):
		return '-'
	case unicode.Is(unicode.Zs, r):
		return ' '
	}
	return 0
}

// digitValue is the value of a decimal digit of any script (Unicode Nd). Nd digits come in
// contiguous runs of ten from zero (a Unicode stability guarantee), so a digit's value is its
// distance from the start of its run.
func digitValue(r rune) (int, bool) {
	for _, rg := range unicode.Nd.R16 {
		if uint16(r>>16) == 0 && uint16(r) >= rg.Lo && uint16(r) <= rg.Hi {
			return int(uint16(r)-rg.Lo) % 10, true
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if uint32(r) >= rg.Lo && uint32(r) <= rg.Hi {
			return int(uint32(r)-rg.Lo) % 10, true
		}
	}
	return 0, false
}
