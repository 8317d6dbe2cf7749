package bench

import (
	"strings"
	"testing"
)

func TestJSONRPCPayload(t *testing.T) {
	const res = `{"jsonrpc":"2.0","id":1,"result":{}}`
	tests := []struct {
		name, ctype, body, want, err string
	}{
		{"plain JSON", "application/json", res, res, ""},
		{"JSON with charset", "application/json; charset=utf-8", res, res, ""},
		{"one event", "text/event-stream", "event: message\ndata: " + res + "\n\n", res, ""},
		{"no space after colon", "text/event-stream", "data:" + res + "\n\n", res, ""},
		{"CRLF line ends", "text/event-stream", "event: message\r\ndata: " + res + "\r\n\r\n", res, ""},
		{"notification first, response last", "text/event-stream",
			"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n: keep-alive\n\nid: 2\ndata: " + res + "\n\n", res, ""},
		{"multi-line data joined with newline", "text/event-stream", "data: {\"a\":\ndata: 1}\n\n", "{\"a\":\n1}", ""},
		{"stream ends without blank line", "text/event-stream", "data: " + res, res, ""},
		{"comment only", "text/event-stream", ": ping\n\n", "", "without a data event"},
		{"empty stream", "text/event-stream", "", "", "without a data event"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := JSONRPCPayload(tc.ctype, []byte(tc.body))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestCheckRPC(t *testing.T) {
	tests := []struct {
		name, payload, err string
	}{
		{"result", `{"jsonrpc":"2.0","id":1,"result":{"contents":[]}}`, ""},
		{"tool result", `{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false}}`, ""},
		{"JSON-RPC error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`, "-32602"},
		{"tool error", `{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}`, "tool error"},
		{"no result", `{"jsonrpc":"2.0","id":1}`, "without result"},
		{"not JSON", `<html>`, "not a JSON-RPC response"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckRPC([]byte(tc.payload))
			if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("CheckRPC = %v, want %q", err, tc.err)
			}
		})
	}
}

func TestQuickCheck(t *testing.T) {
	mcp := &request{mcp: true}
	tool := &request{mcp: true, tool: true}
	plain := &request{}
	sse := func(s string) answer { return answer{200, "text/event-stream", []byte("data: " + s + "\n\n")} }
	tests := []struct {
		name     string
		r        *request
		a        answer
		minBytes int
		err      string
	}{
		{"REST 200", plain, answer{200, "application/json", []byte(`{"a":1}`)}, 0, ""},
		{"REST 500", plain, answer{500, "text/plain", []byte("boom")}, 0, "HTTP 500"},
		{"too small", plain, answer{200, "application/json", []byte(`{}`)}, 10, "at least 10"},
		{"MCP result over SSE", mcp, sse(`{"jsonrpc":"2.0","id":1,"result":{}}`), 0, ""},
		{"MCP error over SSE", mcp, sse(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x"}}`), 0, "not a JSON-RPC result"},
		{"tool isError", tool, sse(`{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}`), 0, "tool error"},
		{"MCP 400", mcp, answer{400, "application/json", []byte(`{"error":{}}`)}, 0, "HTTP 400"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := quickCheck(tc.r, tc.a, tc.minBytes)
			if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("quickCheck = %v, want %q", err, tc.err)
			}
		})
	}
}
