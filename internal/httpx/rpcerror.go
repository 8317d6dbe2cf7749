package httpx

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// JSON-RPC 2.0 error codes used before a request reaches the protocol engine.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

type rpcErrorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Error   RPCError        `json:"error"`
}

// WriteRPCError writes a JSON-RPC error response with HTTP status. id is the raw request id, or
// nil when it is unknown (the member is then omitted, as the SDKs do for pre-parse failures).
// The id goes back byte for byte: no HTML escaping, which would rewrite a string id holding
// "<", ">" or "&" (a client matches the response by the id it sent).
func WriteRPCError(w http.ResponseWriter, status int, id json.RawMessage, e RPCError) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	body := []byte(`{"jsonrpc":"2.0","error":{"code":-32603,"message":"internal error"}}`)
	if err := enc.Encode(rpcErrorResponse{JSONRPC: "2.0", ID: id, Error: e}); err == nil { // it cannot fail for these types; keep the status anyway
		body = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Del("Content-Length")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
