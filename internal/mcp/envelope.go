package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/neemias/neemias-mcp/internal/httpx"
	"github.com/neemias/neemias-mcp/internal/jsonscan"
)

// Protocol versions this server speaks, newest first.
const (
	// VersionModern is the stateless revision.
	VersionModern = "2026-07-28"
	// VersionLegacy is the newest initialize-based revision; VersionLegacyOld the oldest served.
	VersionLegacy    = "2025-11-25"
	VersionLegacyOld = "2025-06-18"
)

// SupportedVersions lists every version served, newest first.
var SupportedVersions = []string{VersionModern, VersionLegacy, VersionLegacyOld}

// JSON-RPC error codes of 2026-07-28 (basic/index "Error codes").
const (
	CodeHeaderMismatch                    = -32020
	CodeMissingRequiredClientCapabilities = -32021
	CodeUnsupportedProtocolVersion        = -32022
	// CodeResourceNotFoundLegacy is the legacy (<= 2025-11-25) resource-not-found code; modern
	// uses -32602.
	CodeResourceNotFoundLegacy = -32002
)

const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
)

// envelope is the part of a JSON-RPC request the runtime inspects before the SDK does.
type envelope struct {
	id             json.RawMessage // nil for notifications
	method         string
	name           string // params.name (tools/call, prompts/get)
	uri            string // params.uri (resources/read)
	metaVersion    string // params._meta[protocolVersion], "" if absent
	metaPresent    bool   // the protocolVersion key is present (whatever its type)
	isNotification bool
	// traceparent and tracestate are the W3C trace context of params._meta (2026-07-28's
	// un-prefixed keys), "" if absent or not strings; the Observe hook validates them.
	traceparent, tracestate string
	// clientCaps is params._meta's client capabilities (2026-07-28), raw; nil if absent.
	clientCaps json.RawMessage
	// params and meta are the members of params and of params._meta, raw; nil when absent
	// or null. The fast path reads them instead of decoding the body again.
	params, meta map[string]json.RawMessage
	// read and readVars are, for a resources/read, the resource its URI matched and the
	// template's values: serveMCP matches once, for the scope check, and the fast path reads
	// with that match instead of matching the URI again.
	read     *entry
	readVars map[string]string
}

// parseEnvelope checks that body (already through httpx.CheckJSON) is a single JSON-RPC 2.0
// request or notification and extracts what routing needs. Keys are compared exactly: the JSON
// check already refused case variants, so "Method" cannot shadow "method".
func parseEnvelope(body []byte) (*envelope, *httpx.RPCError) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		return nil, &httpx.RPCError{Code: httpx.CodeInvalidRequest, Message: "JSON-RPC batches are not supported"}
	}
	raw, err := objectMembers(body)
	if err != nil {
		return nil, &httpx.RPCError{Code: httpx.CodeInvalidRequest, Message: "the body must be a JSON-RPC request object"}
	}
	if !allRequestMembers(raw) {
		for _, k := range slices.Sorted(maps.Keys(raw)) { // in key order: one answer for one body
			if !slices.Contains(requestMembers, k) {
				if k == "result" || k == "error" {
					return nil, &httpx.RPCError{Code: httpx.CodeInvalidRequest, Message: "this server sends no requests, so it accepts no JSON-RPC responses"}
				}
				return nil, &httpx.RPCError{Code: httpx.CodeInvalidRequest, Message: fmt.Sprintf("unexpected member %q in JSON-RPC request", k)}
			}
		}
	}
	if string(raw["jsonrpc"]) != `"2.0"` {
		return nil, &httpx.RPCError{Code: httpx.CodeInvalidRequest, Message: `"jsonrpc" must be "2.0"`}
	}
	e := &envelope{}
	if err := unmarshalString(raw["method"], &e.method); err != nil || e.method == "" {
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
		params, err := objectMembers(p)
		if err != nil {
			return e, &httpx.RPCError{Code: httpx.CodeInvalidParams, Message: `"params" must be an object`}
		}
		e.params = params
		_ = unmarshalString(params["name"], &e.name)
		_ = unmarshalString(params["uri"], &e.uri)
		if m, ok := params["_meta"]; ok {
			meta, err := objectMembers(m)
			if err != nil {
				return e, &httpx.RPCError{Code: httpx.CodeInvalidParams, Message: `"_meta" must be an object`}
			}
			e.meta = meta
			_ = json.Unmarshal(meta["traceparent"], &e.traceparent)
			_ = json.Unmarshal(meta["tracestate"], &e.tracestate)
			e.clientCaps = meta[metaClientCapabilities]
			if v, ok := meta[metaProtocolVersion]; ok {
				e.metaPresent = true
				if err := unmarshalString(v, &e.metaVersion); err != nil || e.metaVersion == "" {
					return e, &httpx.RPCError{Code: httpx.CodeInvalidParams, Message: fmt.Sprintf("_meta %q must be a non-empty string", metaProtocolVersion)}
				}
			}
		}
	}
	return e, nil
}

