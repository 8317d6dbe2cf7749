package mcp

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/reqid"
)

// Messages an agent sees for domain errors. They carry no data of the request.
const (
	msgNotFound       = "not found: the record does not exist or you may not see it"
	msgForbidden      = "this operation is not permitted for your profile"
	msgNotImplemented = "this capability is not available yet"
	msgUnavailable    = "temporarily unavailable (the database did not answer); retry in a few seconds"
)

// Implementation-defined JSON-RPC codes (the -32000 to -32099 range JSON-RPC leaves to servers)
// for domain errors of a resources/read that MCP has no code for.
const (
	CodeConflict       = -32010
	CodeNotImplemented = -32011
	CodeUnavailable    = -32012
)

// toolError maps a pipeline error to a tools/call outcome by its kind (errs.KindOf): domain
// errors the agent can act on become isError results; a deliberate *jsonrpc.Error passes
// through; everything else is an internal error with a correlation id, logged here and never
// described to the client.
func (h *Handler) toolError(ctx context.Context, e *entry, err error) (*sdk.CallToolResult, error) {
	if r, ok := h.protocolError(ctx, e, err, "call the tool again without it"); ok {
		return nil, r
	}
	switch errs.KindOf(err) {
	case errs.KindInvalid:
		inv, _ := errs.AsInvalid(err)
		return errorResult(invalidArgs(e.Name, inv.Field, errs.Shown(inv.Reason, inv.Detail))), nil
	case errs.KindNotFound, errs.KindUnauthenticated:
		return errorResult(msgNotFound), nil
	case errs.KindConflict:
		return errorResult(conflictMessage(err)), nil
	case errs.KindForbidden:
		return errorResult(msgForbidden), nil
	case errs.KindNotImplemented:
		return errorResult(msgNotImplemented), nil
	case errs.KindUnavailable:
		h.log.WarnContext(ctx, "capability unavailable", "capability", e.ID, "error", err)
		return errorResult(msgUnavailable), nil
	}
	return nil, h.internal(ctx, e, err)
}

// readError maps a pipeline error for resources/read by its kind: invalid input is -32602 with
// the reason; not found, hidden and forbidden are the era's resource-not-found with the URI (a
// read never tells whether a record exists behind a scope); conflicts and stubs have codes of
// their own; everything else is internal.
func (h *Handler) readError(ctx context.Context, e *entry, uri string, modern bool, err error) error {
	if r, ok := h.protocolError(ctx, e, err, "read again without it"); ok {
		return r
	}
	switch errs.KindOf(err) {
	case errs.KindInvalid:
		inv, _ := errs.AsInvalid(err)
		shown := errs.Shown(inv.Reason, inv.Detail)
		if inv.Field == "" {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid resource URI: " + shown}
		}
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid resource URI: %s: %s", inv.Field, shown)}
	case errs.KindNotFound, errs.KindUnauthenticated, errs.KindForbidden:
		return notFound(uri, modern)
	case errs.KindConflict:
		return &jsonrpc.Error{Code: CodeConflict, Message: conflictMessage(err)}
	case errs.KindNotImplemented:
		return &jsonrpc.Error{Code: CodeNotImplemented, Message: msgNotImplemented}
	case errs.KindUnavailable:
		h.log.WarnContext(ctx, "capability unavailable", "capability", e.ID, "error", err)
		return &jsonrpc.Error{Code: CodeUnavailable, Message: msgUnavailable}
	}
	return h.internal(ctx, e, err)
}

// conflictMessage is what the caller reads of the *errs.Conflict in err's chain: its Error()
// text and then its detail (errs.Shown), which Error() leaves out so that logs never carry it.
func conflictMessage(err error) string {
	var c *errs.Conflict
	if !errors.As(err, &c) {
		return "conflict"
	}
	return errs.Shown(c.Error(), c.Detail)
}

// protocolError handles the errors that are MCP's own rather than the pipeline's: a sealed
// requestState that failed verification, and a deliberate *jsonrpc.Error (fixtures).
func (h *Handler) protocolError(ctx context.Context, e *entry, err error, retry string) (error, bool) {
	var je *jsonrpc.Error
	switch {
	case errors.Is(err, ErrBadRequestState):
		h.log.InfoContext(ctx, "requestState rejected", "capability", e.ID, "reason", err)
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState failed verification; " + retry}, true
	case errors.As(err, &je):
		return je, true
	}
	return nil, false
}

// notFound is the era's resource-not-found error. It is identical whether the record is absent
// or hidden from the caller.
func notFound(uri string, modern bool) error {
	code := int64(CodeResourceNotFoundLegacy)
	if modern {
		code = jsonrpc.CodeInvalidParams
	}
	return &jsonrpc.Error{Code: code, Message: "Resource not found", Data: mustJSON(map[string]string{"uri": uri})}
}

// internal logs err with the request's correlation id (reqid) and returns the generic
// JSON-RPC error.
func (h *Handler) internal(ctx context.Context, e *entry, err error) error {
	id := reqid.FromOrNew(ctx)
	capID := ""
	if e != nil {
		capID = e.ID
	}
	h.log.ErrorContext(ctx, "capability failed", "capability", capID, "correlation_id", id, "error", err)
	return &jsonrpc.Error{
		Code:    jsonrpc.CodeInternalError,
		Message: fmt.Sprintf("internal error (correlation id %s)", id),
		Data:    mustJSON(map[string]string{"correlationId": id}),
	}
}

func errorResult(msg string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: msg}}}
}
