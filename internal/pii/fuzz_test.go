package pii

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// resolve reports whether path (as Scan writes it) names a value of doc; inKey paths name an
// object.
func resolve(doc any, path string) error {
	if !strings.HasPrefix(path, "$") {
		return fmt.Errorf("path %q does not start with $", path)
	}
	cur, rest := doc, path[1:]
	for rest != "" {
		switch {
		case rest[0] == '.':
			i := 1
			for i < len(rest) && rest[i] != '.' && rest[i] != '[' {
				i++
			}
			obj, ok := cur.(map[string]any)
			if !ok {
				return fmt.Errorf("%q: not an object", path)
			}
			if cur, ok = obj[rest[1:i]]; !ok {
				return fmt.Errorf("%q: no member %q", path, rest[1:i])
			}
			rest = rest[i:]
		case strings.HasPrefix(rest, `["`):
			dec := json.NewDecoder(strings.NewReader(rest[1:]))
			var key string
			if err := dec.Decode(&key); err != nil {
				return fmt.Errorf("%q: bad member name: %v", path, err)
			}
			n := 1 + int(dec.InputOffset())
			if n >= len(rest) || rest[n] != ']' {
				return fmt.Errorf("%q: unterminated member name", path)
			}
			obj, ok := cur.(map[string]any)
			if !ok {
				return fmt.Errorf("%q: not an object", path)
			}
			if cur, ok = obj[key]; !ok {
				return fmt.Errorf("%q: no member %q", path, key)
			}
			rest = rest[n+1:]
		case rest[0] == '[':
			j := strings.IndexByte(rest, ']')
			idx, err := strconv.Atoi(rest[1:max(j, 1)])
			arr, ok := cur.([]any)
			if j < 0 || err != nil || !ok || idx < 0 || idx >= len(arr) {
				return fmt.Errorf("%q: bad index", path)
			}
			cur, rest = arr[idx], rest[j+1:]
		default:
			return fmt.Errorf("%q: unexpected %q", path, rest)
		}
	}
	return nil
}

func FuzzScan(f *testing.F) {
	for _, seed := range []string{
		`{"arguments":{"guardian":{"phone":"+55 11 98765-4321","cpf":52998224725}}}`,
		`{"content":[{"type":"text","text":"Ana Júlia Conceição nasceu em 14/03/2019"}]}`,
		`{"Ana Júlia Conceição":{"x":["12.ABC.345/01DE-35"]},"a b":"a@b.com.br"}`,
		`["(00) 91234-5678", 11222333000181, "2019-03-14T00:00:00Z", null, true]`,
		`{"a":"x","a":"529.982.247-25","\u00e9":"\ud800"}`,
		`"pedro  henrique\nda silva"`,
		`[[[[{"k":[1,2,{"z":"11987654374"}]}]]]]`,
		// issue 26: the same data written otherwise
		`{"t":"529\u200b.982 247/25 e ０１１ ９８７６５－４３２１"}`,
		`{"t":"12 ABC 345 01DE 35, +55 (11) 9 8765-4321 / 21 2555 1234"}`,
		`{"t":"Ana J\u200búlia Concei\u00adção, １４/０３/２０１９, 5\ufe0f\u20e3\u0301"}`,
		`{"t":"e\u200b\u0301 \ufb01 ＡＮＡ ٥٢٩٩٨٢٢٤٧٢٥ 𝟓 \u2028 ana＠exemplo.com.br"}`,
	} {
		f.Add([]byte(seed))
	}
	s := NewScanner(testKnown(f))
	f.Fuzz(func(t *testing.T, doc []byte) {
		findings, err := s.Scan(doc)
		if err != nil {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			if len(findings) > 0 {
				t.Fatalf("Scan accepted what encoding/json rejects: %v", err)
			}
			return
		}
		for _, fd := range findings {
			if err := resolve(v, fd.Path); err != nil {
				t.Fatalf("finding %v: %v", fd, err)
			}
		}
		red, rf, err := s.Redact(doc)
		if err != nil {
			t.Fatalf("Redact failed where Scan succeeded: %v", err)
		}
		if len(rf) != len(findings) {
			t.Fatalf("Redact found %d, Scan %d", len(rf), len(findings))
		}
		if !json.Valid(red) {
			t.Fatalf("Redact produced invalid JSON %q", red)
		}
		if again, err := s.Scan(red); err != nil || len(again) != 0 {
			t.Fatalf("Scan after Redact = %v, %v", again, err)
		}
	})
}

// FuzzNormalize: normalize never panics, maps every byte it writes to a range of the input in
// order, and leaves no invisible character, non-ASCII digit or dash for the detectors to trip
// on.
func FuzzNormalize(f *testing.F) {
	for _, seed := range []string{
		"529\u200b.982.247-25", "５２９．９８２．２４７－２５", "Ana J\u200búlia Concei\u00adção",
		"e\u200b\u0301", "5\ufe0f\u20e3", "٥٢٩", "\ufb01\u2028\u3000", "\xff\xfe invalid", "Ａ\u0301\u0301\u0301",
		"𝟓𝟐𝟗", "\u00a0\u2009–−‐", "ＡＮＡ ＪＵＬＩＡ",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := normalize(s)
		if n.start == nil {
			if n.s != s {
				t.Fatalf("normalize(%q) changed the text without a map", s)
			}
			return
		}
		if len(n.start) != len(n.s) || len(n.end) != len(n.s) {
			t.Fatalf("normalize(%q): map of %d/%d bytes for %d", s, len(n.start), len(n.end), len(n.s))
		}
		for i := range n.s {
			a, b := n.start[i], n.end[i]
			if a < 0 || a >= b || int(b) > len(s) || i > 0 && (a < n.start[i-1] || b < n.end[i-1]) {
				t.Fatalf("normalize(%q): byte %d maps to [%d,%d)", s, i, a, b)
			}
		}
		if utf8.ValidString(s) && !utf8.ValidString(n.s) {
			t.Fatalf("normalize(%q) = %q: invalid UTF-8", s, n.s)
		}
		for _, r := range n.s {
			if r >= utf8.RuneSelf && (ignorable(r) || foldPunct(r) != 0 || unicode.IsDigit(r)) {
				t.Fatalf("normalize(%q) = %q keeps %U", s, n.s, r)
			}
		}
		for _, sp := range patternSpans(n.s, nil) {
			if o := n.span(sp); o.start < 0 || o.start >= o.end || o.end > len(s) {
				t.Fatalf("normalize(%q): span %v maps to %v", s, sp, o)
			}
		}
	})
}
