package mcp_test

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
)

// TestRPCIDEchoedByteForByte (issue 24): a response carries its request's id exactly as the
// client wrote it, in both eras, whether the SDK answers (a result, the SDK's own error) or the
// edge does (an unknown tool). The go-sdk decodes ids as float64: 9007199254740993 came back
// as 9007199254740992, and a string id re-encoded ("\u0041" as "A"). Ids that are not a
// string or an integer (1e3, 1.5, null) stay refused with -32600 and no id (M08).
func TestRPCIDEchoedByteForByte(t *testing.T) {
	srv := newTestServer(t)
	ids := []string{
		`9007199254740993`, `-9007199254740993`, `9223372036854775807`, `-1`, `0`, `-0`, `42`,
		`"abc"`, `""`, `"9007199254740993"`, `"\u0041"`, `"a\/b"`, `"<&>"`, `"ação ✓"`,
		`"` + idTokenLike + `"`,
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	modernHeaders := func(method, name string) map[string]string {
		h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
		if name != "" {
			h["Mcp-Name"] = name
		}
		return h
	}
	type call struct {
		name    string
		send    func(id string) exchange
		wantErr bool
	}
	calls := []call{
		{"legacy initialize", func(id string) exchange {
			return do(t, srv, http.MethodPost, nil, `{"jsonrpc":"2.0","id":`+id+`,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		}, false},
		{"legacy ping", func(id string) exchange {
			return post(t, srv, nil, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`)
		}, false},
		{"legacy tools/list", func(id string) exchange {
			return post(t, srv, nil, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/list"}`)
		}, false},
		{"legacy resources/read of nothing (the SDK's error)", func(id string) exchange {
			return post(t, srv, nil, `{"jsonrpc":"2.0","id":`+id+`,"method":"resources/read","params":{"uri":"neemias://nothing"}}`)
		}, true},
		{"legacy unknown tool (the edge's error)", func(id string) exchange {
			return post(t, srv, nil, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"nope","arguments":{}}}`)
		}, true},
		{"modern tools/list", func(id string) exchange {
			return do(t, srv, http.MethodPost, modernHeaders("tools/list", ""), `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/list","params":{`+meta+`}}`)
		}, false},
		{"modern server/discover", func(id string) exchange {
			return do(t, srv, http.MethodPost, modernHeaders("server/discover", ""), `{"jsonrpc":"2.0","id":`+id+`,"method":"server/discover","params":{`+meta+`}}`)
		}, false},
		{"modern tools/call", func(id string) exchange {
			return do(t, srv, http.MethodPost, modernHeaders("tools/call", "neemias_checkin_register"),
				`{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"neemias_checkin_register","arguments":{"child_id":"`+childA+`"},`+meta+`}}`)
		}, false},
		{"modern resources/read of nothing (an error)", func(id string) exchange {
			return do(t, srv, http.MethodPost, modernHeaders("resources/read", "neemias://nothing"),
				`{"jsonrpc":"2.0","id":`+id+`,"method":"resources/read","params":{"uri":"neemias://nothing",`+meta+`}}`)
		}, true},
	}
	for _, c := range calls {
		for _, id := range ids {
			ex := c.send(id)
			payload := lastPayload(ex)
			if !strings.Contains(payload, `"id":`+id+`,`) && !strings.HasSuffix(payload, `"id":`+id+`}`) {
				t.Errorf("%s, id %s: the response's id is not the request's, byte for byte: %.300s", c.name, id, payload)
				continue
			}
			if _, isErr := ex.msg["error"]; isErr != c.wantErr {
				t.Errorf("%s, id %s: error = %v, want %v: %.300s", c.name, id, isErr, c.wantErr, payload)
			}
			if strings.Contains(ex.body, "neemias-rpc-id-") && !strings.Contains(id, "neemias-rpc-id-") {
				t.Errorf("%s, id %s: the engine's token leaked: %.300s", c.name, id, ex.body)
			}
		}
	}

	for _, id := range []string{`1e3`, `1E3`, `1.0`, `1.5`, `null`, `18446744073709551616`, `true`, `[1]`} {
		ex := post(t, srv, nil, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/list"}`)
		if ex.status != http.StatusBadRequest || ex.errorCode() != -32600 {
			t.Errorf("id %s: %d %v, want 400 and -32600: %.200s", id, ex.status, ex.errorCode(), ex.body)
		}
		if _, has := ex.msg["id"]; has {
			t.Errorf("id %s: the refusal names an id: %.200s", id, ex.body)
		}
	}
}

// idTokenLike is a client id shaped like the edge's token: it must come back as sent, too.
const idTokenLike = "neemias-rpc-id-00000000000000000000000000000000"

// lastPayload is the response's JSON-RPC message as sent: the last SSE data line, or the body.
func lastPayload(ex exchange) string {
	if !strings.HasPrefix(ex.header.Get("Content-Type"), "text/event-stream") {
		return strings.TrimSpace(ex.body)
	}
	var last string
	sc := bufio.NewScanner(strings.NewReader(ex.body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			last = d
		}
	}
	return last
}
