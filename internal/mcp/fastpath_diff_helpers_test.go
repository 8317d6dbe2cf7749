package mcp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/mcp"
)

// The differential test's machinery: two handlers built from the same options, one with the
// fast path off (Options.EngineOnly: go-sdk answers everything) and one with it on, sent the
// same requests; their answers must be the same: HTTP status, headers (but Date and, where
// chunking differs, Content-Length), and body. Bodies are compared as JSON (key order aside),
// SSE streams event by event; the JSON-RPC id of every answer must be the request's bytes
// exactly. What differs between two runs of the same request by nature is normalized first,
// on both sides alike (normalizer): correlation ids of internal errors (random per request),
// the UI session id, and, where a test writes to its store, what the writes generate.

// pair is the two handlers.
type pair struct{ engine, fast http.Handler }

func newPair(t testing.TB, build func(adjust func(*mcp.Options)) http.Handler) pair {
	t.Helper()
	return pair{
		engine: build(func(o *mcp.Options) { o.EngineOnly = true }),
		fast:   build(func(o *mcp.Options) { o.EngineOnly = false }),
	}
}

func optionsPair(t testing.TB, opts mcp.Options) pair {
	return newPair(t, func(adjust func(*mcp.Options)) http.Handler {
		o := opts
		adjust(&o)
		h, err := mcp.NewHandler(o)
		if err != nil {
			t.Fatalf("NewHandler: %v", err)
		}
		return h
	})
}

// wireReq is one request as sent: method, path, headers in order, body.
type wireReq struct {
	Method string
	Path   string
	Header [][2]string
	Body   string
}

func (w wireReq) String() string {
	b := w.Body
	if len(b) > 300 {
		b = b[:300] + "…"
	}
	return fmt.Sprintf("%s %s %v %s", w.Method, w.Path, w.Header, b)
}

