package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/pipeline"
)

// readHandler serves resources/read for every resource and template. The SDK picks a handler
// with its permissive matcher; the URI is matched again here with the strict one (the same the
// HTTP scope check used), so "..", "%2F", empty ids and stray query keys are never passed on.
func (h *Handler) readHandler(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	modern := isModernRequest(req)
	e, vars := h.matchRead(uri)
	if e == nil {
		return nil, notFound(uri, modern)
	}
	permit, ok := pipeline.PermitFrom(ctx, e.ID)
	if !ok { // serveMCP authorizes every resources/read before the SDK sees it; fail closed
		return nil, notFound(uri, modern)
	}
	args, err := e.ArgsFromStrings(vars)
	if err != nil {
		return nil, h.readError(ctx, e, uri, modern, err)
	}
	ctx = withCall(ctx, &call{
		h: h, session: req.Session, method: "resources/read", target: uri, args: args,
		progressToken: req.Params.GetProgressToken(), inputResponses: req.Params.InputResponses,
		requestState: req.Params.RequestState, clientCaps: req.ClientCapabilities(), modern: modern,
	})
	res, err := h.opts.Gate.Invoke(ctx, permit, args)
	if err != nil {
		return nil, h.readError(ctx, e, uri, modern, err)
	}
	if raw, ok := res.Value.(*sdk.ReadResourceResult); ok {
		if raw.TTLMs == 0 && raw.InputRequests == nil {
			raw.TTLMs = int(e.TTLMillis)
		}
		return raw, nil
	}
	return &sdk.ReadResourceResult{
		Cacheable: sdk.Cacheable{TTLMs: int(e.TTLMillis), CacheScope: "private"},
		Contents:  []*sdk.ResourceContents{{URI: uri, MIMEType: e.mimeType(), Text: string(res.JSON)}},
	}, nil
}

func (h *Handler) resourceHandler(*entry) sdk.ResourceHandler { return h.readHandler }
