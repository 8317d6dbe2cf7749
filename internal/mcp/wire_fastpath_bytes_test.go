package mcp_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/mcp"
)

// TestFastPathWireBytes: over a real connection, the fast path's answers are the engine's byte
// for byte (but the Date line): status line, headers, the chunked framing and the event. The
// differential test compares what a client reads; this pins what the connection carries,
// since the fast path declares the chunked encoding where the engine flushes (writeSSE).
func TestFastPathWireBytes(t *testing.T) {
	opts := testOptions(nil)
	opts.ReadToolPrefix = "neemias_"
	p := optionsPair(t, opts)
	engine, fast := httptest.NewServer(p.engine), httptest.NewServer(p.fast)
	defer engine.Close()
	defer fast.Close()
	var reqs []wireReq
	for _, call := range []struct {
		method string
		params map[string]any
	}{
		{"resources/read", map[string]any{"uri": "neemias://roster/children/" + childA}},
		{"resources/read", map[string]any{"uri": "neemias://attendance/summary?from=2026-06-01&to=2026-06-30"}},
		{"tools/call", map[string]any{"name": "neemias_roster_child", "arguments": map[string]any{"id": childA}}},
		{"tools/list", map[string]any{}},
	} {
		reqs = append(reqs, bothEras("tok-admin", 7, call.method, call.params)...)
	}
	before := mcp.FastAnswered(p.fast)
	for i, r := range reqs {
		a, b := rawExchange(t, engine.URL, r), rawExchange(t, fast.URL, r)
		if a != b {
			t.Errorf("request %d (%s): the wire differs\nengine: %q\nfast:   %q", i, r, a, b)
		}
	}
	if n := mcp.FastAnswered(p.fast) - before; n != int64(len(reqs)) {
		t.Errorf("the fast path answered %d of %d requests; the comparison must be of its answers", n, len(reqs))
	}
}

var dateLine = regexp.MustCompile(`(?m)^Date: [^\r\n]*\r\n`)

// rawExchange sends r on a new connection to url and returns every byte of the answer but the
// Date line.
func rawExchange(t *testing.T, url string, r wireReq) string {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: %d\r\n", r.Method, r.Path, len(r.Body))
	for _, kv := range r.Header {
		fmt.Fprintf(&b, "%s: %s\r\n", kv[0], kv[1])
	}
	b.WriteString("\r\n" + r.Body)
	if _, err := io.WriteString(conn, b.String()); err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(bufio.NewReader(conn))
	if err != nil {
		t.Fatal(err)
	}
	return dateLine.ReplaceAllString(string(out), "")
}
