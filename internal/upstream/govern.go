package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/pii"
)

// govern is the per-call state the sending middleware reads from the context: whose values to
// scan for, the policy, and what was redacted.
type govern struct {
	upstream, tool string
	scanner        *pii.Scanner
	policy         Policy

	redacted Direction // set when findings were redacted (the last direction)
	findings []pii.Finding
}

type governKey struct{}

// errUngoverned refuses a tools/call or resources/read sent without a governed context.
var errUngoverned = errors.New("upstream: call sent outside the governed client")

// scanMiddleware is the go-sdk sending middleware that scans what goes out and what comes
// back: tools/call arguments before they are sent, and tools/call and resources/read results
// (text content, structuredContent, resource contents, _meta: the whole result) before they
// are returned. Other methods (initialize, tools/list, ping) carry no caller data.
func scanMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != "tools/call" && method != "resources/read" {
			return next(ctx, method, req)
		}
		gs, _ := ctx.Value(governKey{}).(*govern)
		if gs == nil {
			return nil, errUngoverned
		}
		if method == "tools/call" {
			p, ok := req.GetParams().(*sdk.CallToolParams)
			if !ok || p == nil {
				return nil, errUngoverned
			}
			if err := gs.scanArguments(p); err != nil {
				return nil, err
			}
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return nil, err
		}
		switch r := res.(type) {
		case *sdk.CallToolResult:
			out := new(sdk.CallToolResult)
			if err := gs.scanResult(r, out); err != nil {
				return nil, err
			}
			return out, nil
		case *sdk.ReadResourceResult:
			out := new(sdk.ReadResourceResult)
			if err := gs.scanResult(r, out); err != nil {
				return nil, err
			}
			return out, nil
		}
		return nil, fmt.Errorf("upstream %q: unexpected result type %T", gs.upstream, res)
	}
}

// scanArguments refuses (enforce) or redacts (redact) personal data in the arguments.
func (gs *govern) scanArguments(p *sdk.CallToolParams) error {
	raw, err := json.Marshal(p.Arguments)
	if err != nil {
		return fmt.Errorf("upstream %q: encoding arguments: %w", gs.upstream, err)
	}
	if gs.policy.Request == Redact {
		red, findings, err := gs.scanner.Redact(raw)
		if err != nil {
			return gs.invalid(DirRequest, err)
		}
		if len(findings) > 0 {
			p.Arguments = json.RawMessage(red)
			gs.redacted, gs.findings = DirRequest, prefix(findings, "$.arguments")
		}
		return nil
	}
	findings, err := gs.scanner.Scan(raw)
	if err != nil {
		return gs.invalid(DirRequest, err)
	}
	if len(findings) > 0 {
		return gs.refuse(DirRequest, prefix(findings, "$.arguments"))
	}
	return nil
}

// scanResult scans the whole result r and decodes it, or its redacted copy, into out.
func (gs *govern) scanResult(r, out any) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("upstream %q: encoding the result: %w", gs.upstream, err)
	}
	if gs.policy.Response == Redact {
		red, findings, err := gs.scanner.Redact(raw)
		if err != nil {
			return gs.invalid(DirResponse, err)
		}
		if len(findings) > 0 {
			raw = red
			gs.redacted = DirResponse
			gs.findings = append(gs.findings, findings...)
		}
	} else {
		findings, err := gs.scanner.Scan(raw)
		if err != nil {
			return gs.invalid(DirResponse, err)
		}
		if len(findings) > 0 {
			return gs.refuse(DirResponse, findings)
		}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("upstream %q: decoding the scanned result: %w", gs.upstream, err)
	}
	return nil
}

func (gs *govern) refuse(dir Direction, findings []pii.Finding) error {
	where := make([]string, len(findings))
	for i, f := range findings {
		where[i] = f.String()
	}
	verb := "the request was not sent"
	if dir == DirResponse {
		verb = "the response was dropped"
	}
	return &Error{Upstream: gs.upstream, Tool: gs.tool, Outcome: OutcomeRefused, Reason: ReasonPIIDetected,
		Direction: dir, Findings: findings,
		msg: fmt.Sprintf("upstream %q tool %q: personal data in the %s (%s): %s (reason pii_detected)",
			gs.upstream, gs.tool, dir, strings.Join(where, ", "), verb)}
}

func (gs *govern) invalid(dir Direction, err error) error {
	return &Error{Upstream: gs.upstream, Tool: gs.tool, Outcome: OutcomeFailed, err: err,
		msg: fmt.Sprintf("upstream %q tool %q: the %s could not be scanned for personal data", gs.upstream, gs.tool, dir)}
}

// safeMessage is the upstream's JSON-RPC error message when it scans clean, else a notice.
func (gs *govern) safeMessage(e *jsonrpc.Error) string {
	raw, _ := json.Marshal(e.Message)
	if f, err := gs.scanner.Scan(raw); err != nil || len(f) > 0 {
		return fmt.Sprintf("error %d (message withheld: it holds personal data)", e.Code)
	}
	msg := e.Message
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return fmt.Sprintf("error %d: %s", e.Code, msg)
}

// prefix puts findings of the arguments under their place in the request.
func prefix(findings []pii.Finding, root string) []pii.Finding {
	out := make([]pii.Finding, len(findings))
	for i, f := range findings {
		f.Path = root + strings.TrimPrefix(f.Path, "$")
		out[i] = f
	}
	return out
}

// refuseServerRequests is the receiving middleware: an upstream may not ask the caller's side
// for anything (sampling, elicitation, roots); pings and notifications pass.
func refuseServerRequests(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case "sampling/createMessage", "elicitation/create", "roots/list":
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "not offered to upstream servers"}
		}
		return next(ctx, method, req)
	}
}
