package mcp

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/capability"
)

// buildServer builds an SDK server exposing exactly vis.
func (h *Handler) buildServer(vis []*entry) *sdk.Server {
	caps := &sdk.ServerCapabilities{
		// A stateless server cannot deliver list_changed or resources/updated: advertise neither.
		Tools:     &sdk.ToolCapabilities{},
		Resources: &sdk.ResourceCapabilities{},
		// The spec has no prompts, but the SDK answers prompts/list anyway (an empty list with
		// cache hints); declaring the capability keeps discover truthful about that.
		Prompts: &sdk.PromptCapabilities{},
	}
	if h.opts.Complete != nil {
		caps.Completions = &sdk.CompletionCapabilities{}
	}
	if h.opts.Logging {
		caps.Logging = &sdk.LoggingCapabilities{}
	}
	if len(h.opts.Views) > 0 {
		caps.AddExtension(capability.UIExtension, map[string]any{"mimeTypes": []string{capability.ViewMIMEType}})
	}
	so := &sdk.ServerOptions{
		Instructions:              h.opts.Instructions,
		Logger:                    sdkLogger(h.log),
		Capabilities:              caps,
		SupportedProtocolVersions: SupportedVersions,
		SetCacheable:              h.setCacheable,
	}
	if h.opts.Complete != nil {
		so.CompletionHandler = h.complete
	}
	if h.opts.Subscriptions {
		noop := func(context.Context, *sdk.SubscribeRequest) error { return nil }
		so.SubscribeHandler = noop
		so.UnsubscribeHandler = func(context.Context, *sdk.UnsubscribeRequest) error { return nil }
	}
	s := sdk.NewServer(&sdk.Implementation{Name: h.opts.Name, Title: h.opts.Title, Version: h.opts.Version}, so)
	for _, e := range vis {
		switch e.Kind {
		case capability.KindTool:
			s.AddTool(h.sdkTool(e), h.toolHandler(e))
		case capability.KindResource:
			s.AddResource(&sdk.Resource{
				URI: e.URITemplate, Name: e.ID, Title: e.Title, Description: e.Description, MIMEType: e.mimeType(),
			}, h.resourceHandler(e))
		case capability.KindResourceTemplate:
			s.AddResourceTemplate(&sdk.ResourceTemplate{
				URITemplate: e.URITemplate, Name: e.ID, Title: e.Title, Description: e.Description, MIMEType: e.mimeType(),
			}, h.resourceHandler(e))
		}
	}
	h.addViews(s, vis)
	s.AddReceivingMiddleware(legacyResourceNotFound, h.viewsMiddleware)
	if h.opts.Extend != nil {
		h.opts.Extend(s)
	}
	return s
}

func (e *entry) mimeType() string {
	if e.MIMEType != "" {
		return e.MIMEType
	}
	return "application/json"
}

func (h *Handler) sdkTool(e *entry) *sdk.Tool {
	t := &sdk.Tool{
		Name:        e.Name,
		Title:       e.Title,
		Description: e.Description,
		InputSchema: e.inputRaw,
	}
	if e.outputRaw != nil {
		t.OutputSchema = e.outputRaw
	}
	if e.appView != nil {
		t.Meta = sdk.Meta{"ui": map[string]any{"resourceUri": e.appView.URI, "visibility": []string{"app"}}}
	} else if v, ok := h.viewFor(e); ok {
		t.Meta = sdk.Meta{"ui": toolUIMeta(v)}
	}
	a := e.Annotations
	if a.ReadOnly != nil || a.Destructive != nil || a.Idempotent != nil || a.OpenWorld != nil || e.Title != "" {
		t.Annotations = &sdk.ToolAnnotations{Title: e.Title, DestructiveHint: a.Destructive, OpenWorldHint: a.OpenWorld}
		if a.ReadOnly != nil {
			t.Annotations.ReadOnlyHint = *a.ReadOnly
		}
		if a.Idempotent != nil {
			t.Annotations.IdempotentHint = *a.Idempotent
		}
	}
	return t
}

// legacyResourceNotFound rewrites the SDK's resource-not-found error (-32602 since SEP-2164)
// to -32002 for legacy requests, which is what 2025-era clients expect.
func legacyResourceNotFound(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if err == nil || method != "resources/read" {
			return res, err
		}
		if rr, ok := req.(*sdk.ReadResourceRequest); ok && !isModernRequest(rr) {
			var je *jsonrpc.Error
			if errors.As(err, &je) && je.Code == jsonrpc.CodeInvalidParams && je.Message == "Resource not found" {
				return nil, &jsonrpc.Error{Code: CodeResourceNotFoundLegacy, Message: je.Message, Data: je.Data}
			}
		}
		return res, err
	}
}

// isModernRequest reports whether a request uses the 2026-07-28 revision.
func isModernRequest[P sdk.Params](req *sdk.ServerRequest[P]) bool {
	return req.ProtocolVersion() >= VersionModern
}

// setCacheable decides ttlMs and cacheScope. Lists depend on the caller's scopes and reads on
// the caller's rows, so both are private; server/discover is the same for everyone.
func (h *Handler) setCacheable(_ context.Context, req sdk.Request, c *sdk.Cacheable) {
	switch r := req.(type) {
	case *sdk.ServerRequest[*sdk.DiscoverParams]:
		c.TTLMs, c.CacheScope = int(h.opts.DiscoverTTL.Milliseconds()), "public"
	case *sdk.ReadResourceRequest:
		c.CacheScope = "private"
		if r.Params != nil && (r.Params.RequestState != "" || len(r.Params.InputResponses) > 0) {
			c.TTLMs = 0 // results of multi-round-trip retries must not be cached
		}
	default:
		c.TTLMs, c.CacheScope = int(h.opts.ListTTL.Milliseconds()), "private"
	}
}
