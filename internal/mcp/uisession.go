package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The UI session id carries, statelessly, a 2025-era client's MCP Apps declaration from
// initialize to its later requests.
//
// In 2026-07-28 a client declares io.modelcontextprotocol/ui per request (_meta client
// capabilities). In the 2025 eras it declares it in initialize only, and this server keeps
// nothing of initialize. So when a legacy initialize declares the extension with the view MIME
// type, its HTTP response carries an Mcp-Session-Id (the 2025-11-25 Streamable HTTP transport
// lets a server assign one at initialization; clients echo it on every later request) whose
// value says only that: uiSessionPrefix followed by 128 random bits. A later legacy request
// carrying such an id is treated as having declared the extension. The id holds no secret and
// grants nothing (a client could declare the extension on its own; views are only shown, never
// made reachable: scopes still decide every call and read), so nothing is stored or signed, and
// any well-formed id is accepted, including one minted by another replica or before a restart.
//
// No other response carries a session id, modern (2026-07-28) requests ignore it, and the SDK
// never sees it (serveMCP drops it, and the SDK's stateless mode neither reads nor sets it).
// DELETE on the endpoint answers 405, which the 2025-11-25 transport allows ("the server does
// not allow clients to terminate sessions"); the go-sdk client ignores the answer.
const uiSessionPrefix = "neemias-ui1-"

// uiSessionIDLen is the length of a UI session id: the prefix and 32 lowercase hex digits.
const uiSessionIDLen = len(uiSessionPrefix) + 32

// newUISessionID returns a fresh UI session id.
func newUISessionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+); uniqueness is not relied on
	return uiSessionPrefix + hex.EncodeToString(b)
}

// isUISessionID reports whether sid is a well-formed UI session id.
func isUISessionID(sid string) bool {
	if len(sid) != uiSessionIDLen || !strings.HasPrefix(sid, uiSessionPrefix) {
		return false
	}
	for _, c := range sid[len(uiSessionPrefix):] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// initializeDeclaresUI reports whether an initialize request body declares the MCP Apps
// extension with the view MIME type in params.capabilities.
func initializeDeclaresUI(body []byte) bool {
	var req struct {
		Params struct {
			Capabilities *sdk.ClientCapabilities `json:"capabilities"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &req) != nil {
		return false
	}
	return ClientSupportsUI(req.Params.Capabilities)
}

type legacyUIKey struct{}

// withLegacyUI marks ctx as a legacy request whose client declared MCP Apps in initialize.
func withLegacyUI(ctx context.Context) context.Context {
	return context.WithValue(ctx, legacyUIKey{}, true)
}

// legacyUI reports whether withLegacyUI marked ctx.
func legacyUI(ctx context.Context) bool {
	v, _ := ctx.Value(legacyUIKey{}).(bool)
	return v
}

type responseWriterKey struct{}

// issueUISession makes the response to r carry a fresh UI session id (r must come through
// Handler.ServeHTTP).
func issueUISession(r *http.Request) {
	if rw, ok := r.Context().Value(responseWriterKey{}).(*responseWriter); ok {
		rw.sessionID = newUISessionID()
	}
}
