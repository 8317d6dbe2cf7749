package httpx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkJSONTokens is the reader CheckJSON replaced, kept as its oracle: encoding/json's
// Decoder.Token, whose grammar and end-of-input rules define what CheckJSON refuses.
func checkJSONTokens(data []byte, maxDepth int) error {
	if !utf8.Valid(data) {
		return &JSONError{CodeParseError, "request body is not valid UTF-8"}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		object bool
		keys   map[string]struct{}
		expect bool // in an object: next string token is a key
	}
	var stack []frame
	values := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if len(stack) > 0 {
				return &JSONError{CodeParseError, "request body is not valid JSON (truncated)"}
			}
			break
		}
		if err != nil {
			return &JSONError{CodeParseError, "request body is not valid JSON"}
		}
		if len(stack) == 0 {
			values++
			if values > 1 {
				return &JSONError{CodeParseError, "request body holds more than one JSON value"}
			}
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].expect = true
				}
				if len(stack) >= maxDepth {
					return &JSONError{CodeInvalidRequest, fmt.Sprintf("JSON nesting deeper than %d levels", maxDepth)}
				}
				stack = append(stack, frame{object: d == '{', expect: d == '{'})
			case '}', ']':
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].expect = true
				}
			}
			continue
		}
		if len(stack) == 0 {
			continue
		}
		top := &stack[len(stack)-1]
		if !top.object {
			continue
		}
		if top.expect { // tok is a key
			key, _ := tok.(string)
			folded := strings.ToLower(foldKey(key))
			if top.keys == nil {
				top.keys = make(map[string]struct{})
			}
			if _, dup := top.keys[folded]; dup {
				return &JSONError{CodeInvalidRequest, fmt.Sprintf("duplicate or case-variant object key %q", truncate(key, 40))}
			}
			top.keys[folded] = struct{}{}
			top.expect = false
		} else {
			top.expect = true
		}
	}
	if values == 0 {
		return &JSONError{CodeParseError, "request body is empty"}
	}
	return nil
}

var checkJSONCorpus = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2.5e-3,-0,true,false,null,"s"]}}}`,
	`{"a":1,"A":2}`, `{"paramſ":1,"params":2}`, `{"k":1,"\u212a":2}`, `{"a":{"x":1},"b":{"x":2}}`, `{"\u0061":1,"a":2}`,
	``, `   `, `{`, `[`, `{"a"`, `{"a":`, `{"a":1`, `{"a":1,`, `[1`, `[1,`, `"abc`, `tru`, `nul`, `-`, `1.`, `1e`, `1e+`,
	`{} {}`, `{}{}`, `1 2`, `01`, `[01]`, `1"a"`, `"a"1`, `{} x`, `{}}`, `]`, `}`, `:`, `,`, `[,]`, `[1,]`, `{,}`, `{"a":1,}`,
	`{"a" 1}`, `{"a"::1}`, `{1:2}`, `[1 2]`, `{"a":1 "b":2}`, `truex`, `[true false]`, `"\x"`, `"\u12"`, `"\u12g4"`,
	"\"a\x01b\"", `"\ud800"`, `{"\ud800":1,"\ufffd":2}`, strings.Repeat("[", 33) + strings.Repeat("]", 33),
	strings.Repeat(`{"a":`, 20) + `1` + strings.Repeat("}", 20), "\ufeff{}", "{}\x00", " \t\r\n{}\n",
	manyKeysDoc(40, ""), manyKeysDoc(40, `,"K17":0`), manyKeysDoc(40, `,"k3":0`), manyKeysDoc(16, `,"K15":0`),
}

// manyKeysDoc is an object of n keys k0…k(n-1), then extra: objects past the checker's list.
func manyKeysDoc(n int, extra string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"k%d":%d`, i, i)
	}
	return b.String() + extra + "}"
}

// TestCheckJSONHugeObjectIsLinear: a body-sized object of distinct keys is checked in time
// proportional to its size: past a handful of keys they go to a set, not a list searched per key.
func TestCheckJSONHugeObjectIsLinear(t *testing.T) {
	doc := manyKeysDoc(30000, "")
	if err := CheckJSON([]byte(doc), 32); err != nil {
		t.Fatal(err)
	}
	if err := CheckJSON([]byte(manyKeysDoc(30000, `,"K29999":1`)), 32); err == nil {
		t.Fatal("a duplicate past the list was not found")
	}
}

// TestCheckJSONMatchesTokens: CheckJSON answers every document of the corpus exactly as the
// Decoder.Token reader did: accepted, or refused with the same code and reason.
func TestCheckJSONMatchesTokens(t *testing.T) {
	for _, doc := range checkJSONCorpus {
		checkAgainstTokens(t, []byte(doc))
	}
}

func FuzzCheckJSONMatchesTokens(f *testing.F) {
	for _, doc := range checkJSONCorpus {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) { checkAgainstTokens(t, doc) })
}

func checkAgainstTokens(t *testing.T, doc []byte) {
	t.Helper()
	for _, depth := range []int{4, 32} {
		got, want := fmt.Sprint(CheckJSON(doc, depth)), fmt.Sprint(checkJSONTokens(doc, depth))
		var gc, wc int64
		if e, ok := CheckJSON(doc, depth).(*JSONError); ok {
			gc = e.Code
		}
		if e, ok := checkJSONTokens(doc, depth).(*JSONError); ok {
			wc = e.Code
		}
		if got != want || gc != wc {
			t.Fatalf("%q (depth %d): CheckJSON %d %q, Token reader %d %q", doc, depth, gc, got, wc, want)
		}
	}
}

// BenchmarkCheckJSON: a tools/call body as MCP clients send it.
func BenchmarkCheckJSON(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"neemias_checkin_register","arguments":{"child":"K7Q2MX","class":"Jardim","service_date":"2026-10-25"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}}}}`)
	for _, r := range []struct {
		name  string
		check func([]byte, int) error
	}{{"one-pass", CheckJSON}, {"token-reader", checkJSONTokens}} {
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := r.check(body, 32); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
