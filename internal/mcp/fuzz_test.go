package mcp

import (
	"testing"

	"github.com/neemias/neemias-mcp/internal/httpx"
)

// FuzzDecodeRequest drives the whole pre-engine decoding of a POST body (strict JSON check,
// envelope parsing, era classification) with arbitrary bodies and version headers: it must
// never panic, and what it lets through must be a single request with a valid id whose era is
// consistent with its version markers.
func FuzzDecodeRequest(f *testing.F) {
	seeds := []struct{ body, header string }{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, ""},
		{`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, "2026-07-28"},
		{`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"neemias://roster/children/.."}}`, "2025-11-25"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, ""},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "2025-06-18"},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","Method":"tools/call"}`, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":7}}}`, "2026-07-28"},
	}
	for _, s := range seeds {
		f.Add([]byte(s.body), s.header)
	}
	f.Fuzz(func(t *testing.T, body []byte, header string) {
		if err := httpx.CheckJSON(body, httpx.DefaultMaxJSONDepth); err != nil {
			return
		}
		env, rpcErr := parseEnvelope(body)
		if rpcErr != nil {
			return
		}
		if env.method == "" {
			t.Fatalf("accepted a request without method: %q", body)
		}
		if !env.isNotification && !validID(env.id) {
			t.Fatalf("accepted id %q", env.id)
		}
		era, cerr := classify(env, header)
		if cerr == nil && era == eraModern && (header != VersionModern || env.metaVersion != VersionModern) {
			t.Fatalf("modern request accepted with header %q and _meta %q", header, env.metaVersion)
		}
		if cerr == nil && era == eraLegacy && env.method != "initialize" && header != VersionLegacy && header != VersionLegacyOld {
			t.Fatalf("legacy request accepted with header %q", header)
		}
	})
}
