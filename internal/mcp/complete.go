package mcp

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/principal"
)

// maxCompletions is the spec's cap on completion values per response.
const maxCompletions = 100

// complete answers completion/complete for URI template variables the spec marks completable,
// for callers who may read that template. Anything else gets an empty list (never an error
// that would tell a caller which templates exist behind scopes it lacks).
func (h *Handler) complete(ctx context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
	empty := &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: []string{}}}
	ref := req.Params.Ref
	if ref == nil || ref.Type != "ref/resource" {
		return empty, nil
	}
	p, _ := principal.From(ctx)
	for _, e := range h.reads {
		if e.URITemplate != ref.URI {
			continue
		}
		v, ok := e.Input(req.Params.Argument.Name)
		if !ok || !v.Completable || !h.opts.Gate.Allowed(p.Scopes, e.ID) {
			return empty, nil
		}
		values, err := h.opts.Complete(ctx, e.ID, v.Name, req.Params.Argument.Value)
		if err != nil {
			return nil, h.internal(ctx, e, fmt.Errorf("completing %s.%s: %w", e.ID, v.Name, err))
		}
		out := make([]string, 0, min(len(values), maxCompletions))
		total := 0
		for _, s := range values {
			if strings.HasPrefix(s, req.Params.Argument.Value) {
				total++
				if len(out) < maxCompletions {
					out = append(out, s)
				}
			}
		}
		return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{
			Values: out, Total: total, HasMore: total > len(out),
		}}, nil
	}
	return empty, nil
}
