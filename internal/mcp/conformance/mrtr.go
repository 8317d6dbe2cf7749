package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/mcp"
)

// Multi-round-trip fixtures (2026-07-28 input_required results, SEP-2322). A first call
// returns the input requests; the retry carries inputResponses (and the requestState, sealed
// by mcp.SealState and bound to caller, tool and arguments).

func elicit(message string, props map[string]any, required ...string) *sdk.ElicitParams {
	return &sdk.ElicitParams{Message: message, RequestedSchema: map[string]any{"type": "object", "properties": props, "required": required}}
}

func sample(prompt string, maxTokens int64) *sdk.CreateMessageParams {
	return &sdk.CreateMessageParams{MaxTokens: maxTokens, Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: prompt}}}}
}

func inputRequired(reqs sdk.InputRequestMap, state string) *sdk.CallToolResult {
	return &sdk.CallToolResult{InputRequests: reqs, RequestState: state}
}

// answered returns the responses if every key was answered.
func answered(ctx context.Context, keys ...string) (sdk.InputResponseMap, bool) {
	got := mcp.InputResponses(ctx)
	for _, k := range keys {
		if _, ok := got[k]; !ok {
			return nil, false
		}
	}
	return got, true
}

func elicitText(r sdk.InputResponse) string {
	if e, ok := r.(*sdk.ElicitResult); ok {
		b, _ := json.Marshal(e.Content)
		return fmt.Sprintf("action=%s, content=%s", e.Action, b)
	}
	return "unexpected response"
}

func sampleText(r sdk.InputResponse) string {
	if s, ok := r.(*sdk.CreateMessageWithToolsResult); ok {
		for _, c := range s.Content {
			if t, ok := c.(*sdk.TextContent); ok {
				return t.Text
			}
		}
	}
	return "unexpected response"
}

var nameSchema = map[string]any{"name": map[string]any{"type": "string"}}

func mrtrElicitation(ctx context.Context, _ json.RawMessage) (any, error) {
	if got, ok := answered(ctx, "user_name"); ok {
		if e, ok := got["user_name"].(*sdk.ElicitResult); ok {
			if name, ok := e.Content["name"].(string); ok {
				return text("Hello, " + name + "!"), nil
			}
		}
		return text("Hello, " + elicitText(got["user_name"])), nil
	}
	return inputRequired(sdk.InputRequestMap{"user_name": elicit("What is your name?", nameSchema, "name")}, ""), nil
}

func mrtrSampling(ctx context.Context, _ json.RawMessage) (any, error) {
	if got, ok := answered(ctx, "capital_question"); ok {
		return text("The model answered: " + sampleText(got["capital_question"])), nil
	}
	return inputRequired(sdk.InputRequestMap{"capital_question": sample("What is the capital of France?", 100)}, ""), nil
}

func mrtrRoots(ctx context.Context, _ json.RawMessage) (any, error) {
	if got, ok := answered(ctx, "client_roots"); ok {
		var uris []string
		if r, ok := got["client_roots"].(*sdk.ListRootsResult); ok {
			for _, root := range r.Roots {
				uris = append(uris, root.URI)
			}
		}
		return text("Client roots: " + strings.Join(uris, ", ")), nil
	}
	return inputRequired(sdk.InputRequestMap{"client_roots": &sdk.ListRootsParams{}}, ""), nil
}

// mrtrRequestState serves both the request-state and the tampered-state fixtures: the retry
// must echo a state that opens for this caller, tool and arguments.
func mrtrRequestState(ctx context.Context, _ json.RawMessage) (any, error) {
	payload, present, err := mcp.OpenState(ctx)
	if err != nil {
		return nil, err // ErrBadRequestState: the runtime answers -32602
	}
	if _, ok := answered(ctx, "confirm"); ok && present && string(payload) == "awaiting-confirm" {
		return text("state-ok: confirmation received"), nil
	}
	state, err := mcp.SealState(ctx, []byte("awaiting-confirm"))
	if err != nil {
		return nil, fmt.Errorf("sealing state: %w", err)
	}
	return inputRequired(sdk.InputRequestMap{"confirm": elicit("Please confirm", map[string]any{"ok": map[string]any{"type": "boolean"}}, "ok")}, state), nil
}

func mrtrMultiple(ctx context.Context, _ json.RawMessage) (any, error) {
	_, present, err := mcp.OpenState(ctx)
	if err != nil {
		return nil, err
	}
	if got, ok := answered(ctx, "user_name", "greeting", "client_roots"); ok && present {
		return text(fmt.Sprintf("All inputs received: %s; greeting: %s", elicitText(got["user_name"]), sampleText(got["greeting"]))), nil
	}
	state, err := mcp.SealState(ctx, []byte("multiple"))
	if err != nil {
		return nil, fmt.Errorf("sealing state: %w", err)
	}
	return inputRequired(sdk.InputRequestMap{
		"user_name":    elicit("What is your name?", nameSchema, "name"),
		"greeting":     sample("Generate a greeting", 50),
		"client_roots": &sdk.ListRootsParams{},
	}, state), nil
}

type roundState struct {
	Round int    `json:"round"`
	Name  string `json:"name,omitempty"`
}

