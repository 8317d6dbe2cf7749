package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// rpcResponse is the part of a JSON-RPC response the bench checks.
type rpcResponse struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// JSONRPCPayload returns the JSON-RPC response in an MCP answer body: the body itself for
// application/json, or the last `data:` event of a text/event-stream (notifications may come
// first; the response ends the stream). Multi-line data fields are joined with "\n" as the
// SSE specification says.
func JSONRPCPayload(contentType string, body []byte) ([]byte, error) {
	if !strings.HasPrefix(contentType, "text/event-stream") {
		return body, nil
	}
	// Lines are cut from body in place, as bufio.ScanLines cuts them ("\n" or "\r\n"), and an
	// event of one data line, every answer of ours, is a slice of body: this runs on every
	// measured request, on the cores the server is measured on, and a scanner's buffer and a
	// copy of a 47 KB event cost the MCP targets work REST's check does not do.
	var (
		last, cur []byte
		inEvent   bool
		joined    bool // cur is a copy holding several data lines
	)
	for rest := body; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case len(line) == 0: // end of an event
			if inEvent {
				last = cur
			}
			cur, inEvent, joined = nil, false, false
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(line[5:], []byte(" "))
			switch {
			case !inEvent:
				cur = v
			case !joined:
				cur = append(append(append([]byte(nil), cur...), '\n'), v...)
				joined = true
			default:
				cur = append(append(cur, '\n'), v...)
			}
			inEvent = true
		}
	}
	if inEvent { // a stream that ends without the blank line still delivered its event
		last = cur
	}
	if last == nil {
		return nil, errors.New("event stream without a data event")
	}
	return last, nil
}

// CheckRPC reports whether payload is a successful JSON-RPC response: a result, no error,
// and for a tool call no isError.
func CheckRPC(payload []byte) error {
	var r rpcResponse
	if err := json.Unmarshal(payload, &r); err != nil {
		return fmt.Errorf("not a JSON-RPC response: %w", err)
	}
	if r.Error != nil {
		return fmt.Errorf("JSON-RPC error %d: %s", r.Error.Code, r.Error.Message)
	}
	if len(r.Result) == 0 {
		return errors.New("JSON-RPC response without result")
	}
	var tool struct {
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(r.Result, &tool); err == nil && tool.IsError {
		return fmt.Errorf("tool error: %.200s", r.Result)
	}
	return nil
}
