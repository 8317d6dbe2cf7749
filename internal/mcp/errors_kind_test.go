package mcp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/errs/errstest"
)

// TestEveryKindMapsOnMCP: every error kind has a deliberate answer on both MCP surfaces (tool
// results and resource reads), and only an internal error becomes a JSON-RPC internal error.
func TestEveryKindMapsOnMCP(t *testing.T) {
	h := &Handler{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e := &entry{Capability: capability.Capability{ID: "thing", Name: "neemias_thing"}}
	type want struct {
		toolText string // isError result text; "" means a JSON-RPC error
		readCode int64
	}
	wants := map[errs.Kind]want{
		errs.KindInternal:        {"", jsonrpc.CodeInternalError},
		errs.KindInvalid:         {`invalid arguments for "neemias_thing": child_id: must be a UUID`, jsonrpc.CodeInvalidParams},
		errs.KindNotFound:        {msgNotFound, CodeResourceNotFoundLegacy},
		errs.KindUnauthenticated: {msgNotFound, CodeResourceNotFoundLegacy},
		errs.KindForbidden:       {msgForbidden, CodeResourceNotFoundLegacy},
		errs.KindConflict:        {"conflict: the check-in is locked", CodeConflict},
		errs.KindNotImplemented:  {msgNotImplemented, CodeNotImplemented},
		errs.KindUnavailable:     {msgUnavailable, CodeUnavailable},
	}
	for _, k := range errs.Kinds() {
		t.Run(k.String(), func(t *testing.T) {
			err, ok := errstest.Sample(k), true
			w, ok2 := wants[k]
			if !ok || !ok2 {
				t.Fatalf("kind %v has no sample or expectation: add it", k)
			}
			if got := errs.KindOf(err); got != k {
				t.Fatalf("KindOf(sample) = %v, want %v", got, k)
			}
			res, rpcErr := h.toolError(context.Background(), e, err)
			switch {
			case w.toolText == "":
				var je *jsonrpc.Error
				if !errors.As(rpcErr, &je) || je.Code != jsonrpc.CodeInternalError || strings.Contains(je.Message, "SECRET") {
					t.Errorf("tool: got %v, %v; want a generic internal error", res, rpcErr)
				}
			case rpcErr != nil || res == nil || !res.IsError:
				t.Errorf("tool: got %v, %v; want an isError result", res, rpcErr)
			default:
				if txt := res.Content[0].(*sdk.TextContent).Text; !strings.HasPrefix(txt, w.toolText) {
					t.Errorf("tool text %q, want prefix %q", txt, w.toolText)
				}
			}
			var je *jsonrpc.Error
			if err := h.readError(context.Background(), e, "neemias://thing/1", false, err); !errors.As(err, &je) || je.Code != w.readCode {
				t.Errorf("read: got %v, want code %d", err, w.readCode)
			} else if strings.Contains(je.Message, "SECRET") {
				t.Errorf("read error leaks the cause: %q", je.Message)
			}
		})
	}
}
