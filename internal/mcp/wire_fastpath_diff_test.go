package mcp_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/neemias/neemias-mcp/internal/mcp"
)

// fpMeta is 2026-07-28's required _meta, with caps as the client capabilities.
func fpMeta(caps any) map[string]any {
	return map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": caps}
}

// bothEras returns the request of method with params in both eras, well formed: 2026-07-28
// (_meta, MCP-Protocol-Version, Mcp-Method, Mcp-Name) and 2025-11-25 (the header only), with id.
func bothEras(token string, id any, method string, params map[string]any) []wireReq {
	name := ""
	if n, ok := params["name"].(string); ok {
		name = n
	}
	if u, ok := params["uri"].(string); ok {
		name = u
	}
	legacyParams := map[string]any{}
	modernParams := map[string]any{"_meta": fpMeta(map[string]any{})}
	for k, v := range params {
		legacyParams[k] = v
		modernParams[k] = v
	}
	var lp any = legacyParams
	if len(legacyParams) == 0 {
		lp = nil
	}
	return []wireReq{
		mcpReq(token, rpc(id, method, modernParams), "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", method, "Mcp-Name", name),
		mcpReq(token, rpc(id, method, lp), "MCP-Protocol-Version", "2025-11-25"),
	}
}

// fakeCorpus is every request shape the fast path takes or must leave to the engine, over the
// fake registry: each read and tool (both eras, every token), bad arguments, unknown
// resources and tools, a missing scope, wrong era headers, ids of every kind, and the
// parameters the fast path does not take (progress tokens, cursors, requestState…).
func fakeCorpus() []wireReq {
	var out []wireReq
	reads := []string{
		"neemias://roster/children", "neemias://roster/children/" + childA, "neemias://roster/children/" + classA,
		"neemias://roster/children/..", "neemias://roster/children/not-a-uuid", "neemias://roster/children/",
		"neemias://attendance/summary", "neemias://attendance/summary?from=2026-06-01&to=2026-06-30",
		"neemias://attendance/summary?from=2026-07-01&to=2026-06-01", "neemias://attendance/summary?from=x",
		"neemias://attendance/summary?bogus=1", "neemias://nothing", "ui://nothing", "",
	}
	calls := []map[string]any{
		{"name": "neemias_checkin_register", "arguments": map[string]any{"child_id": childA}},
		{"name": "neemias_checkin_register", "arguments": map[string]any{"child_id": classA}},
		{"name": "neemias_checkin_register", "arguments": map[string]any{"child_id": "nope"}},
		{"name": "neemias_checkin_register", "arguments": map[string]any{}},
		{"name": "neemias_checkin_register", "arguments": map[string]any{"child_id": childA, "extra": 1}},
		{"name": "neemias_checkin_register", "arguments": "not an object"},
		{"name": "neemias_checkin_register"},
		{"name": "neemias_child_enroll", "arguments": map[string]any{"name": "Ana", "guardian": map[string]any{"phone": "+55 11 99999-0000", "relationship": "mother"}}},
		{"name": "neemias_child_enroll", "arguments": map[string]any{"name": "A"}},
		{"name": "neemias_read_roster_children"}, {"name": "neemias_read_roster_child", "arguments": map[string]any{"id": childA}},
		{"name": "roster_child", "arguments": map[string]any{"id": childA}},
		{"name": "no_such_tool"},
	}
	ids := []any{1, "a", 0, -5, "9007199254740993", json.RawMessage(`9007199254740993`), "é\u2028<>&"}
	for i, tok := range []string{tokAdmin, tokVol, tokNone} {
		for j, uri := range reads {
			out = append(out, bothEras(tok, ids[(i+j)%len(ids)], "resources/read", map[string]any{"uri": uri})...)
		}
		for j, c := range calls {
			out = append(out, bothEras(tok, ids[(i+j)%len(ids)], "tools/call", c)...)
		}
		for _, m := range []string{"tools/list", "resources/list", "resources/templates/list", "prompts/list", "ping", "server/discover"} {
			out = append(out, bothEras(tok, 3, m, map[string]any{})...)
		}
	}
	uri := "neemias://roster/children/" + childA
	read := func(params string) string {
		return `{"jsonrpc":"2.0","id":11,"method":"resources/read","params":` + params + `}`
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	h := []string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "resources/read", "Mcp-Name", uri}
	out = append(out,
		// Parameters and _meta members the fast path leaves to the engine.
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`",`+meta[:len(meta)-1]+`,"progressToken":"p1"}}`), h...),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`",`+meta[:len(meta)-1]+`,"io.modelcontextprotocol/logLevel":"debug"}}`), h...),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`",`+meta[:len(meta)-1]+`,"io.modelcontextprotocol/clientInfo":{"name":"x","version":"1"}}}`), h...),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`",`+meta[:len(meta)-1]+`,"io.modelcontextprotocol/clientInfo":7}}`), h...),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`","requestState":"abc",`+meta+`}`), h...),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`","inputResponses":{},`+meta+`}`), h...),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`","URI":"x",`+meta+`}`), h...),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`), h...),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":7}}`), h...),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}`), h...),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}}}`), h...),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`","_meta":null}`), "MCP-Protocol-Version", "2025-11-25"),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`","_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}`), "MCP-Protocol-Version", "2025-11-25"),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`","_meta":{"progressToken":1}}`), "MCP-Protocol-Version", "2025-06-18"),
		mcpReq(tokAdmin, read(`{"uri":5}`), "MCP-Protocol-Version", "2025-11-25"),
		mcpReq(tokAdmin, read(`null`), "MCP-Protocol-Version", "2025-11-25"),
		mcpReq(tokAdmin, `{"jsonrpc":"2.0","id":12,"method":"tools/list","params":{"cursor":"abc"}}`, "MCP-Protocol-Version", "2025-11-25"),
		mcpReq(tokAdmin, `{"jsonrpc":"2.0","id":12,"method":"tools/list"}`, "MCP-Protocol-Version", "2025-06-18"),
		// Era headers: missing, mismatched, unsupported, the routing headers wrong or repeated.
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`",`+meta+`}`), "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "resources/read"),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`",`+meta+`}`), "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", uri),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`",`+meta+`}`), "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "resources/read", "Mcp-Name", uri+"x"),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`",`+meta+`}`), "MCP-Protocol-Version", "2026-07-28", "Mcp-Name", uri),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`",`+meta+`}`), "MCP-Protocol-Version", "2025-11-25"),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`",`+meta+`}`), "Mcp-Method", "resources/read", "Mcp-Name", uri),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`"}`), "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "resources/read", "Mcp-Name", uri),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`"}`)),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`"}`), "MCP-Protocol-Version", "2024-11-05"),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`",`+meta+`}`), append(h, "Mcp-Param-Region", "x")...),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`",`+meta+`}`), append(h, "Mcp-Session-Id", "abc", "Last-Event-ID", "1")...),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`",`+meta+`}`), append(h, "Accept", "text/event-stream")...),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`",`+meta+`}`), append(h, "Accept", "*/*")...),
		mcpReq(tokAdmin, read(`{"uri":"`+uri+`",`+meta+`}`), append(h, "Content-Type", "text/plain")...),
		mcpReq("bad-token", read(`{"uri":"`+uri+`",`+meta+`}`), h...),
		mcpReq("", read(`{"uri":"`+uri+`",`+meta+`}`), h...),
		// Not requests the fast path takes at all.
		mcpReq(tokAdmin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`),
		mcpReq(tokAdmin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "MCP-Protocol-Version", "2025-11-25"),
		mcpReq(tokAdmin, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, "MCP-Protocol-Version", "2025-11-25"),
		mcpReq(tokAdmin, `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"neemias://attendance/summary{?from,to,class_id}"},"argument":{"name":"class_id","value":"7"}}}`, "MCP-Protocol-Version", "2025-11-25"),
		mcpReq(tokAdmin, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"neemias_checkin_register","arguments":{"child_id":"`+childA+`"},"_meta":{"progressToken":"t"}}}`, "MCP-Protocol-Version", "2025-11-25"),
		mcpReq(tokAdmin, `{"jsonrpc":"2.0","id":1,"method":"nope/nope","params":{`+meta+`}}`, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "nope/nope"),
	)
	for _, body := range []string{`{}`, `{"jsonrpc":"2.0","id":1}`, `not json`, ``, `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`} {
		out = append(out, mcpReq(tokAdmin, body, "MCP-Protocol-Version", "2025-11-25"))
	}
	return out
}

// TestFastPathMatchesEngine: over the fake registry, the fast path answers every request of
// fakeCorpus exactly as the engine does.
func TestFastPathMatchesEngine(t *testing.T) {
	p := optionsPair(t, testOptions(nil))
	for i, r := range fakeCorpus() {
		t.Run(fmt.Sprint(i), func(t *testing.T) { p.check(t, r, nil) })
	}
}

// TestFastPathTaken: the corpus above is not all left to the engine.
func TestFastPathTaken(t *testing.T) {
	p := optionsPair(t, testOptions(nil))
	for _, r := range fakeCorpus() {
		serve(p.fast, r)
	}
	if n := mcp.FastAnswered(p.fast); n < 40 {
		t.Errorf("the fast path answered %d requests of the corpus, want at least 40", n)
	}
	if n := mcp.FastAnswered(p.engine); n != 0 {
		t.Errorf("the engine-only handler answered %d requests on the fast path", n)
	}
}
