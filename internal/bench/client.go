package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Client sends the bench's requests: raw net/http with pre-built bodies, no SDK, so the
// measurement is the server's and not a client library's.
type Client struct {
	HTTP *http.Client
	// Floor, FloorAudit and Server are the base URLs of the three processes' listeners.
	Floor, FloorAudit, Server string
	Token                     string
	Fix                       *Fixture
}

// NewHTTPClient is a keep-alive client with a connection per closed-loop client and no
// transparent gzip (the servers do not compress; asking would only add a header).
func NewHTTPClient(clients int) *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			MaxIdleConns: 4 * clients, MaxIdleConnsPerHost: 2 * clients, MaxConnsPerHost: 0,
			IdleConnTimeout: time.Minute, DisableCompression: true,
		},
	}
}

// request is one prepared request: everything but the body is fixed per run.
type request struct {
	method, url string
	header      http.Header
	body        func(seq int) []byte // nil for GET
	mcp         bool                 // the answer is a JSON-RPC response (maybe as SSE)
	tool        bool                 // a tools/call: isError counts as a failure
}

// Prepare returns the DoFunc of op on target, or false when the target has no such op.
// minBytes is the smallest answer accepted (0: any); the probe sets it from a real answer.
func (c *Client) Prepare(target, op string) (*request, bool) {
	if !hasOp(target, op) {
		return nil, false
	}
	switch target {
	case TargetFloor, TargetFloorAudit:
		base := c.Floor
		if target == TargetFloorAudit {
			base = c.FloorAudit
		}
		return c.plain(base, "", op), true
	case TargetREST:
		return c.plain(c.Server+"/api/v1", "/tools/neemias_checkin_register", op), true
	case TargetMCP2026:
		return c.mcp(op, "2026-07-28"), true
	case TargetMCP2025:
		return c.mcp(op, "2025-11-25"), true
	}
	return nil, false
}

// plain is a floor or REST request: the same paths below base; the check-in is POSTed to
// checkinPath ("" for the floor's /checkin).
func (c *Client) plain(base, checkinPath, op string) *request {
	f := c.Fix
	h := http.Header{"Accept": {"application/json"}}
	if checkinPath != "" {
		h.Set("Authorization", "Bearer "+c.Token)
	} else {
		checkinPath = "/checkin"
	}
	r := &request{method: http.MethodGet, header: h}
	switch op {
	case OpCheckins:
		r.url = base + "/checkins/" + f.BusiestDay.Format(time.DateOnly) + wholeDay
	case OpRosterChild:
		r.url = base + "/roster/children/" + f.Child.String()
	case OpAttendance:
		r.url = base + "/attendance/summary?from=" + f.MonthFrom.Format(time.DateOnly) + "&to=" + f.MonthTo.Format(time.DateOnly)
	case OpCheckin:
		r.method, r.url = http.MethodPost, base+checkinPath
		h.Set("Content-Type", "application/json")
		r.body = func(seq int) []byte {
			child, day := f.CheckinPair(seq)
			return fmt.Appendf(nil, `{"child_id":%q,"service_date":%q}`, child, day.Format(time.DateOnly))
		}
	}
	return r
}

// wholeDay asks for the busiest day's check-ins in one page (the read pages by 200 by default),
// the same rows the floor answers, so the targets are compared on the same work.
const wholeDay = "?limit=5000"

// mcp is a JSON-RPC request of protocol version v on /mcp. 2026-07-28 carries the version and
// client capabilities in params._meta and the Mcp-Method / Mcp-Name headers; 2025-11-25 is
// sent without a prior initialize, as the server is stateless (each request stands alone).
func (c *Client) mcp(op, v string) *request {
	f := c.Fix
	modern := v == "2026-07-28"
	h := http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Authorization":        {"Bearer " + c.Token},
		"Mcp-Protocol-Version": {v},
	}
	r := &request{method: http.MethodPost, url: c.Server + "/mcp", header: h, mcp: true}
	method, name := "resources/read", ""
	params := map[string]any{}
	switch op {
	case OpCheckins:
		name = "neemias://checkins/" + f.BusiestDay.Format(time.DateOnly) + wholeDay
	case OpRosterChild:
		name = "neemias://roster/children/" + f.Child.String()
	case OpAttendance:
		name = "neemias://attendance/summary?from=" + f.MonthFrom.Format(time.DateOnly) + "&to=" + f.MonthTo.Format(time.DateOnly)
	case OpToolsList:
		method = "tools/list"
	case OpCheckin:
		method, name, r.tool = "tools/call", "neemias_checkin_register", true
	case OpCheckinsTool:
		method, name, r.tool = "tools/call", "neemias_checkins_by_date", true
		params["name"] = name
		params["arguments"] = map[string]any{"date": f.BusiestDay.Format(time.DateOnly), "limit": 5000}
	}
	if method == "resources/read" {
		params["uri"] = name
	}
	if modern {
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    v,
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}
		h.Set("Mcp-Method", method)
		if name != "" {
			h.Set("Mcp-Name", name)
		}
	}
	if method != "tools/call" || op == OpCheckinsTool {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		r.body = func(int) []byte { return b }
		return r
	}
	params["name"] = name
	r.body = func(seq int) []byte {
		child, day := f.CheckinPair(seq)
		params := map[string]any{"name": name, "_meta": params["_meta"],
			"arguments": map[string]string{"child_id": child.String(), "service_date": day.Format(time.DateOnly)}}
		if !modern {
			delete(params, "_meta")
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": seq + 1, "method": method, "params": params})
		return b
	}
	return r
}

