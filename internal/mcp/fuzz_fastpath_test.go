package mcp_test

import (
	"testing"
)

// FuzzFastPathEquivalence sends arbitrary envelopes, with arbitrary era and routing headers, to
// the engine and to the fast path over the fake registry, and requires the same answer
// (sameAnswer: status, headers, JSON, ids byte for byte). The seed corpus is fakeCorpus (every
// shape the fast path takes or refuses) plus testdata/fuzz/FuzzFastPathEquivalence.
func FuzzFastPathEquivalence(f *testing.F) {
	for _, r := range fakeCorpus() {
		var version, method, name string
		token := byte(0)
		for _, kv := range r.Header {
			switch kv[0] {
			case "MCP-Protocol-Version":
				version = kv[1]
			case "Mcp-Method":
				method = kv[1]
			case "Mcp-Name":
				name = kv[1]
			case "Authorization":
				switch kv[1] {
				case "Bearer " + tokVol:
					token = 1
				case "Bearer " + tokNone:
					token = 2
				}
			}
		}
		f.Add([]byte(r.Body), version, method, name, token)
	}
	p := optionsPair(f, testOptions(nil))
	tokens := []string{tokAdmin, tokVol, tokNone, "bad"}
	f.Fuzz(func(t *testing.T, body []byte, version, method, name string, token byte) {
		extra := []string{"MCP-Protocol-Version", version, "Mcp-Method", method, "Mcp-Name", name}
		r := mcpReq(tokens[int(token)%len(tokens)], string(body), extra...)
		a, b := serve(p.engine, r), serve(p.fast, r)
		if d := sameAnswer(r, a, b, nil); d != "" {
			t.Fatalf("engine and fast path differ on %s", d)
		}
	})
}
