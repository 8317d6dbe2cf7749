// Package jsonscan holds the lexical rules of JSON (RFC 8259) that the server's two one-pass
// readers share: the edge's strict check of every request body (internal/httpx.CheckJSON) and
// the reader of a capability's output for the text a model reads (internal/capability). Each
// function reads one token starting at an offset and returns where it ends; what a token
// means is the caller's.
package jsonscan

import (
	"encoding/json"
	"errors"
	"unicode/utf8"
)

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

// stringASCII marks the bytes a string holds as they are, needing no further look: printable
// ASCII other than the quote and the backslash.
var stringASCII = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// String reads the string whose opening quote is at i and returns the offset after its
// closing quote. plain says its value is its bytes as they are: no escape and valid UTF-8
// (a string that is not plain is unquoted by encoding/json, which defines what its escapes
// mean). ok is false for a control character, a malformed escape or a missing end.
func String(b []byte, i int) (end int, plain, ok bool) {
	i++
	plain = true
	for i < len(b) {
		for i < len(b) && stringASCII[b[i]] { // most of a string: one table look-up a byte
			i++
		}
		if i == len(b) {
			break
		}
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

// Value returns the offset after the JSON value that starts at i (after any whitespace);
// ok is false when it is not a well-formed value.
func Value(b []byte, i int) (end int, ok bool) {
	i = Space(b, i)
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		end, _, ok = String(b, i)
		return end, ok
	case c == 't':
		return Literal(b, i, "true")
	case c == 'f':
		return Literal(b, i, "false")
	case c == 'n':
		return Literal(b, i, "null")
	case c == '-' || ('0' <= c && c <= '9'):
		return Number(b, i)
	case c == '[':
		i = Space(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, true
		}
		for {
			if i, ok = Value(b, i); !ok {
				return i, false
			}
			if i = Space(b, i); i >= len(b) {
				return i, false
			}
			switch b[i] {
			case ',':
				i++
			case ']':
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == '{':
		var n int
		if members(b[i:], nil, &n) != nil {
			return i, false
		}
		return i + n, true
	}
	return i, false
}

// Members calls fn with each member of the object b holds (whitespace around it allowed), in
// order: its key unquoted (by encoding/json when it has escapes) and its value's bytes,
// which alias b. After fn returns false it is not called again, but the rest of b is still
// checked. An error says b is not one well-formed object.
func Members(b []byte, fn func(key string, value []byte) bool) error {
	var n int
	if err := members(b, fn, &n); err != nil {
		return err
	}
	if Space(b, n) != len(b) {
		return errNotObject
	}
	return nil
}

var errNotObject = errors.New("jsonscan: not one JSON object")

func members(b []byte, fn func(string, []byte) bool, end *int) error {
	i := Space(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errNotObject
	}
	i = Space(b, i+1)
	if i < len(b) && b[i] == '}' {
		*end = i + 1
		return nil
	}
	more := true
	for {
		if i >= len(b) || b[i] != '"' {
			return errNotObject
		}
		kEnd, plain, ok := String(b, i)
		if !ok {
			return errNotObject
		}
		kStart := i
		if i = Space(b, kEnd); i >= len(b) || b[i] != ':' {
			return errNotObject
		}
		vStart := Space(b, i+1)
		vEnd, ok := Value(b, vStart)
		if !ok {
			return errNotObject
		}
		if more && fn != nil {
			key := string(b[kStart+1 : kEnd-1])
			if !plain && json.Unmarshal(b[kStart:kEnd], &key) != nil {
				return errNotObject
			}
			more = fn(key, b[vStart:vEnd])
		}
		if i = Space(b, vEnd); i >= len(b) {
			return errNotObject
		}
		switch b[i] {
		case ',':
			i = Space(b, i+1)
		case '}':
			*end = i + 1
			return nil
		default:
			return errNotObject
		}
	}
}
