package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/principal"
)

// call is what the runtime knows about the request a handler is serving. Handlers reach it
// through the functions below, never directly.
type call struct {
	h              *Handler
	session        *sdk.ServerSession
	method, target string
	args           json.RawMessage
	progressToken  any
	inputResponses sdk.InputResponseMap
	requestState   string
	clientCaps     *sdk.ClientCapabilities
	modern         bool
}

// invocation is what a tools/call or resources/read handler reads of its request: taken from
// the SDK's request by the engine's handlers (readInvocation, callInvocation), or from the
// envelope by the fast path (fastpath.go), so that both run the same result-building code.
type invocation struct {
	session        *sdk.ServerSession // nil on the fast path, which never serves a capability that needs it
	target         string             // the URI of a read; the tool name of a call
	args           json.RawMessage    // a call's arguments as sent (nil when absent)
	progressToken  any
	inputResponses sdk.InputResponseMap
	requestState   string
	clientCaps     *sdk.ClientCapabilities
	modern         bool
	// read and readVars are a read's URI already matched (envelope.read); nil: readResult
	// matches target itself.
	read     *entry
	readVars map[string]string
}

func readInvocation(req *sdk.ReadResourceRequest) invocation {
	return invocation{session: req.Session, target: req.Params.URI, progressToken: req.Params.GetProgressToken(),
		inputResponses: req.Params.InputResponses, requestState: req.Params.RequestState,
		clientCaps: req.ClientCapabilities(), modern: isModernRequest(req)}
}

func callInvocation(req *sdk.CallToolRequest) invocation {
	return invocation{session: req.Session, target: req.Params.Name, args: req.Params.Arguments, progressToken: req.Params.GetProgressToken(),
		inputResponses: req.Params.InputResponses, requestState: req.Params.RequestState,
		clientCaps: req.ClientCapabilities(), modern: isModernRequest(req)}
}

// call is the runtime's record of in, for the helpers below.
func (in invocation) call(h *Handler, method string, args json.RawMessage) *call {
	return &call{h: h, session: in.session, method: method, target: in.target, args: args,
		progressToken: in.progressToken, inputResponses: in.inputResponses, requestState: in.requestState,
		clientCaps: in.clientCaps, modern: in.modern}
}

type callKey struct{}

func withCall(ctx context.Context, c *call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

func callFrom(ctx context.Context) (*call, bool) {
	c, ok := ctx.Value(callKey{}).(*call)
	return c, ok
}

// errNoCall is returned by the helpers below outside a capability invocation.
var errNoCall = errors.New("mcp: no MCP request on this context")

// errNoSession is returned by Log and Progress when the request is served without the engine's
// session: a capability that calls them is marked capability.Entry.Session.
var errNoSession = errors.New("mcp: this request has no session (mark the capability's catalog entry Session)")

// Log sends a notifications/message to the client on the current request's stream. Clients
// receive it only if they asked for logs (legacy: logging/setLevel; 2026-07-28: _meta logLevel).
// Never log personal data: messages leave the server.
func Log(ctx context.Context, level sdk.LoggingLevel, logger string, data any) error {
	c, ok := callFrom(ctx)
	if !ok {
		return errNoCall
	}
	if c.session == nil {
		return errNoSession
	}
	return c.session.Log(ctx, &sdk.LoggingMessageParams{Level: level, Logger: logger, Data: data})
}

// Progress sends notifications/progress for the current request if the client supplied a
// progress token; otherwise it does nothing.
func Progress(ctx context.Context, progress, total float64, message string) error {
	c, ok := callFrom(ctx)
	if !ok {
		return errNoCall
	}
	if c.progressToken == nil {
		return nil
	}
	if c.session == nil {
		return errNoSession
	}
	return c.session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
		ProgressToken: c.progressToken, Progress: progress, Total: total, Message: message,
	})
}

// ClientCapabilities returns the capabilities the client declared for this request (modern:
// per-request _meta; legacy: none, since a stateless server never saw initialize).
func ClientCapabilities(ctx context.Context) *sdk.ClientCapabilities {
	if c, ok := callFrom(ctx); ok && c.clientCaps != nil {
		return c.clientCaps
	}
	return &sdk.ClientCapabilities{}
}

// InputResponses returns the inputResponses of a multi-round-trip retry (nil on a first call).
func InputResponses(ctx context.Context) sdk.InputResponseMap {
	if c, ok := callFrom(ctx); ok {
		return c.inputResponses
	}
	return nil
}

// SealState seals payload into a requestState bound to the current caller and request (method,
// target, arguments), valid for Options.StateTTL. Put it in the input_required result.
func SealState(ctx context.Context, payload []byte) (string, error) {
	c, ok := callFrom(ctx)
	if !ok {
		return "", errNoCall
	}
	return c.h.state.Seal(c.binding(ctx), payload, c.h.stateTTL)
}

// OpenState opens the requestState the client echoed. present is false on a first call (no
// state). A state that fails verification returns an error wrapping ErrBadRequestState, which
// the handler should return as is.
func OpenState(ctx context.Context) (payload []byte, present bool, err error) {
	c, ok := callFrom(ctx)
	if !ok {
		return nil, false, errNoCall
	}
	if c.requestState == "" {
		return nil, false, nil
	}
	p, err := c.h.state.Open(c.binding(ctx), c.requestState)
	return p, true, err
}

func (c *call) binding(ctx context.Context) StateBinding {
	caller := "anonymous"
	if p, ok := principal.From(ctx); ok {
		caller = fmt.Sprintf("%s|%s|%s", p.UserID, p.ChurchID, p.ClientID)
	}
	return StateBinding{Caller: caller, Method: c.method, Target: c.target, ArgsDigest: DigestArgs(c.args)}
}

// RequireClientCapability returns nil if the client declared capability (one of "sampling",
// "elicitation", "roots") on this request, and otherwise the spec's
// MissingRequiredClientCapability error (-32021, HTTP 400 on 2026-07-28) with
// data.requiredCapabilities naming it. Handlers return it as is.
func RequireClientCapability(ctx context.Context, capability string) error {
	caps := ClientCapabilities(ctx)
	declared := false
	switch capability {
	case "sampling":
		declared = caps.Sampling != nil
	case "elicitation":
		declared = caps.Elicitation != nil
	case "roots":
		declared = caps.RootsV2 != nil
	}
	if declared {
		return nil
	}
	return &jsonrpc.Error{
		Code:    CodeMissingRequiredClientCapabilities,
		Message: fmt.Sprintf("this request needs the client capability %q, which the client did not declare", capability),
		Data:    mustJSON(map[string]any{"requiredCapabilities": map[string]any{capability: map[string]any{}}}),
	}
}
