package capability

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
)

// decodeWithTokens is the reader textDoc.parse replaced, kept as the oracle: encoding/json's
// Decoder.Token with UseNumber, which defines what a node of a document is.
func decodeWithTokens(data []byte) (node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := tokenNode(dec)
	if err != nil {
		return node{}, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return node{}, errors.New("data after the JSON value")
	}
	return n, nil
}

func tokenNode(dec *json.Decoder) (node, error) {
	tok, err := dec.Token()
	if err != nil {
		return node{}, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := node{kind: nodeObject}
		if t == '[' {
			n.kind = nodeArray
		} else if t != '{' {
			return node{}, fmt.Errorf("unexpected %v", t)
		}
		for dec.More() {
			if t == '{' {
				k, err := dec.Token()
				if err != nil {
					return node{}, err
				}
				n.keys = append(n.keys, k.(string))
			}
			v, err := tokenNode(dec)
			if err != nil {
				return node{}, err
			}
			n.vals = append(n.vals, v)
		}
		_, err := dec.Token()
		return n, err
	case nil:
		return node{kind: nodeNull}, nil
	case string:
		return node{kind: nodeScalar, scalar: t}, nil
	case json.Number:
		return node{kind: nodeScalar, scalar: t.String()}, nil
	case bool:
		return node{kind: nodeScalar, scalar: fmt.Sprint(t)}, nil
	}
	return node{}, fmt.Errorf("unexpected token %v", tok)
}

var parseCorpus = []string{
	`{"to":"2026-06-30","from":"2026-06-01","children":276,"covers":null,"ok":true,"no":false}`,
	`{"k":[{"a":"1","ids":[{"x":"1"}]}],"e":[],"o":{}}`,
	` { "a" : [ 1 , -2.5e+3 , 0 , 1E-2 ] , "b" : "x" } `,
	`[1,2,[3,[4,{"z":null}]]]`,
	`"a lone string"`, `12`, `true`, `null`,
	`{"esc":"quote \" backslash \\ slash \/ tab \t nl \n u \u00e9 pair \ud83d\ude00 lone \ud800 html \u003c\u0026"}`,
	`{"utf8":"Berçário, São João, 日本"}`,
	"{\"bad utf8\":\"a\xffb\xc3\"}",
	`{"dup":1,"dup":2}`,
	// broken documents: both must refuse them
	``, `{`, `{"a":1} {"b":2}`, `{"a":}`, `[1,]`, `{"a" 1}`, `{"a":1,}`, `01`, `-`, `1.`, `1e`, `tru`, `nul`,
	"{\"ctl\":\"a\x01b\"}", `"unterminated`, `"bad escape \x"`, `{"a":"\u12"}`, `[}`, `{]`,
}

// TestParseMatchesDecoder: textDoc.parse reads every document exactly as the Decoder.Token
// reader did, and refuses the same broken ones.
func TestParseMatchesDecoder(t *testing.T) {
	for _, doc := range parseCorpus {
		checkParse(t, []byte(doc))
	}
}

func FuzzParseMatchesDecoder(f *testing.F) {
	for _, doc := range parseCorpus {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) { checkParse(t, doc) })
}

func checkParse(t *testing.T, doc []byte) {
	t.Helper()
	want, wantErr := decodeWithTokens(doc)
	var d textDoc
	root, err := d.parse(doc)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("%q: parse error %v, Decoder.Token error %v", doc, err, wantErr)
	}
	if got := d.tree(&root); err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\nparse         %#v\nDecoder.Token %#v", doc, got, want)
	}
}

