package mcp

import (
	"context"
	"encoding/json"
	"unsafe"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/pipeline"
)

// readHandler serves resources/read for every resource and template: the engine's side of
// readResult. A result the fast path already built and handed over (fastpath.go) is returned
// as it is, so the capability never runs twice.
func (h *Handler) readHandler(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	if o, ok := handedOver(ctx, "resources/read", req.Params.URI); ok {
		return o.read, o.err
	}
	res, _, err := h.readResult(ctx, readInvocation(req))
	return res, err
}

// readResult builds the result of a resources/read: the one function the engine's handler and
// the fast path both call. The SDK picks a handler with its permissive matcher; the URI is
// matched again here with the strict one (the same the HTTP scope check used), so "..", "%2F",
// empty ids and stray query keys are never passed on. raw reports a result the capability
// returned as an *sdk.ReadResourceResult of its own (Options.Gate's escape hatch).
func (h *Handler) readResult(ctx context.Context, in invocation) (res *sdk.ReadResourceResult, raw bool, err error) {
	uri := in.target
	e, vars := in.read, in.readVars
	if e == nil {
		e, vars = h.matchRead(uri)
	}
	if e == nil {
		return nil, false, notFound(uri, in.modern)
	}
	permit, ok := pipeline.PermitFrom(ctx, e.ID)
	if !ok { // serveMCP authorizes every resources/read before the SDK sees it; fail closed
		return nil, false, notFound(uri, in.modern)
	}
	args, err := e.ArgsFromStrings(vars)
	if err != nil {
		return nil, false, h.readError(ctx, e, uri, in.modern, err)
	}
	ctx = withCall(ctx, in.call(h, "resources/read", args))
	out, err := h.opts.Gate.Invoke(ctx, permit, args)
	if err != nil {
		return nil, false, h.readError(ctx, e, uri, in.modern, err)
	}
	if r, ok := out.Value.(*sdk.ReadResourceResult); ok {
		if r.TTLMs == 0 && r.InputRequests == nil {
			r.TTLMs = int(e.TTLMillis)
		}
		return r, true, nil
	}
	return &sdk.ReadResourceResult{
		Cacheable: sdk.Cacheable{TTLMs: int(e.TTLMillis), CacheScope: "private"},
		Contents:  []*sdk.ResourceContents{{URI: uri, MIMEType: e.mimeType(), Text: jsonText(out.JSON)}},
	}, false, nil
}

func (h *Handler) resourceHandler(*entry) sdk.ResourceHandler { return h.readHandler }

// jsonText is a read's JSON as the resource's text, without copying it: the pipeline encoded
// it for this request alone and nothing changes it afterwards, and a busy Sunday's is 70 KB.
func jsonText(b json.RawMessage) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
