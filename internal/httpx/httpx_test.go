package httpx

import (
	"strings"
	"testing"
)

func TestCheckJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string
		code int64 // 0: accepted
	}{
		{"object", `{"a":[1,{"b":null}],"c":"d"}`, 0},
		{"same key in sibling objects", `{"a":{"x":1},"b":{"x":2}}`, 0},
		{"distinct keys", `{"ab":1,"ba":2}`, 0},
		{"duplicate", `{"a":1,"a":2}`, CodeInvalidRequest},
		{"case variant", `{"method":1,"Method":2}`, CodeInvalidRequest},
		{"long s folds to s", `{"params":1,"paramſ":2}`, CodeInvalidRequest},
		{"kelvin sign folds to k", `{"k":1,"K":2}`, CodeInvalidRequest},
		{"nested duplicate", `{"a":{"x":1,"X":2}}`, CodeInvalidRequest},
		{"too deep", strings.Repeat("[", 40) + strings.Repeat("]", 40), CodeInvalidRequest},
		{"just deep enough", strings.Repeat("[", 32) + strings.Repeat("]", 32), 0},
		{"truncated", `{"a":`, CodeParseError},
		{"two values", `{} {}`, CodeParseError},
		{"empty", ``, CodeParseError},
		{"bad utf8", "{\"a\":\"\xff\"}", CodeParseError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckJSON([]byte(tc.in), 32)
			var code int64
			if je, ok := err.(*JSONError); ok {
				code = je.Code
			} else if err != nil {
				t.Fatalf("unexpected error type %T", err)
			}
			if code != tc.code {
				t.Fatalf("code = %d, want %d (%v)", code, tc.code, err)
			}
		})
	}
}

func TestHostOrigin(t *testing.T) {
	g := HostOriginGuard{Hosts: []string{"localhost", "127.0.0.1", "[::1]", "mcp.example.org:443"}, Origins: []string{"http://localhost", "https://app.example.org:8443"}}
	hosts := map[string]bool{"localhost": true, "localhost:3000": true, "LOCALHOST:1": true, "127.0.0.1:80": true, "[::1]:9": true,
		"mcp.example.org:443": true, "mcp.example.org": false, "mcp.example.org:444": false, "evil.example": false, "": false,
		"localhost.evil.example": false, "user@localhost": false, "::1": false}
	for h, want := range hosts {
		if got := g.HostAllowed(h); got != want {
			t.Errorf("HostAllowed(%q) = %v, want %v", h, got, want)
		}
	}
	origins := map[string]bool{"http://localhost:5173": true, "http://localhost": true, "https://localhost": false, "null": false,
		"https://app.example.org:8443": true, "https://app.example.org": false, "http://localhost/path": false, "http://x@localhost": false}
	for o, want := range origins {
		if got := g.OriginAllowed(o); got != want {
			t.Errorf("OriginAllowed(%q) = %v, want %v", o, got, want)
		}
	}
}

func TestParseBearer(t *testing.T) {
	tests := map[string]bool{"Bearer abc": true, "bearer abc.def-ghi_~+/": true, "Bearer abc==": true, "Bearer a=b": false,
		"Bearer ": false, "Bearer a b": false, "Basic abc": false, "Bearerabc": false, "Bearer a\x00": false}
	for in, ok := range tests {
		if _, got := parseBearer(in); got != ok {
			t.Errorf("parseBearer(%q) ok = %v, want %v", in, got, ok)
		}
	}
}

// FuzzCheckJSON: request decoding never panics, and whatever CheckJSON accepts is one valid
// JSON value within the depth limit.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `[{"a":1}]`, `{"a":1,"A":2}`, `{"paramſ":1}`,
		strings.Repeat("[", 50), `{"a":"\u0000"}`, `"x"`, `{"a":` + strings.Repeat("{\"b\":", 10) + `1` + strings.Repeat("}", 11)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := CheckJSON(data, 8); err == nil {
			depth, max := 0, 0
			inString, escaped := false, false
			for _, c := range data {
				switch {
				case escaped:
					escaped = false
				case inString && c == '\\':
					escaped = true
				case c == '"':
					inString = !inString
				case !inString && (c == '{' || c == '['):
					depth++
					if depth > max {
						max = depth
					}
				case !inString && (c == '}' || c == ']'):
					depth--
				}
			}
			if max > 8 {
				t.Fatalf("accepted depth %d > 8: %q", max, data)
			}
		}
	})
}

// FuzzParseBearer: the Authorization header parser never panics and returns only token68
// values that follow "Bearer " in the header.
func FuzzParseBearer(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer a.b.c", "Bearer ", "Bearer a==", "Bearer a=b", "Basic x", "Bearer  x", "Bearer a b", "BEARER é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		tok, ok := parseBearer(h)
		if !ok {
			if tok != "" {
				t.Fatalf("refused %q but returned %q", h, tok)
			}
			return
		}
		if tok == "" || !strings.HasSuffix(h, " "+tok) || len(h) != len("Bearer ")+len(tok) {
			t.Fatalf("%q parsed as %q", h, tok)
		}
		if strings.ContainsAny(tok, " \t\r\n,\"") {
			t.Fatalf("token %q has a separator", tok)
		}
	})
}