// mcpReq is a POST /mcp with the standard headers plus extra (name, value pairs; an empty value
// removes the header).
func mcpReq(token, body string, extra ...string) wireReq {
	hd := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	if token != "" {
		hd["Authorization"] = "Bearer " + token
	}
	for i := 0; i+1 < len(extra); i += 2 {
		hd[extra[i]] = extra[i+1]
	}
	r := wireReq{Method: http.MethodPost, Path: "/mcp", Body: body}
	for _, k := range slices.Sorted(mapsKeys(hd)) {
		if hd[k] != "" {
			r.Header = append(r.Header, [2]string{k, hd[k]})
		}
	}
	return r
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// answer is one response as recorded.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func serve(h http.Handler, r wireReq) answer {
	req := httptest.NewRequest(r.Method, "http://127.0.0.1"+r.Path, strings.NewReader(r.Body))
	for _, kv := range r.Header {
		if strings.EqualFold(kv[0], "Host") {
			req.Host = kv[1]
			continue
		}
		req.Header.Add(kv[0], kv[1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	body, _ := io.ReadAll(res.Body)
	return answer{status: res.StatusCode, header: res.Header, body: body}
}

// normalizer rewrites what differs between two runs of one request by nature.
type normalizer func(string) string

var (
	correlationRe = regexp.MustCompile(`correlation id [A-Za-z0-9_-]+`)
	uuidRe        = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timeRe        = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	clockRe       = regexp.MustCompile(`\b\d\d:\d\d\b`)
	codeRe        = regexp.MustCompile(`\b\d{4,8}\b`)
	pickupRe      = regexp.MustCompile(`\b[0-9A-Z]{3}-[0-9A-Z]{3}\b`)
)

// baseNormalize: the correlation id of an internal error is random per request.
func baseNormalize(s string) string { return correlationRe.ReplaceAllString(s, "correlation id <id>") }

// writeNormalize is for answers of writes to two stores that started equal: the ids the
// database generates, the times of now() and the pick-up codes drawn at random differ.
func writeNormalize(s string) string {
	s = baseNormalize(s)
	s = uuidRe.ReplaceAllString(s, "<uuid>")
	s = timeRe.ReplaceAllString(s, "<time>")
	s = clockRe.ReplaceAllString(s, "<hh:mm>")
	s = pickupRe.ReplaceAllString(s, "<pickup>")
	return codeRe.ReplaceAllString(s, "<code>")
}

// sameAnswer compares what engine and fast answered to r; "" when they agree.
func sameAnswer(r wireReq, a, b answer, norm normalizer) string {
	if norm == nil {
		norm = baseNormalize
	}
	var diffs []string
	if a.status != b.status {
		diffs = append(diffs, fmt.Sprintf("status %d (engine) vs %d (fast path)", a.status, b.status))
	}
	if d := headerDiff(a.header, b.header); d != "" {
		diffs = append(diffs, d)
	}
	ea, errA := frames(a)
	eb, errB := frames(b)
	switch {
	case errA != nil || errB != nil:
		if !bytes.Equal(a.body, b.body) {
			diffs = append(diffs, fmt.Sprintf("bodies differ:\n engine: %q\n   fast: %q", a.body, b.body))
		}
	default:
		if d := framesDiff(ea, eb, norm); d != "" {
			diffs = append(diffs, d)
		}
		if id := requestID(r.Body); id != nil {
			for _, f := range append(slices.Clone(ea), eb...) {
				if f.rawID != nil && !bytes.Equal(f.rawID, id) {
					diffs = append(diffs, fmt.Sprintf("answer id %s, request id %s", f.rawID, id))
				}
			}
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	return fmt.Sprintf("%s\n  %s\n engine: %d %v %s\n   fast: %d %v %s", r, strings.Join(diffs, "\n  "),
		a.status, a.header, clip(a.body), b.status, b.header, clip(b.body))
}

func clip(b []byte) string {
	if len(b) > 1500 {
		return string(b[:1500]) + "…"
	}
	return string(b)
}

// headerDiff compares headers but Date. The UI session id is random: only its presence counts.
// Transfer-Encoding is framing, not a header a client sees: the fast path declares the chunked
// encoding that the engine gets by flushing (writeSSE), and net/http turns both into the same
// bytes on the wire, which TestFastPathWireBytes compares over a real connection.
func headerDiff(a, b http.Header) string {
	var out []string
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	}) {
		if k == "Date" || k == "Transfer-Encoding" {
			continue
		}
		va, vb := a.Values(k), b.Values(k)
		if k == "Mcp-Session-Id" && len(va) == len(vb) {
			continue
		}
		if !slices.Equal(va, vb) {
			out = append(out, fmt.Sprintf("header %s: %q (engine) vs %q (fast path)", k, va, vb))
		}
	}
	return strings.Join(out, "\n  ")
}

// frame is one SSE event, or the whole body of a JSON answer (name "").
type frame struct {
	name, eventID string
	data          any
	rawID         json.RawMessage // the JSON-RPC id's bytes, nil if none
}

func frames(a answer) ([]frame, error) {
	if len(bytes.TrimSpace(a.body)) == 0 {
		return nil, nil
	}
	if !strings.HasPrefix(a.header.Get("Content-Type"), "text/event-stream") {
		f, err := jsonFrame("", "", a.body)
		if err != nil {
			return nil, err
		}
		return []frame{f}, nil
	}
	var out []frame
	sc := bufio.NewScanner(bytes.NewReader(a.body))
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	var name, id string
	var data []byte
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if name != "" || data != nil {
				f, err := jsonFrame(name, id, data)
				if err != nil {
					return nil, err
				}
				out = append(out, f)
			}
			name, id, data = "", "", nil
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: ")...)
		default:
			data = append(data, line...)
		}
	}
	return out, sc.Err()
}

func jsonFrame(name, id string, data []byte) (frame, error) {
	f := frame{name: name, eventID: id}
	if len(data) == 0 {
		return f, nil
	}
	if err := json.Unmarshal(data, &f.data); err != nil {
		return f, err
	}
	f.rawID = requestID(string(data))
	return f, nil
}

// requestID returns the raw bytes of a JSON object's top-level "id", nil without one.
func requestID(body string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(body), &m) != nil {
		return nil
	}
	id, ok := m["id"]
	if !ok {
		return nil
	}
	return bytes.TrimSpace(id)
}

func framesDiff(a, b []frame, norm normalizer) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d frames (engine) vs %d (fast path)", len(a), len(b))
	}
	for i := range a {
		if a[i].name != b[i].name || (a[i].eventID == "") != (b[i].eventID == "") {
			return fmt.Sprintf("frame %d: event %q id %q (engine) vs %q %q (fast path)", i, a[i].name, a[i].eventID, b[i].name, b[i].eventID)
		}
		na, nb := normalizeValue(a[i].data, norm), normalizeValue(b[i].data, norm)
		if !reflect.DeepEqual(na, nb) {
			ja, _ := json.Marshal(na)
			jb, _ := json.Marshal(nb)
			return fmt.Sprintf("frame %d differs:\n engine: %s\n   fast: %s", i, clip(ja), clip(jb))
		}
	}
	return ""
}

// normalizeValue applies norm to every string of a decoded JSON value, and drops the values of
// requestState (sealed with a random nonce) and correlationId (random per request): only their
// presence counts.
func normalizeValue(v any, norm normalizer) any {
	switch x := v.(type) {
	case string:
		return norm(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeValue(e, norm)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k == "requestState" || k == "correlationId" {
				out[k] = "<random>"
				continue
			}
			out[k] = normalizeValue(e, norm)
		}
		return out
	}
	return v
}

// check sends r to both handlers and reports any difference.
func (p pair) check(t testing.TB, r wireReq, norm normalizer) bool {
	t.Helper()
	a, b := serve(p.engine, r), serve(p.fast, r)
	if d := sameAnswer(r, a, b, norm); d != "" {
		t.Errorf("engine and fast path differ on %s", d)
		return false
	}
	return true
}
