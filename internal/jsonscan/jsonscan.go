// Package jsonscan holds the lexical rules of JSON (RFC 8259) that the server's two one-pass
// readers share: the edge's strict check of every request body (internal/httpx.CheckJSON) and
// the reader of a capability's output for the text a model reads (internal/capability). Each
// function reads one token starting at an offset and returns where it ends; what a token
// means is the caller's.
package jsonscan

import "unicode/utf8"

// Space returns the offset of the first byte at or after i that is not JSON whitespace.
func Space(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// Number reads the number that starts at i (a '-' or a digit) and returns the offset after
// it; ok is false when the bytes are not a number's grammar. A number ends at the first byte
// that cannot continue it, whatever that byte is: the caller judges what follows.
func Number(b []byte, i int) (end int, ok bool) {
	digits := func() int {
		n := 0
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if digits() == 0 {
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return i, false
		}
	}
	return i, true
}

// Literal reports whether word (true, false, null) is at i, and the offset after it.
func Literal(b []byte, i int, word string) (end int, ok bool) {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return i, false
	}
	return i + len(word), true
}

// String reads the string whose opening quote is at i and returns the offset after its
// closing quote. plain says its value is its bytes as they are: no escape and valid UTF-8
// (a string that is not plain is unquoted by encoding/json, which defines what its escapes
// mean). ok is false for a control character, a malformed escape or a missing end.
func String(b []byte, i int) (end int, plain, ok bool) {
	i++
	plain = true
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, plain, true
		case c < 0x20:
			return i, false, false
		case c == '\\':
			plain = false
			if i+1 >= len(b) {
				return i, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return i, false, false
				}
				for _, h := range b[i+2 : i+6] {
					if !isHex(h) {
						return i, false, false
					}
				}
				i += 6
			default:
				return i, false, false
			}
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				plain = false
			}
			i += size
		default:
			i++
		}
	}
	return i, false, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