func mrtrMultiRound(ctx context.Context, _ json.RawMessage) (any, error) {
	var st roundState
	payload, present, err := mcp.OpenState(ctx)
	if err != nil {
		return nil, err
	}
	if present {
		if err := json.Unmarshal(payload, &st); err != nil {
			return nil, fmt.Errorf("%w: bad payload", mcp.ErrBadRequestState)
		}
	}
	got := mcp.InputResponses(ctx)
	switch {
	case st.Round == 2 && got["step2"] != nil:
		color := ""
		if e, ok := got["step2"].(*sdk.ElicitResult); ok {
			color, _ = e.Content["color"].(string)
		}
		return text(fmt.Sprintf("Done: %s likes %s", st.Name, color)), nil
	case st.Round >= 1 && got["step1"] != nil:
		name := ""
		if e, ok := got["step1"].(*sdk.ElicitResult); ok {
			name, _ = e.Content["name"].(string)
		}
		next, _ := json.Marshal(roundState{Round: 2, Name: name})
		state, err := mcp.SealState(ctx, next)
		if err != nil {
			return nil, fmt.Errorf("sealing state: %w", err)
		}
		return inputRequired(sdk.InputRequestMap{"step2": elicit("Step 2: What is your favorite color?", map[string]any{"color": map[string]any{"type": "string"}}, "color")}, state), nil
	}
	first, _ := json.Marshal(roundState{Round: 1})
	state, err := mcp.SealState(ctx, first)
	if err != nil {
		return nil, fmt.Errorf("sealing state: %w", err)
	}
	return inputRequired(sdk.InputRequestMap{"step1": elicit("Step 1: What is your name?", nameSchema, "name")}, state), nil
}

// mrtrCapabilities asks only for what the client declared on this request.
func mrtrCapabilities(ctx context.Context, _ json.RawMessage) (any, error) {
	if got := mcp.InputResponses(ctx); len(got) > 0 {
		return text("Inputs received"), nil
	}
	caps := mcp.ClientCapabilities(ctx)
	reqs := sdk.InputRequestMap{}
	if caps.Sampling != nil {
		reqs["sampling_request"] = sample("Say hello", 20)
	}
	if caps.Elicitation != nil {
		reqs["elicitation_request"] = elicit("What is your name?", nameSchema, "name")
	}
	if caps.RootsV2 != nil {
		reqs["roots_request"] = &sdk.ListRootsParams{}
	}
	if len(reqs) == 0 {
		return text("The client declared no capability this tool could use"), nil
	}
	return inputRequired(reqs, ""), nil
}

// Legacy-era server-to-client fixtures: on 2026-07-28 they are input_required results; on the
// 2025 era the SDK would have to send a request mid-call, which a stateless server cannot
// route (the four expected failures).

func sampling(ctx context.Context, args json.RawMessage) (any, error) {
	var in struct {
		Prompt string `json:"prompt"`
	}
	_ = json.Unmarshal(args, &in)
	if got, ok := answered(ctx, "sampling"); ok {
		return text("LLM response: " + sampleText(got["sampling"])), nil
	}
	return inputRequired(sdk.InputRequestMap{"sampling": sample(in.Prompt, 100)}, ""), nil
}

func elicitation(ctx context.Context, args json.RawMessage) (any, error) {
	var in struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(args, &in)
	if got, ok := answered(ctx, "elicitation"); ok {
		return text("User response: " + elicitText(got["elicitation"])), nil
	}
	return inputRequired(sdk.InputRequestMap{"elicitation": elicit(in.Message, map[string]any{
		"username": map[string]any{"type": "string", "description": "User's response"},
		"email":    map[string]any{"type": "string", "description": "User's email address"},
	}, "username", "email")}, ""), nil
}

func elicitDefaults(ctx context.Context, _ json.RawMessage) (any, error) {
	if got, ok := answered(ctx, "defaults"); ok {
		return text("Elicitation completed: " + elicitText(got["defaults"])), nil
	}
	return inputRequired(sdk.InputRequestMap{"defaults": elicit("Please review and update the form fields with defaults", map[string]any{
		"name":     map[string]any{"type": "string", "default": "John Doe"},
		"age":      map[string]any{"type": "integer", "default": 30},
		"score":    map[string]any{"type": "number", "default": 95.5},
		"status":   map[string]any{"type": "string", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
		"verified": map[string]any{"type": "boolean", "default": true},
	})}, ""), nil
}

func elicitEnums(ctx context.Context, _ json.RawMessage) (any, error) {
	if got, ok := answered(ctx, "enums"); ok {
		return text("Elicitation completed: " + elicitText(got["enums"])), nil
	}
	titled := func(pairs ...string) []map[string]any {
		var out []map[string]any
		for i := 0; i+1 < len(pairs); i += 2 {
			out = append(out, map[string]any{"const": pairs[i], "title": pairs[i+1]})
		}
		return out
	}
	return inputRequired(sdk.InputRequestMap{"enums": elicit("Choose options", map[string]any{
		"untitledSingle": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}},
		"titledSingle":   map[string]any{"type": "string", "oneOf": titled("value1", "First Option", "value2", "Second Option", "value3", "Third Option")},
		"legacyEnum":     map[string]any{"type": "string", "enum": []string{"opt1", "opt2", "opt3"}, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
		"untitledMulti":  map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
		"titledMulti":    map[string]any{"type": "array", "items": map[string]any{"anyOf": titled("value1", "First Choice", "value2", "Second Choice", "value3", "Third Choice")}},
	})}, ""), nil
}
