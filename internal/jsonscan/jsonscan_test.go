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

// TestMembers: an object's members in order, values as written; anything but one
// well-formed object is an error.
func TestMembers(t *testing.T) {
	var got []string
	err := Members([]byte(` {"a" : [1, {"x":"}"}] , "b\u0063":"s", "n":null, "o":{}} `), func(k string, v []byte) bool {
		got = append(got, k+"="+string(v))
		return true
	})
	want := []string{`a=[1, {"x":"}"}]`, `bc="s"`, `n=null`, `o={}`}
	if err != nil || len(got) != len(want) {
		t.Fatalf("Members = %q, %v; want %q", got, err, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("member %d = %q, want %q", i, got[i], want[i])
		}
	}
	for _, bad := range []string{``, `[]`, `null`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1} x`, `{"a":[1,]}`, `{"a":{"b":1,}}`, `{a:1}`} {
		if err := Members([]byte(bad), func(string, []byte) bool { return true }); err == nil {
			t.Errorf("Members(%q): no error", bad)
		}
	}
}