// BenchmarkRenderText: a busy Sunday's check-ins as the read tool renders them, by the
// renderer and by the oracle it replaced.
func BenchmarkRenderText(b *testing.B) {
	rows := make([]map[string]any, 212)
	for i := range rows {
		rows[i] = map[string]any{"child_handle": fmt.Sprintf("K%05d", i), "child_label": "Ana S.", "class_id": "8c6a01d4-0000-4000-8000-000000000000",
			"class_name": "Berçário", "checked_in_at": "2026-10-25T12:00:14Z", "checked_out_at": "2026-10-25T13:46:45Z", "checkin_id": "8c6a01d4-0000-4000-8000-000000000001"}
	}
	data, _ := json.Marshal(map[string]any{"date": "2026-10-25", "checkins": rows})
	omit := []string{"checkins[].checkin_id"}
	for name, render := range map[string]func([]byte, []string) (string, error){"arena": RenderText, "oracle": oracleRenderText} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := render(data, omit); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// renderCorpus are the documents of FuzzRenderTextMatchesOracle's seeds, each with the
// comma-separated paths it leaves out: every shape TestRenderText pins, and their corners.
var renderCorpus = [][2]string{
	{`{"to":"2026-06-30","from":"2026-06-01","children":276,"covers":null,"ok":true}`, ""},
	{`{"days":[{"date":"2026-06-07","class_id":"u1","class_name":"Berçário","checkins":49},{"date":"2026-06-14","class_id":"u2","class_name":"Jardim"}]}`, "days[].class_id"},
	{`{"k":[{"a":"1"},{"a":"2","b":"x"}]}`, ""},
	{`{"k":[{"b":"1","a":"2"},{"a":"3","b":"4","a":"5"}]}`, ""},
	{`{"k":[{"a":"1","b":null,"c":"3"},{"c":null}]}`, ""},
	{`{"classes":[{"class_id":"u","class_name":"Maternal","headcount":2,"children":[{"handle":"K7Q2MX","label":"Ana S.","checkin_id":"c1","status":"checked_in"}]},{"class_name":"Jardim","children":[]}]}`, "classes[].class_id,classes[].children[].checkin_id"},
	{`{"k":[{"a":"1","ids":[{"x":"1"}]}]}`, "k[].ids"},
	{`{"k":[{"ids":[1],"o":{"p":{"q":2}}},{"z":null}]}`, "k[].o.p"},
	{`{"scopes":["a:read","b:write"],"none":[]}`, ""},
	{`{"mixed":[1,{"a":"x","b":{"c":"y"}},[2,[3]],null,"s p"]}`, "mixed[].a"},
	{`{"guardian":{"name":"Maria","phone":{"e164":"+55"}},"id":"g1"}`, "guardian.phone"},
	{`{"a":"","b":"x | y","c":"two\nlines","d":" pad","e":"plain text"}`, "e"},
	{`[1,2]`, ""}, {`"lone"`, ""}, {`[{"a":1},{"a":2}]`, "[].a"}, {`{}`, ""}, {`[]`, ""},
	{`{"a":{}}`, ""}, {`{"x":[{}]}`, ""}, {`{`, ""},
}

// FuzzRenderTextMatchesOracle: the arena renderer writes exactly what the node-tree renderer
// it replaced (textoracle_test.go) wrote, for any document and any paths left out, and refuses
// the same documents.
func FuzzRenderTextMatchesOracle(f *testing.F) {
	for _, c := range renderCorpus {
		f.Add([]byte(c[0]), c[1])
	}
	f.Fuzz(func(t *testing.T, doc []byte, omit string) {
		var paths []string
		if omit != "" {
			paths = strings.Split(omit, ",")
		}
		want, wantErr := oracleRenderText(doc, paths)
		got, err := RenderText(doc, paths)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%q omit %q: error %v, oracle's %v", doc, omit, err, wantErr)
		}
		if err == nil && got != want {
			t.Fatalf("%q omit %q:\ngot\n%s\noracle\n%s", doc, omit, got, want)
		}
	})
}

// TestRenderTextAppends: AppendText leaves what dst held and appends exactly RenderText's text.
func TestRenderTextAppends(t *testing.T) {
	for _, c := range renderCorpus {
		want, err := RenderText([]byte(c[0]), strings.Split(c[1], ","))
		if err != nil {
			continue
		}
		got, err := AppendText([]byte("head\n\n"), []byte(c[0]), strings.Split(c[1], ","))
		if err != nil || string(got) != "head\n\n"+want {
			t.Errorf("%s: AppendText = %q, %v; want %q", c[0], got, err, "head\n\n"+want)
		}
	}
}