// requestMembers are the members a JSON-RPC request may have.
var requestMembers = []string{"jsonrpc", "id", "method", "params"}

func allRequestMembers(raw map[string]json.RawMessage) bool {
	for k := range raw {
		if !slices.Contains(requestMembers, k) {
			return false
		}
	}
	return true
}

// unmarshalString is json.Unmarshal(b, s) for a string: a plain one (no escape, valid UTF-8,
// every method, tool name and URI of a client) is taken as written; anything else, and every
// error, is json.Unmarshal's.
func unmarshalString(b []byte, s *string) error {
	if len(b) > 1 && b[0] == '"' {
		if end, plain, ok := jsonscan.String(b, 0); ok && plain && end == len(b) {
			*s = string(b[1 : len(b)-1])
			return nil
		}
	}
	return json.Unmarshal(b, s)
}

// objectMembers is the members of the JSON object b by key, their values aliasing b: what
// json.Unmarshal into a map[string]json.RawMessage gives (null is a nil map), in one pass
// over bytes CheckJSON has already accepted, instead of that call's validation pass, decode
// and copies (TestParseEnvelopeMatchesUnmarshal).
func objectMembers(b []byte) (map[string]json.RawMessage, error) {
	if string(bytes.TrimSpace(b)) == "null" {
		return nil, nil
	}
	m := make(map[string]json.RawMessage, 4)
	err := jsonscan.Members(b, func(k string, v []byte) bool {
		m[k] = v
		return true
	})
	return m, err
}

// validID reports whether a raw JSON id is a string of sane length or an integer (never null,
// a float, an object or an array).
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	switch raw[0] {
	case '"':
		var s string
		return json.Unmarshal(raw, &s) == nil && len(s) <= 256
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		s := string(raw)
		if strings.ContainsAny(s, ".eE") || len(s) > 20 {
			return false
		}
		var n int64
		return json.Unmarshal(raw, &n) == nil
	}
	return false
}

// era is how a request is served.
type era int

const (
	eraLegacy era = iota
	eraModern
)

// classify picks the era of a request and reports the spec's error when its version headers
// are unacceptable (always HTTP 400). header is the MCP-Protocol-Version header.
func classify(e *envelope, header string) (era, *httpx.RPCError) {
	if e.method == "initialize" {
		return eraLegacy, nil // legacy clients send no version header on initialize
	}
	if e.metaPresent || header >= VersionModern {
		if header == "" {
			return eraModern, &httpx.RPCError{Code: CodeHeaderMismatch, Message: "the MCP-Protocol-Version header is required"}
		}
		if !e.metaPresent {
			if header != VersionModern {
				return eraModern, unsupportedVersion(header)
			}
			return eraModern, &httpx.RPCError{Code: httpx.CodeInvalidParams, Message: fmt.Sprintf("missing required _meta field %q", metaProtocolVersion)}
		}
		if e.metaVersion != header && slices.Contains(SupportedVersions, header) {
			return eraModern, &httpx.RPCError{Code: CodeHeaderMismatch, Message: fmt.Sprintf("MCP-Protocol-Version header %q does not match _meta %q %q", header, metaProtocolVersion, e.metaVersion)}
		}
		if header != VersionModern {
			return eraModern, unsupportedVersion(header)
		}
		if e.metaVersion != header {
			return eraModern, unsupportedVersion(e.metaVersion)
		}
		return eraModern, nil
	}
	switch header {
	case VersionLegacy, VersionLegacyOld:
		return eraLegacy, nil
	case "":
		return eraLegacy, &httpx.RPCError{Code: CodeUnsupportedProtocolVersion,
			Message: "the MCP-Protocol-Version header is required (call initialize first, or use protocol version " + VersionModern + ")",
			Data:    versionData("")}
	}
	return eraLegacy, unsupportedVersion(header)
}

func unsupportedVersion(requested string) *httpx.RPCError {
	return &httpx.RPCError{Code: CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version", Data: versionData(requested)}
}

func versionData(requested string) map[string]any {
	d := map[string]any{"supported": SupportedVersions}
	if requested != "" {
		d["requested"] = requested
	}
	return d
}
