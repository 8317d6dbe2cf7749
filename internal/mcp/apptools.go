package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/httpx"
	"github.com/neemias/neemias-mcp/internal/principal"
)

// App-only tools (MCP Apps _meta.ui.visibility ["app"]): a view's own actions, such as the
// check-in sheet's check-in and check-out buttons. Each is a catalog alias
// (capability.Entry.Runs, from capability.AppToolEntries) of a declared tool under another
// name: the pipeline checks, runs and audits it as that tool (same scope check, row filters,
// validation, handler, redaction and audit), so it has no logic of its own. The host lets the
// view call it and never shows it to the model.
//
// Only a client that declared the extension with the view MIME type (per request in
// 2026-07-28; by its UI session id in the 2025 eras, uisession.go) has them listed and may call
// them. For any other client they are not listed (viewsMiddleware), and a tools/call is refused
// before the scope check with -32602 and a message saying why, audited as a refused call of the
// capability (outcome denied, "<action>.forbidden").

// addAppTools registers the catalog's app-only tools (aliases with a view); names holds the
// wire names taken. Each is the entry of the tool it runs under its own name and text, linked
// to its view.
func (h *Handler) addAppTools(names map[string]string, aliases []capability.Entry) error {
	for _, a := range aliases {
		base := h.tools[a.Runs]
		v := h.view(a.View)
		switch {
		case a.View == "":
			return fmt.Errorf("mcp: %q runs %q but names no view: an alias MCP serves is a view's app-only tool", a.ID, a.Runs)
		case v == nil:
			return fmt.Errorf("mcp: app tool %q belongs to view %q, which is not among Options.Views", a.ID, a.View)
		case base == nil || base.appView != nil:
			return fmt.Errorf("mcp: view %q: app tool %q runs %q, which is not a tool in the registry", v.ID, a.ID, a.Runs)
		}
		c := capability.Clone(base.Capability)
		c.Name, c.Title, c.Description = a.Name, a.Title, a.Description
		twin := &entry{Capability: c, inputRaw: base.inputRaw, outputRaw: base.outputRaw, summary: base.summary, appView: v}
		if prev, dup := names[kindKey(c)]; dup {
			return fmt.Errorf("mcp: view %q: app tool %q has the wire name of %q", v.ID, a.Name, prev)
		}
		names[kindKey(c)] = c.ID
		h.entries = append(h.entries, twin)
		h.tools[c.Name] = twin
	}
	return nil
}

// view is the view of Options.Views with uri, or nil.
func (h *Handler) view(uri string) *capability.View {
	for i := range h.opts.Views {
		if h.opts.Views[i].URI == uri {
			return &h.opts.Views[i]
		}
	}
	return nil
}

// isAppOnly reports whether tool name is an app-only tool.
func (h *Handler) isAppOnly(name string) bool {
	e := h.tools[name]
	return e != nil && e.appView != nil
}

// declaredUI reports whether the request's client declared MCP Apps, as the lists decide it
// (viewsMiddleware): in the request's _meta client capabilities (2026-07-28; the SDK reads
// them in either era), or, in the 2025 eras, by its UI session id.
func (h *Handler) declaredUI(ctx context.Context, era era, env *envelope) bool {
	if era == eraLegacy && legacyUI(ctx) {
		return true
	}
	if len(env.clientCaps) == 0 {
		return false
	}
	var caps sdk.ClientCapabilities
	if json.Unmarshal(env.clientCaps, &caps) != nil {
		return false
	}
	return ClientSupportsUI(&caps)
}

// refuseAppOnly answers a tools/call of app-only tool e from a client that did not declare MCP
// Apps: -32602 like an unknown tool (HTTP 400 modern, 200 legacy), with a message that says
// why and which tool the model may call instead; the refusal is audited like the scope
// check's. A caller whose role could never list the tool gets the unknown-tool answer.
func (h *Handler) refuseAppOnly(w http.ResponseWriter, r *http.Request, env *envelope, e *entry, body []byte) {
	p, ok := principal.From(r.Context())
	if !ok || !h.opts.Gate.Listed(p, e.ID) {
		h.unknownTool(w, env) // a caller who could never list it learns nothing of it
		return
	}
	var req struct {
		Params struct {
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &req) // for the audit entry's record ids only
	scope, _ := h.opts.Gate.RequiredScope(e.ID)
	h.opts.Gate.Refused(r.Context(), e.ID, req.Params.Arguments,
		&errs.Forbidden{Capability: e.ID, Scope: scope, Granted: p.Scopes.List(), Unreachable: true})
	status := http.StatusOK
	if env.metaPresent {
		status = http.StatusBadRequest
	}
	msg := fmt.Sprintf("%s is an app-only tool: only the view %s calls it, in a host that declared the MCP Apps extension (%s)", e.Name, e.appView.URI, capability.UIExtension)
	if base := h.tools[e.ID]; base != nil && base.appView == nil {
		msg += "; call " + base.Name + " instead"
	}
	httpx.WriteRPCError(w, status, env.id, httpx.RPCError{Code: httpx.CodeInvalidParams, Message: msg})
}