// answer is a response, fully read.
type answer struct {
	status      int
	contentType string
	body        []byte
}

func (c *Client) send(ctx context.Context, r *request, seq int) (answer, error) {
	return c.sendInto(ctx, r, seq, nil)
}

// answerBuffers are the measured loop's answer buffers: every target's answer is read into a
// buffer already grown to its size, not into one io.ReadAll grows from 512 bytes each time.
var answerBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// sendInto is send reading the answer into buf (nil: a new slice). The answer's body is buf's
// until buf is reset.
func (c *Client) sendInto(ctx context.Context, r *request, seq int, buf *bytes.Buffer) (answer, error) {
	var rd io.Reader
	if r.body != nil {
		rd = bytes.NewReader(r.body(seq))
	}
	req, err := http.NewRequestWithContext(ctx, r.method, r.url, rd)
	if err != nil {
		return answer{}, fmt.Errorf("building the request: %w", err)
	}
	req.Header = r.header.Clone()
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	var body []byte
	if buf != nil {
		buf.Reset()
		_, err = buf.ReadFrom(resp.Body)
		body = buf.Bytes()
	} else {
		body, err = io.ReadAll(resp.Body)
	}
	if err != nil {
		return answer{}, fmt.Errorf("reading the answer: %w", err)
	}
	return answer{resp.StatusCode, resp.Header.Get("Content-Type"), body}, nil
}

// quickCheck is the per-request check of the measured loop: status 200, at least minBytes,
// and for MCP a JSON-RPC result (the first bytes hold `"result"`, not `"error"`; a tool
// call's isError is looked for anywhere). Cheap on purpose: the load generator shares the
// machine's two cores with the server, and a full parse of a 69 KB answer would tax the MCP
// targets more than the others. [Client.Probe] checks one answer of each cell fully.
func quickCheck(r *request, a answer, minBytes int) error {
	if a.status != http.StatusOK {
		return fmt.Errorf("HTTP %d: %.200s", a.status, a.body)
	}
	if len(a.body) < minBytes {
		return fmt.Errorf("answer of %d bytes, expected at least %d", len(a.body), minBytes)
	}
	if !r.mcp {
		return nil
	}
	payload, err := JSONRPCPayload(a.contentType, a.body)
	if err != nil {
		return err
	}
	head := payload[:min(len(payload), 64)]
	if !bytes.Contains(head, []byte(`"result"`)) || bytes.Contains(head, []byte(`"error"`)) {
		return fmt.Errorf("not a JSON-RPC result: %.200s", payload)
	}
	if r.tool && bytes.Contains(payload, []byte(`"isError":true`)) {
		return fmt.Errorf("tool error: %.300s", payload)
	}
	return nil
}

// Do returns the measured loop's DoFunc for r.
func (c *Client) Do(r *request, minBytes int) DoFunc {
	return func(ctx context.Context, seq int) error {
		buf := answerBuffers.Get().(*bytes.Buffer)
		defer answerBuffers.Put(buf)
		a, err := c.sendInto(ctx, r, seq, buf)
		if err != nil {
			return err
		}
		return quickCheck(r, a, minBytes)
	}
}

// Probe sends r once (as request seq) and checks the answer fully: status, a JSON body, for
// MCP a JSON-RPC result without error or isError. It returns the answer's size, from which the
// measured loop's minimum is set.
func (c *Client) Probe(ctx context.Context, r *request, seq int) (int, error) {
	a, err := c.send(ctx, r, seq)
	if err != nil {
		return 0, err
	}
	if a.status != http.StatusOK {
		return 0, fmt.Errorf("HTTP %d: %.300s", a.status, a.body)
	}
	payload := a.body
	if r.mcp {
		if payload, err = JSONRPCPayload(a.contentType, a.body); err != nil {
			return 0, err
		}
		if err := CheckRPC(payload); err != nil {
			return 0, err
		}
	}
	if !json.Valid(payload) {
		return 0, fmt.Errorf("answer is not JSON: %.200s", payload)
	}
	return len(a.body), nil
}
