package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/principal"
)

// toolHandler is the glue of one tool: scope check, input validation, invoke, output check,
// result shaping (structuredContent plus the same JSON as a text block), error mapping.
func (h *Handler) toolHandler(e *entry) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		p, ok := principal.From(ctx)
		granted := h.granted(p)
		if !ok || !granted.Has(e.scope) { // the HTTP layer answered 403 already; never reached
			return errorResult(msgForbidden), nil
		}
		args := req.Params.Arguments
		if len(bytes.TrimSpace(args)) == 0 || string(args) == "null" {
			args = json.RawMessage(`{}`)
		}
		var instance any
		if err := json.Unmarshal(args, &instance); err != nil {
			return errorResult(fmt.Sprintf("invalid arguments for tool %q: not valid JSON", e.Name)), nil
		}
		if field, reason, ok := e.input.validate(instance); !ok {
			return errorResult(invalidArgs(e.Name, field, reason)), nil
		}
		ctx = withCall(ctx, &call{
			h: h, session: req.Session, method: "tools/call", target: e.Name, args: args,
			progressToken: req.Params.GetProgressToken(), inputResponses: req.Params.InputResponses,
			requestState: req.Params.RequestState, clientCaps: req.ClientCapabilities(), modern: isModernRequest(req),
		})
		out, err := h.opts.Invoke(ctx, e.ID, args, granted)
		if err != nil {
			return h.toolError(ctx, e, err)
		}
		if raw, ok := out.(*sdk.CallToolResult); ok {
			return raw, nil
		}
		data, err := h.encodeResult(ctx, e, out)
		if err != nil {
			return nil, err
		}
		return &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: string(data)}},
			StructuredContent: json.RawMessage(data),
		}, nil
	}
}

// encodeResult encodes a capability's result as JSON and checks it against the capability's
// output schema; a result that cannot be encoded or violates the schema is an internal error.
func (h *Handler) encodeResult(ctx context.Context, e *entry, out any) ([]byte, error) {
	data, err := json.Marshal(out)
	if err != nil {
		return nil, h.internal(ctx, e, fmt.Errorf("encoding result of %s: %w", e.ID, err))
	}
	if e.output != nil {
		var v any
		_ = json.Unmarshal(data, &v)
		if field, reason, ok := e.output.validate(v); !ok {
			return nil, h.internal(ctx, e, fmt.Errorf("result of %s violates its output schema at %q: %s", e.ID, field, reason))
		}
	}
	return data, nil
}

func invalidArgs(tool, field, reason string) string {
	if field == "" {
		return fmt.Sprintf("invalid arguments for %q: %s. Fix the arguments and call the tool again.", tool, reason)
	}
	return fmt.Sprintf("invalid arguments for %q: %s: %s. Fix the arguments and call the tool again.", tool, field, reason)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called with maps of strings
	}
	return b
}
