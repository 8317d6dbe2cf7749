package bench

import (
	"bufio"
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
	var (
		last, cur []byte
		inEvent   bool
	)
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0: // end of an event
			if inEvent {
				last = cur
			}
			cur, inEvent = nil, false
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(line[5:], []byte(" "))
			if inEvent {
				cur = append(cur, '\n')
			}
			cur = append(cur, v...)
			inEvent = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the event stream: %w", err)
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
