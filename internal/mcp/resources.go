package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
	args, err := templateArgs(e, vars)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid resource URI: %v", err)}
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

// templateArgs converts template variables (strings on the wire) to the JSON arguments object
// by each input's declared type. Formats are checked by the input schema afterwards.
func templateArgs(e *entry, vars map[string]string) (json.RawMessage, error) {
	obj := make(map[string]any, len(vars))
	for name, raw := range vars {
		v, _ := e.Input(name)
		switch v.Type {
		case "integer":
			n, err := strconv.ParseInt(raw, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: must be an integer", name)
			}
			obj[name] = n
		case "number":
			f, err := strconv.ParseFloat(raw, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: must be a number", name)
			}
			obj[name] = f
		case "boolean":
			b, err := strconv.ParseBool(raw)
			if err != nil || (raw != "true" && raw != "false") {
				return nil, fmt.Errorf("%s: must be true or false", name)
			}
			obj[name] = b
		default:
			obj[name] = raw
		}
	}
	return json.Marshal(obj)
}
