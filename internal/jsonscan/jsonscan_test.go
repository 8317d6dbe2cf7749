package jsonscan

import "testing"

// TestTokens: where each token ends, and what is refused. The two readers built on these are
// pinned against encoding/json by their own fuzz tests (internal/httpx, internal/capability).
func TestTokens(t *testing.T) {
	for _, tc := range []struct {
		in   string
		end  int
		ok   bool
		read func([]byte, int) (int, bool)
	}{
		{"0,", 1, true, Number}, {"-12.5e+3]", 8, true, Number}, {"01", 1, true, Number}, {"1E9x", 3, true, Number},
		{"-", 1, false, Number}, {"1.", 2, false, Number}, {"1e", 2, false, Number}, {"1e+", 3, false, Number}, {".5", 0, false, Number},
		{"true}", 4, true, func(b []byte, i int) (int, bool) { return Literal(b, i, "true") }},
		{"tru", 0, false, func(b []byte, i int) (int, bool) { return Literal(b, i, "true") }},
	} {
		if end, ok := tc.read([]byte(tc.in), 0); end != tc.end || ok != tc.ok {
			t.Errorf("%q: end %d ok %v, want %d %v", tc.in, end, ok, tc.end, tc.ok)
		}
	}
	for _, tc := range []struct {
		in        string
		end       int
		plain, ok bool
	}{
		{`"abc",`, 5, true, true}, {`"Berçário"`, 12, true, true}, {`"a\"b"`, 6, false, true}, {`"\u00e9"`, 8, false, true},
		{"\"a\xffb\"", 5, false, true}, {`"\x"`, 1, false, false}, {`"\u12"`, 1, false, false}, {"\"a\x01\"", 2, false, false},
		{`"open`, 5, false, false}, {`"\`, 1, false, false},
	} {
		if end, plain, ok := String([]byte(tc.in), 0); end != tc.end || plain != tc.plain || ok != tc.ok {
			t.Errorf("String(%q) = %d %v %v, want %d %v %v", tc.in, end, plain, ok, tc.end, tc.plain, tc.ok)
		}
	}
	if got := Space([]byte(" \t\r\n x"), 0); got != 5 {
		t.Errorf("Space = %d, want 5", got)
	}
}
