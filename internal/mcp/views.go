package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/capability"
)

// MCP Apps (io.modelcontextprotocol/ui). The server advertises the extension whenever it has
// views; tools' _meta.ui and the ui:// resources appear in tools/list and resources/list only
// for a client that declared the extension with the view MIME type (2026-07-28: in the
// request's _meta client capabilities; 2025 era: in initialize, remembered by the UI session id
// of uisession.go, or in the request's own _meta client capabilities). A view is registered for
// a caller who can reach one of its linked capabilities.

// checkViews validates Options.Views against the registry, at start-up.
func checkViews(views []capability.View, caps []capability.Capability) error {
	ids := map[string]bool{}
	for _, c := range caps {
		ids[c.ID] = true
	}
	uris, linked := map[string]bool{}, map[string]string{}
	for _, v := range views {
		switch {
		case !strings.HasPrefix(v.URI, "ui://"):
			return fmt.Errorf("mcp: view %q: URI %q does not start with ui://", v.ID, v.URI)
		case uris[v.URI]:
			return fmt.Errorf("mcp: view %q: URI %q is used twice", v.ID, v.URI)
		case strings.TrimSpace(v.HTML) == "":
			return fmt.Errorf("mcp: view %q has no HTML", v.ID)
		}
		uris[v.URI] = true
		for _, c := range v.Capabilities {
			if !ids[c] {
				return fmt.Errorf("mcp: view %q links capability %q, which is not in the registry", v.ID, c)
			}
			if prev, dup := linked[c]; dup {
				return fmt.Errorf("mcp: capability %q is linked to views %q and %q", c, prev, v.ID)
			}
			linked[c] = v.ID
		}
	}
	return nil
}

// viewFor returns the view a tool entry links to, if any.
func (h *Handler) viewFor(e *entry) (capability.View, bool) {
	for _, v := range h.opts.Views {
		if v.Links(e.ID) {
			return v, true
		}
	}
	return capability.View{}, false
}

// addViews registers, on a server for the capabilities vis, the views linked to one of them,
// declares the extension, and returns nothing: tools get their _meta.ui in sdkTool.
func (h *Handler) addViews(s *sdk.Server, vis []*entry) {
	for _, v := range h.opts.Views {
		if !slices.ContainsFunc(vis, func(e *entry) bool { return v.Links(e.ID) }) {
			continue
		}
		res := &sdk.Resource{URI: v.URI, Name: v.ID, Title: v.Title, Description: v.Description, MIMEType: capability.ViewMIMEType}
		meta := viewResourceMeta(v)
		res.Meta = meta
		s.AddResource(res, func(_ context.Context, _ *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{
				Contents:  []*sdk.ResourceContents{{URI: v.URI, MIMEType: capability.ViewMIMEType, Text: v.HTML, Meta: meta}},
				Cacheable: sdk.Cacheable{TTLMs: int(h.opts.ListTTL.Milliseconds()), CacheScope: "public"},
			}, nil
		})
	}
}

// viewResourceMeta is _meta.ui of a view resource: its CSP, when it declares domains.
func viewResourceMeta(v capability.View) sdk.Meta {
	if v.CSP.Empty() {
		return nil
	}
	csp := map[string]any{}
	for k, l := range map[string][]string{
		"connectDomains": v.CSP.ConnectDomains, "resourceDomains": v.CSP.ResourceDomains,
		"frameDomains": v.CSP.FrameDomains, "baseUriDomains": v.CSP.BaseURIDomains,
	} {
		if len(l) > 0 {
			csp[k] = slices.Clone(l)
		}
	}
	return sdk.Meta{"ui": map[string]any{"csp": csp}}
}

// toolUIMeta is a linked tool's _meta.ui.
func toolUIMeta(v capability.View) map[string]any {
	vis := v.Visibility
	if len(vis) == 0 {
		vis = []string{"model", "app"}
	}
	return map[string]any{"resourceUri": v.URI, "visibility": slices.Clone(vis)}
}

// ClientSupportsUI reports whether client capabilities declare the MCP Apps extension with the
// view MIME type.
func ClientSupportsUI(caps *sdk.ClientCapabilities) bool {
	if caps == nil || caps.Extensions == nil {
		return false
	}
	raw, ok := caps.Extensions[capability.UIExtension]
	if !ok {
		return false
	}
	// Decoded from the wire the settings are a map[string]any: read them as they are (this runs
	// on every list request). Anything else (a Go client's own struct) takes the JSON round trip.
	if m, ok := raw.(map[string]any); ok {
		types, _ := m["mimeTypes"].([]any)
		return slices.Contains(types, any(capability.ViewMIMEType))
	}
	var settings struct {
		MIMETypes []string `json:"mimeTypes"`
	}
	b, err := json.Marshal(raw)
	if err != nil || json.Unmarshal(b, &settings) != nil {
		return false
	}
	return slices.Contains(settings.MIMETypes, capability.ViewMIMEType)
}

// wantsUI reports whether the client of this request declared MCP Apps: in the request's own
// capabilities (2026-07-28 _meta, or a 2025 client's _meta) or through the 2025-era UI session.
func wantsUI(ctx context.Context, caps *sdk.ClientCapabilities) bool {
	return ClientSupportsUI(caps) || legacyUI(ctx)
}

