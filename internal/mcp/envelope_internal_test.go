package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/neemias/neemias-mcp/internal/httpx"
)

// parseEnvelopeUnmarshal is parseEnvelope as it was, on json.Unmarshal into maps: the oracle
// of the one-pass member reader (objectMembers).
func parseEnvelopeUnmarshal(body []byte) (*envelope, *httpx.RPCError) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		return nil, &httpx.RPCError{Code: httpx.CodeInvalidRequest, Message: "JSON-RPC batches are not supported"}
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, &httpx.RPCError{Code: httpx.CodeInvalidRequest, Message: "the body must be a JSON-RPC request object"}
	}
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if !slices.Contains([]string{"jsonrpc", "id", "method", "params"}, k) {
			if k == "result" || k == "error" {
				return nil, &httpx.RPCError{Code: httpx.CodeInvalidRequest, Message: "this server sends no requests, so it accepts no JSON-RPC responses"}
			}
			return nil, &httpx.RPCError{Code: httpx.CodeInvalidRequest, Message: fmt.Sprintf("unexpected member %q in JSON-RPC request", k)}
		}
	}
	if string(raw["jsonrpc"]) != `"2.0"` {
		return nil, &httpx.RPCError{Code: httpx.CodeInvalidRequest, Message: `"jsonrpc" must be "2.0"`}
	}
	e := &envelope{}
	if err := json.Unmarshal(raw["method"], &e.method); err != nil || e.method == "" {
		return nil, &httpx.RPCError{Code: httpx.CodeInvalidRequest, Message: `"method" must be a non-empty string`}
	}
	if id, ok := raw["id"]; ok {
		if !validID(id) {
			return nil, &httpx.RPCError{Code: httpx.CodeInvalidRequest, Message: `"id" must be a string or an integer`}
		}
		e.id = id
	} else {
		e.isNotification = true
	}
	if p, ok := raw["params"]; ok && string(p) != "null" {
		var params map[string]json.RawMessage
		if err := json.Unmarshal(p, &params); err != nil {
			return e, &httpx.RPCError{Code: httpx.CodeInvalidParams, Message: `"params" must be an object`}
		}
		e.params = params
		_ = json.Unmarshal(params["name"], &e.name)
		_ = json.Unmarshal(params["uri"], &e.uri)
		if m, ok := params["_meta"]; ok {
			var meta map[string]json.RawMessage
			if err := json.Unmarshal(m, &meta); err != nil {
				return e, &httpx.RPCError{Code: httpx.CodeInvalidParams, Message: `"_meta" must be an object`}
			}
			e.meta = meta
			_ = json.Unmarshal(meta["traceparent"], &e.traceparent)
			_ = json.Unmarshal(meta["tracestate"], &e.tracestate)
			e.clientCaps = meta[metaClientCapabilities]
			if v, ok := meta[metaProtocolVersion]; ok {
				e.metaPresent = true
				if err := json.Unmarshal(v, &e.metaVersion); err != nil || e.metaVersion == "" {
					return e, &httpx.RPCError{Code: httpx.CodeInvalidParams, Message: fmt.Sprintf("_meta %q must be a non-empty string", metaProtocolVersion)}
				}
			}
		}
	}
	return e, nil
}

var envelopeCorpus = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,{"b":null}]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"traceparent":"00-x"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":"a\u0062","method":"resources/read","params":{"uri":"neemias://x"}}`,
	` { "jsonrpc" : "2.0" , "id" : 7 , "method" : "m" , "params" : null } `, `{"jsonrpc":"2.0","id":7,"method":"m","params":{"_meta":null}}`,
	`{"jsonrpc":"2.0","id":7,"method":"m","params":[]}`, `{"jsonrpc":"2.0","id":7,"method":"m","params":{"_meta":[]}}`,
	`{"jsonrpc":"2.0","id":7,"method":"m","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":3}}}`,
	`null`, `[]`, `"x"`, `1`, `{}`, `{"jsonrpc":"1.0","id":1,"method":"m"}`, `{"jsonrpc":"2.0","id":1.5,"method":"m"}`,
	`{"jsonrpc":"2.0","id":null,"method":"m"}`, `{"jsonrpc":"2.0","id":1,"method":""}`, `{"jsonrpc":"2.0","id":1,"method":"m","result":1}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","extra":1}`, `{"\u006aso\u006erpc":"2.0","id":1,"method":"m"}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":{"name":3,"uri":{"a":1}}}`,
}

// TestParseEnvelopeMatchesUnmarshal: the envelope of every body CheckJSON accepts is what the
// json.Unmarshal reader made of it, error included.
func TestParseEnvelopeMatchesUnmarshal(t *testing.T) {
	for _, body := range envelopeCorpus {
		checkEnvelope(t, []byte(body))
	}
}

func FuzzParseEnvelopeMatchesUnmarshal(f *testing.F) {
	for _, body := range envelopeCorpus {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkEnvelope(t, body) })
}

func checkEnvelope(t *testing.T, body []byte) {
	t.Helper()
	if httpx.CheckJSON(body, httpx.DefaultMaxJSONDepth) != nil {
		return // parseEnvelope only ever reads what the edge accepted
	}
	got, gotErr := parseEnvelope(body)
	want, wantErr := parseEnvelopeUnmarshal(body)
	if !reflect.DeepEqual(gotErr, wantErr) {
		t.Fatalf("%s: error %v, the Unmarshal reader %v", body, gotErr, wantErr)
	}
	if got == nil || want == nil {
		if (got == nil) != (want == nil) {
			t.Fatalf("%s: envelope %v, the Unmarshal reader %v", body, got, want)
		}
		return
	}
	if a, b := envelopeText(got), envelopeText(want); a != b {
		t.Fatalf("%s:\ngot  %s\nwant %s", body, a, b)
	}
}

// envelopeText is e with its raw members compacted, for comparison.
func envelopeText(e *envelope) string {
	compact := func(m map[string]json.RawMessage) string {
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var b bytes.Buffer
		for _, k := range keys {
			var c bytes.Buffer
			_ = json.Compact(&c, m[k])
			fmt.Fprintf(&b, "%q=%s;", k, c.Bytes())
		}
		return fmt.Sprintf("%v(%d)", b.String(), len(m))
	}
	return fmt.Sprintf("id=%s method=%q name=%q uri=%q v=%q present=%v note=%v tp=%q ts=%q caps=%s params=%s meta=%s nilp=%v nilm=%v",
		e.id, e.method, e.name, e.uri, e.metaVersion, e.metaPresent, e.isNotification, e.traceparent, e.tracestate, e.clientCaps,
		compact(e.params), compact(e.meta), e.params == nil, e.meta == nil)
}

// BenchmarkParseEnvelope: a 2026-07-28 resources/read body, read by each reader.
func BenchmarkParseEnvelope(b *testing.B) {
	body := []byte(envelopeCorpus[0])
	for _, r := range []struct {
		name  string
		parse func([]byte) (*envelope, *httpx.RPCError)
	}{{"members", parseEnvelope}, {"unmarshal", parseEnvelopeUnmarshal}} {
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.parse(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
