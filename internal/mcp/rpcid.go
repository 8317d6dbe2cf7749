package mcp

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/neemias/neemias-mcp/internal/httpx"
)

// JSON-RPC 2.0 says a response carries the id of its request; a client matches them by it.
// The go-sdk decodes an id into a float64 and writes it back as an int64 (jsonrpc2.MakeID), so
// an integer beyond 2^53 came back another number (9007199254740993 as 9007199254740992), and
// a string id came back re-encoded (its escapes rewritten). So the edge hides the id from the
// SDK: before the SDK reads the body, the request's id is replaced by a string token only this
// request knows (random, one per request: the endpoint is stateless, one JSON-RPC request per
// HTTP exchange), and the response's token is replaced by the id's bytes exactly as the client
// sent them. Both eras take this path (serveMCP); the answers written before the SDK runs
// already echo the raw id (httpx.WriteRPCError).

// idTokenPrefix starts every token: letters, digits and '-' only, so JSON never escapes it.
const idTokenPrefix = "neemias-rpc-id-"

// hideID returns body with its top-level "id" value replaced by a fresh token, and a writer
// over w that writes the original id back wherever the SDK writes the token. Without an id
// (a notification) body and w are returned unchanged.
func hideID(w http.ResponseWriter, body []byte) ([]byte, http.ResponseWriter, error) {
	start, end, ok, err := idSpan(body)
	if err != nil || !ok {
		return body, w, err
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return nil, nil, err
	}
	token := []byte(`"` + idTokenPrefix + hex.EncodeToString(b) + `"`)
	out := make([]byte, 0, len(body)-(end-start)+len(token))
	out = append(append(append(out, body[:start]...), token...), body[end:]...)
	orig := bytes.Clone(body[start:end])
	return out, &idWriter{ResponseWriter: w, token: token, orig: orig}, nil
}

// idSpan finds the bytes of the top-level "id" member's value in body, a JSON object already
// through httpx.CheckJSON (no duplicate keys). ok is false when there is no id.
func idSpan(body []byte) (start, end int, ok bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, 0, false, errors.New("mcp: the body is not a JSON object")
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return 0, 0, false, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return 0, 0, false, err
		}
		if key == "id" {
			end := int(dec.InputOffset())
			return end - len(v), end, true, nil
		}
	}
	return 0, 0, false, nil
}

// idWriter writes the request's id back in place of its token. The SDK writes each SSE event
// (and each JSON body) in one Write (go-sdk mcp/event.go writeEvent), so a token is never split
// across two; the wire tests pin it (wire_rpcid_test.go).
type idWriter struct {
	http.ResponseWriter
	token, orig []byte
}

func (w *idWriter) WriteHeader(status int) {
	w.Header().Del("Content-Length") // the id's length may differ from the token's
	w.ResponseWriter.WriteHeader(status)
}

func (w *idWriter) Write(b []byte) (int, error) {
	if !bytes.Contains(b, w.token) {
		return w.ResponseWriter.Write(b)
	}
	if _, err := w.ResponseWriter.Write(bytes.ReplaceAll(b, w.token, w.orig)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Flush supports SSE streaming.
func (w *idWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *idWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// requestID reads the JSON-RPC id of a request the edge answers before the engine runs (a 503
// while the identity provider is unreachable, say), so that the error carries it: the body
// is read (bounded, and checked like the engine's input), nil when there is no readable id.
func requestID(r *http.Request, maxBytes int64, maxDepth int) json.RawMessage {
	if r.Body == nil || r.ContentLength > maxBytes {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBytes+1))
	if err != nil || int64(len(body)) > maxBytes || httpx.CheckJSON(body, maxDepth) != nil {
		return nil
	}
	start, end, ok, err := idSpan(body)
	if err != nil || !ok {
		return nil
	}
	id := json.RawMessage(body[start:end])
	if string(id) == "null" {
		return nil
	}
	return bytes.Clone(id)
}
