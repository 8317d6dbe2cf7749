package capability

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"
)

// decodeWithTokens is the reader parseNode replaced, kept as the oracle: encoding/json's
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

var parseNodeCorpus = []string{
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

// TestParseNodeMatchesDecoder: parseNode reads every document exactly as the Decoder.Token
// reader did, and refuses the same broken ones.
func TestParseNodeMatchesDecoder(t *testing.T) {
	for _, doc := range parseNodeCorpus {
		checkParseNode(t, []byte(doc))
	}
}

func FuzzParseNodeMatchesDecoder(f *testing.F) {
	for _, doc := range parseNodeCorpus {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) { checkParseNode(t, doc) })
}

func checkParseNode(t *testing.T, doc []byte) {
	t.Helper()
	want, wantErr := decodeWithTokens(doc)
	got, err := parseNode(doc)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("%q: parseNode error %v, Decoder.Token error %v", doc, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\nparseNode     %#v\nDecoder.Token %#v", doc, got, want)
	}
}

// BenchmarkRenderText: a busy Sunday's check-ins as the read tool renders them.
func BenchmarkRenderText(b *testing.B) {
	rows := make([]map[string]any, 212)
	for i := range rows {
		rows[i] = map[string]any{"child_handle": fmt.Sprintf("K%05d", i), "child_label": "Ana S.", "class_id": "8c6a01d4-0000-4000-8000-000000000000",
			"class_name": "Berçário", "checked_in_at": "2026-10-25T12:00:14Z", "checked_out_at": "2026-10-25T13:46:45Z", "checkin_id": "8c6a01d4-0000-4000-8000-000000000001"}
	}
	data, _ := json.Marshal(map[string]any{"date": "2026-10-25", "checkins": rows})
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := RenderText(data, []string{"checkins[].checkin_id"}); err != nil {
			b.Fatal(err)
		}
	}
}
