package mcp

import (
	"context"
	"errors"
	"fmt"
	"github.com/neemias/neemias-mcp/internal/reqid"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/errs"
)

// Messages an agent sees for domain errors. They carry no data of the request.
const (
	msgNotFound       = "not found: the record does not exist or you may not see it"
	msgForbidden      = "this operation is not permitted for your profile"
	msgNotImplemented = "this capability is not available yet"
)

// toolError maps a handler error to a tools/call outcome. Domain errors the agent can act on
// become isError results; a deliberate *jsonrpc.Error passes through; everything else is an
// internal error with a correlation id, logged here and never described to the client.
func (h *Handler) toolError(ctx context.Context, e *entry, err error) (*sdk.CallToolResult, error) {
	if inv, ok := errs.AsInvalid(err); ok {
		return errorResult(inv.Error()), nil
	}
	var forbidden *errs.Forbidden
	var conflict *errs.Conflict
	var je *jsonrpc.Error
	switch {
	case errors.Is(err, errs.ErrNotFound):
		return errorResult(msgNotFound), nil
	case errors.As(err, &conflict):
		return errorResult(conflict.Error()), nil
	case errors.As(err, &forbidden):
		return errorResult(msgForbidden), nil
	case errors.Is(err, errs.ErrNotImplemented):
		return errorResult(msgNotImplemented), nil
	case errors.Is(err, ErrBadRequestState):
		h.log.InfoContext(ctx, "requestState rejected", "capability", e.ID, "reason", err)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState failed verification; call again without it"}
	case errors.As(err, &je):
		return nil, je
	}
	return nil, h.internal(ctx, e, err)
}

// readError maps a handler error for resources/read: invalid input is -32602 with the reason,
// not found is -32002 (legacy) or -32602 (modern) with the URI, everything else internal.
func (h *Handler) readError(ctx context.Context, e *entry, uri string, modern bool, err error) error {
	if inv, ok := errs.AsInvalid(err); ok {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: inv.Error()}
	}
	var je *jsonrpc.Error
	switch {
	case errors.Is(err, errs.ErrNotFound), errors.Is(err, errs.ErrUnauthenticated):
		return notFound(uri, modern)
	case errors.Is(err, ErrBadRequestState):
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState failed verification; read again without it"}
	case errors.As(err, &je):
		return je
	}
	var forbidden *errs.Forbidden
	if errors.As(err, &forbidden) {
		return notFound(uri, modern)
	}
	return h.internal(ctx, e, err)
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
