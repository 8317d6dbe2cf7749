package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/pipeline"
)

// toolHandler is the glue of one tool: the permit of the HTTP-level scope check, the
// pipeline's Invoke (validation, call, redaction, one encoding), result shaping
// (structuredContent plus the same JSON as a text block), error mapping.
func (h *Handler) toolHandler(e *entry) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		permit, ok := pipeline.PermitFrom(ctx, e.ID)
		if !ok { // serveMCP authorizes every tools/call before the SDK sees it; fail closed
			return nil, h.internal(ctx, e, errors.New("tools/call reached the handler without a permit"))
		}
		args := req.Params.Arguments
		if len(bytes.TrimSpace(args)) == 0 || string(args) == "null" {
			args = json.RawMessage(`{}`)
		}
		ctx = withCall(ctx, &call{
			h: h, session: req.Session, method: "tools/call", target: e.Name, args: args,
			progressToken: req.Params.GetProgressToken(), inputResponses: req.Params.InputResponses,
			requestState: req.Params.RequestState, clientCaps: req.ClientCapabilities(), modern: isModernRequest(req),
		})
		res, err := h.opts.Gate.Invoke(ctx, permit, args)
		if err != nil {
			return h.toolError(ctx, e, err)
		}
		if raw, ok := res.Value.(*sdk.CallToolResult); ok {
			return raw, nil
		}
		return &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: h.resultText(ctx, e, res.Value, res.JSON)}},
			StructuredContent: res.JSON,
		}, nil
	}
}

// resultText is a tool result's text content: the capability's summary sentence, a blank line,
// then the JSON; the JSON alone without a summary. The summary runs on the finalized JSON,
// after redaction, so it shows nothing structuredContent does not. A summary that fails to
// render is logged and left out: the JSON still answers. value is the typed output data
// encodes; the summary reads its fields instead of decoding data (RenderSummaryOf).
func (h *Handler) resultText(ctx context.Context, e *entry, value any, data json.RawMessage) string {
	if e.summary == nil {
		return string(data)
	}
	s, err := capability.RenderSummaryOf(e.summary, value, data)
	if err != nil || s == "" {
		h.log.WarnContext(ctx, "tool summary not rendered", "capability", e.ID, "error", err)
		return string(data)
	}
	return s + "\n\n" + string(data)
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