// cacheVariantKey is the result _meta key naming which variant of a list a 2026-07-28
// tools/list or resources/list result is: cacheVariantUI (the client declared MCP Apps, so the
// list carries _meta.ui and the ui:// views) or cacheVariantCore (nothing about views).
//
// Why a _meta key and not cacheScope: the spec's cacheScope has two values only, "public" and
// "private", and says who may share an entry (authorization contexts), not what it varies
// with; both variants of our lists are "private" (they are filtered by the token's scopes), so
// cacheScope cannot tell them apart. What keeps one variant from being served to the other is
// the spec's cache key, "the request method together with the request parameters that affect
// the result": in 2026-07-28 the declaration travels in the request's own params
// (_meta["io.modelcontextprotocol/clientCapabilities"].extensions), so a request with a
// different declaration has different result-affecting params and a conforming cache MUST NOT
// serve it the other's entry. The _meta key says so on the result itself, for caches (and
// people) that key on method and cursor only: the variant is part of the key. The SDK puts the
// same hints on legacy results (2025 clients have no caching rules and ignore them); there the
// variant may come from the UI session id, a header rather than a param, so the _meta key is
// the only thing on the result that tells the variants apart, and it is sent in both eras.
// Every HTTP response is Cache-Control: no-store, so no HTTP cache mixes them either.
const cacheVariantKey = "neemias/cacheVariant"

const (
	cacheVariantUI   = "mcp-apps"
	cacheVariantCore = "core"
)

// withCacheVariant returns meta with cacheVariantKey set to variant, leaving meta untouched.
func withCacheVariant(meta sdk.Meta, ui bool) sdk.Meta {
	variant := cacheVariantCore
	if ui {
		variant = cacheVariantUI
	}
	out := make(sdk.Meta, len(meta)+1)
	for k, v := range meta {
		out[k] = v
	}
	out[cacheVariantKey] = variant
	return out
}

// viewsMiddleware hides everything about views from a client that did not declare the
// extension: tools/list loses _meta.ui and the app-only tools, resources/list the ui://
// resources, and resources/read of a ui:// URI answers as for an unknown resource, with the
// era's code (-32602 in 2026-07-28, -32002 before). (The copies keep the SDK's registered tools untouched.) Both
// lists name their variant in _meta[cacheVariantKey].
//
// Why reads too: the rule is "without it, nothing about views appears", and a read
// that answered would show that a view exists at a URI the client was never given. Nothing is
// lost: a host renders a view only after declaring the extension, and every host that declares
// it gets the document (views are HTML and hold no data; hiding them is about a consistent
// surface, not access control, which scopes keep doing for every call and read). The answer is
// the very error an unknown URI gets, so a client cannot tell a hidden view from no view.
func (h *Handler) viewsMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if rr, ok := req.(*sdk.ReadResourceRequest); ok && len(h.opts.Views) > 0 && rr.Params != nil &&
			strings.HasPrefix(rr.Params.URI, "ui://") && !wantsUI(ctx, rr.ClientCapabilities()) {
			return nil, notFound(rr.Params.URI, isModernRequest(rr))
		}
		res, err := next(ctx, method, req)
		if err != nil || len(h.opts.Views) == 0 {
			return res, err
		}
		cr, ok := req.(clientCapsRequest)
		if !ok {
			return res, err
		}
		switch r := res.(type) {
		case *sdk.ListToolsResult:
			ui := wantsUI(ctx, cr.ClientCapabilities())
			out := *r
			out.Meta = withCacheVariant(r.Meta, ui)
			if !ui {
				out.Tools = h.coreTools(r.Tools)
			}
			return &out, nil
		case *sdk.ListResourcesResult:
			ui := wantsUI(ctx, cr.ClientCapabilities())
			out := *r
			out.Meta = withCacheVariant(r.Meta, ui)
			if !ui {
				out.Resources = slices.DeleteFunc(slices.Clone(r.Resources), func(x *sdk.Resource) bool {
					return strings.HasPrefix(x.URI, "ui://")
				})
			}
			return &out, nil
		}
		return res, err
	}
}

// clientCapsRequest is a server request that carries the client's capabilities (every
// sdk.ServerRequest does; the SDK's Request interface does not name the method).
type clientCapsRequest interface {
	ClientCapabilities() *sdk.ClientCapabilities
}

// coreTools is tools as a client without MCP Apps sees them: no app-only tools and no
// _meta.ui. The SDK's registered tools stay untouched (copies).
func (h *Handler) coreTools(tools []*sdk.Tool) []*sdk.Tool {
	out := make([]*sdk.Tool, 0, len(tools))
	for _, t := range tools {
		if h.isAppOnly(t.Name) {
			continue // app-only tools exist only for clients with MCP Apps
		}
		if _, has := t.Meta["ui"]; has {
			cp := *t
			cp.Meta = nil
			for k, v := range t.Meta {
				if k != "ui" {
					if cp.Meta == nil {
						cp.Meta = sdk.Meta{}
					}
					cp.Meta[k] = v
				}
			}
			t = &cp
		}
		out = append(out, t)
	}
	return out
}
