package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fast path's encoding: a result is appended, SSE frame and all, into one pooled buffer
// and written with one Write, so a busy Sunday's 70 KB answer costs no allocation of its size
// (the engine marshals the result, compacts it and copies it into the frame: three). What is
// written is byte for byte what the engine writes; the differential test pins it.

// responseBuffers are the fast path's response buffers. One larger than maxPooledResponse is
// left to the collector rather than kept, so a rare huge answer does not pin its memory.
var responseBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

const maxPooledResponse = 1 << 20

// writeSSE writes the response to a request with id as the engine's stateless streamable
// handler does (go-sdk streamable.go servePOST and writeEvent): its headers, then one
// "message" event holding {"jsonrpc":"2.0","id":…,"result":…}, chunked. The engine flushes
// the event and then ends the response: two writes to the connection. Declaring the chunked
// encoding instead puts the same bytes on the wire in one write when the handler returns
// (net/http drops the header and frames the body itself; HTTP/2 drops it too), which is all a
// stateless answer needs: nothing follows the event. appendResult appends
// the result JSON; when it reports false nothing is written and writeSSE reports false, so the
// caller can hand the request to the engine. The id is the client's own bytes (rpcid.go).
func writeSSE(w http.ResponseWriter, id json.RawMessage, appendResult func([]byte) ([]byte, bool)) bool {
	const head, mid = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":", ",\"result\":"
	bp := responseBuffers.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= maxPooledResponse {
			responseBuffers.Put(bp)
		}
	}()
	buf := append(append(append((*bp)[:0], head...), id...), mid...)
	buf, ok := appendResult(buf)
	*bp = buf[:0]
	if !ok {
		return false
	}
	buf = append(buf, "}\n\n"...)
	*bp = buf[:0]
	hd := w.Header()
	hd.Set("Cache-Control", "no-cache, no-transform")
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Connection", "keep-alive")
	hd.Set("Transfer-Encoding", "chunked")
	_, _ = w.Write(buf)
	return true
}

// appendTool appends the JSON the engine sends for a tool result the toolCall built (go-sdk
// Server.callTool and ServerSession.handle: in 2026-07-28 resultType "complete" and _meta
// serverInfo). false for a result holding anything else than text content.
func (f *fastPath) appendTool(buf []byte, res *sdk.CallToolResult, modern bool) ([]byte, bool) {
	if res == nil || res.InputRequests != nil || res.RequestState != "" {
		return buf, false
	}
	buf = append(buf, '{')
	buf, ok := f.appendMeta(buf, res.Meta, modern)
	if !ok {
		return buf, false
	}
	buf = append(buf, `"content":[`...)
	for i, c := range res.Content {
		tc, ok := c.(*sdk.TextContent)
		if !ok || tc.Meta != nil || tc.Annotations != nil {
			return buf, false
		}
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"type":"text","text":`...)
		buf = appendJSONString(buf, tc.Text)
		buf = append(buf, '}')
	}
	buf = append(buf, ']')
	if res.StructuredContent != nil {
		raw, ok := res.StructuredContent.(json.RawMessage)
		if !ok || len(raw) == 0 {
			return buf, false
		}
		buf = append(buf, `,"structuredContent":`...)
		buf = append(buf, raw...)
	}
	if res.IsError {
		buf = append(buf, `,"isError":true`...)
	}
	if modern {
		buf = append(buf, `,"resultType":"complete"`...)
	}
	return append(buf, '}'), true
}

// appendRead appends the JSON the engine sends for a read result readResult built (go-sdk
// Server.readResource: the cache hints through Options' SetCacheable, then contents' URI and
// MIME type filled in; in 2026-07-28 resultType and _meta serverInfo).
func (f *fastPath) appendRead(ctx context.Context, buf []byte, h *Handler, e *entry, uri string, res *sdk.ReadResourceResult, modern bool) ([]byte, bool) {
	if res == nil || res.InputRequests != nil || res.RequestState != "" || res.Contents == nil {
		return buf, false
	}
	c := res.Cacheable
	h.setCacheable(ctx, &sdk.ReadResourceRequest{Params: &sdk.ReadResourceParams{URI: uri}}, &c)
	if c.CacheScope == "" {
		c.CacheScope = "public" // Cacheable.normalize
	}
	buf = append(buf, '{')
	buf, ok := f.appendMeta(buf, res.Meta, modern)
	if !ok {
		return buf, false
	}
	buf = append(buf, `"ttlMs":`...)
	buf = strconv.AppendInt(buf, int64(c.TTLMs), 10)
	buf = append(buf, `,"cacheScope":`...)
	buf = appendJSONString(buf, c.CacheScope)
	buf = append(buf, `,"contents":[`...)
	for i, rc := range res.Contents {
		if rc == nil || rc.Blob != nil || rc.Meta != nil {
			return buf, false
		}
		u, mt := rc.URI, rc.MIMEType
		if u == "" {
			u = uri
		}
		if mt == "" {
			mt = e.mimeType()
		}
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"uri":`...)
		buf = appendJSONString(buf, u)
		if mt != "" {
			buf = append(buf, `,"mimeType":`...)
			buf = appendJSONString(buf, mt)
		}
		if rc.Text != "" {
			buf = append(buf, `,"text":`...)
			buf = appendJSONString(buf, rc.Text)
		}
		buf = append(buf, '}')
	}
	buf = append(buf, ']')
	if modern {
		buf = append(buf, `,"resultType":"complete"`...)
	}
	return append(buf, '}'), true
}

// appendMeta appends the result's "_meta" member and a comma, if it has one: meta as it is,
// plus serverInfo in 2026-07-28 (go-sdk annotateServerInfo, which keeps a serverInfo already
// there).
func (f *fastPath) appendMeta(buf []byte, meta sdk.Meta, modern bool) ([]byte, bool) {
	if len(meta) == 0 && !modern {
		return buf, true
	}
	buf = append(buf, `"_meta":`...)
	if len(meta) == 0 {
		buf = append(buf, f.serverInfo...)
	} else {
		m := make(map[string]any, len(meta)+1)
		for k, v := range meta {
			m[k] = v
		}
		if _, ok := m[sdk.MetaKeyServerInfo]; !ok && modern {
			m[sdk.MetaKeyServerInfo] = f.impl
		}
		b, err := json.Marshal(m)
		if err != nil {
			return buf, false
		}
		buf = append(buf, b...)
	}
	return append(buf, ','), true
}

// jsonSafe marks the ASCII bytes encoding/json writes as they are in a string: printable, but
// not the quote, the backslash or the HTML characters.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// appendJSONString appends s as a JSON string exactly as encoding/json writes a string (the
// SDK's result encoding): `"` and `\` escaped, control characters as \b \f \n \r \t or \u00XX,
// the HTML characters < > & as \u003c \u003e \u0026, U+2028 and U+2029 escaped, invalid UTF-8
// as \ufffd. FuzzAppendJSONString pins it against json.Marshal. Written out because
// json.Encoder spent an encoder, a growing scratch buffer and a copy on every 70 KB text.
func appendJSONString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if jsonSafe[b] {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch b {
			case '"', '\\':
				buf = append(buf, '\\', b)
			case '\b':
				buf = append(buf, '\\', 'b')
			case '\f':
				buf = append(buf, '\\', 'f')
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			buf = append(buf, s[start:i]...)
			buf = append(buf, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}
