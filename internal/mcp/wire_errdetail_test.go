package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/neemias/neemias-mcp/internal/errs"
)

// detailLabels is an error detail as the logic writes it: the labels an ambiguous name matched,
// which the caller may see and a log line must never carry.
const detailLabels = "Ana So. (K7Q2MX), Ana Si. (P3X9AB)"

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestErrorDetailShownNotLogged: the Detail of an *errs.Invalid or *errs.Conflict reaches the
// caller (a tool's isError text, a read's JSON-RPC error message) after the reason, and never
// the server's logs, which record the error as Error() renders it (the handler here logs it
// the way the server logs a failed call, so the logs demonstrably hold the error).
func TestErrorDetailShownNotLogged(t *testing.T) {
	logs := &syncBuffer{}
	opts := testOptions(logs)
	opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	failures := map[string]error{
		"neemias_checkin_register": &errs.Invalid{Field: "child", Reason: "matches 2 children", Detail: detailLabels},
		"neemias_child_enroll":     &errs.Conflict{Reason: "the child may not be picked up by this adult", Detail: "restriction: " + detailLabels},
		"roster_children":          &errs.Invalid{Field: "class", Reason: "matches 2 classes", Detail: detailLabels},
	}
	opts.Gate = fakeSpec{call: func(ctx context.Context, id string, _ json.RawMessage) (any, error) {
		err := failures[id]
		opts.Logger.InfoContext(ctx, "capability refused", "capability", id, "error", err)
		return nil, err
	}}.gate()
	srv := newServer(t, opts)

	tests := []struct {
		name   string
		method string
		params map[string]any
		want   string // what the caller reads
		logged string // what the log holds of the same error
	}{
		{"tool invalid", "tools/call", map[string]any{"name": "neemias_checkin_register", "arguments": map[string]any{"child_id": childA}},
			`invalid arguments for "neemias_checkin_register": child: matches 2 children: ` + detailLabels + ". Fix the arguments and call the tool again.",
			"invalid input: child: matches 2 children"},
		{"tool conflict", "tools/call", map[string]any{"name": "neemias_child_enroll", "arguments": map[string]any{"name": "Ana", "guardian": map[string]any{"phone": "+55 11 99999-0000", "relationship": "mother"}}},
			"conflict: the child may not be picked up by this adult: restriction: " + detailLabels,
			"conflict: the child may not be picked up by this adult"},
		{"read invalid", "resources/read", map[string]any{"uri": "neemias://roster/children"},
			"invalid resource URI: class: matches 2 classes: " + detailLabels,
			"invalid input: class: matches 2 classes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := modern(t, srv, nil, tt.method, tt.params)
			got := ex.errorMessage()
			if tt.method == "tools/call" {
				r := decode[struct {
					Content []struct{ Text string }
					IsError bool
				}](t, ex.result())
				if !r.IsError || len(r.Content) != 1 {
					t.Fatalf("want an isError result: %s", ex.body)
				}
				got = r.Content[0].Text
			}
			if got != tt.want {
				t.Errorf("the caller reads\n%q\nwant\n%q", got, tt.want)
			}
			if l := logs.String(); !strings.Contains(l, tt.logged) {
				t.Errorf("the logs do not record the error (%q): %s", tt.logged, l)
			}
		})
	}
	for _, leak := range []string{"K7Q2MX", "P3X9AB", "Ana So."} {
		if strings.Contains(logs.String(), leak) {
			t.Errorf("the logs carry the detail %q:\n%s", leak, logs.String())
		}
	}
}
