package conformance

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/mcp"
)

// Scope is the one scope every fixture needs.
const Scope = "conformance:test"

// A 1x1 red PNG and a tiny silent WAV, for the image and audio fixtures.
var (
	redPixelPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
	silentWAV, _   = base64.StdEncoding.DecodeString("UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=")
)

const noArgs = `{"type":"object","additionalProperties":false}`

// fixture is one capability with its schemas and behaviour.
type fixture struct {
	cap    capability.Capability
	input  string
	output string
	run    func(ctx context.Context, args json.RawMessage) (any, error)
}

func tool(name, desc, input string, run func(context.Context, json.RawMessage) (any, error)) fixture {
	return fixture{cap: capability.Capability{ID: name, Name: name, Kind: capability.KindTool, Description: desc, Scope: Scope, Source: "internal/mcp/conformance"}, input: input, run: run}
}

func resource(uri, desc, mime string, run func(context.Context, json.RawMessage) (any, error)) fixture {
	return fixture{cap: capability.Capability{ID: uri, Name: uri, Kind: capability.KindResource, URITemplate: uri, Description: desc, MIMEType: mime, Scope: Scope, TTLMillis: 60000, Source: "internal/mcp/conformance"}, input: noArgs, run: run}
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

var fixtures = []fixture{
	tool("test_simple_text", "Returns a fixed text.", noArgs, func(context.Context, json.RawMessage) (any, error) {
		return text("This is a simple text response for testing."), nil
	}),
	tool("test_image_content", "Returns a 1x1 PNG.", noArgs, func(context.Context, json.RawMessage) (any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{Data: redPixelPNG, MIMEType: "image/png"}}}, nil
	}),
	tool("test_audio_content", "Returns a short WAV.", noArgs, func(context.Context, json.RawMessage) (any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.AudioContent{Data: silentWAV, MIMEType: "audio/wav"}}}, nil
	}),
	tool("test_embedded_resource", "Returns an embedded text resource.", noArgs, func(context.Context, json.RawMessage) (any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{
			URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content.",
		}}}}, nil
	}),
	tool("test_multiple_content_types", "Returns text, image and an embedded resource.", noArgs, func(context.Context, json.RawMessage) (any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.TextContent{Text: "Multiple content types test:"},
			&sdk.ImageContent{Data: redPixelPNG, MIMEType: "image/png"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}},
		}}, nil
	}),
	tool("test_tool_with_logging", "Sends three info log notifications while it runs.", noArgs, func(ctx context.Context, _ json.RawMessage) (any, error) {
		for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			if i > 0 {
				time.Sleep(50 * time.Millisecond)
			}
			if err := mcp.Log(ctx, "info", "conformance", msg); err != nil {
				return nil, fmt.Errorf("logging: %w", err)
			}
		}
		return text("Tool with logging executed successfully"), nil
	}),
	tool("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100.", noArgs, func(ctx context.Context, _ json.RawMessage) (any, error) {
		for i, p := range []float64{0, 50, 100} {
			if i > 0 {
				time.Sleep(50 * time.Millisecond)
			}
			if err := mcp.Progress(ctx, p, 100, ""); err != nil {
				return nil, fmt.Errorf("progress: %w", err)
			}
		}
		return text("Tool with progress executed successfully"), nil
	}),
	tool("test_error_handling", "Always fails with a tool error.", noArgs, func(context.Context, json.RawMessage) (any, error) {
		return nil, &errs.Conflict{Reason: "This tool intentionally returns an error for testing"}
	}),
	tool("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", jsonSchema202012, func(context.Context, json.RawMessage) (any, error) {
		return text("JSON Schema 2020-12 tool executed"), nil
	}),
	tool("test_sampling", "Asks the client's LLM (input_required on 2026-07-28).", `{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"]}`, sampling),
	tool("test_elicitation", "Asks the user for input (input_required on 2026-07-28).", `{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`, elicitation),
	tool("test_elicitation_sep1034_defaults", "Elicitation with defaults for every primitive type.", noArgs, elicitDefaults),
	tool("test_elicitation_sep1330_enums", "Elicitation with every enum variant.", noArgs, elicitEnums),
	tool("test_missing_capability", "Needs the client's sampling capability; -32021 without it.", `{"type":"object"}`, func(ctx context.Context, _ json.RawMessage) (any, error) {
		if err := mcp.RequireClientCapability(ctx, "sampling"); err != nil {
			return nil, err
		}
		return text("sampling capability declared"), nil
	}),
	tool("test_streaming_elicitation", "Reports progress, then asks for input with an input_required result (never a server request).", `{"type":"object"}`,
		func(ctx context.Context, _ json.RawMessage) (any, error) {
			if got, ok := answered(ctx, "confirmation"); ok {
				return text("Streaming elicitation: " + elicitText(got["confirmation"])), nil
			}
			if err := mcp.Progress(ctx, 1, 2, "preparing the question"); err != nil {
				return nil, fmt.Errorf("progress: %w", err)
			}
			if err := mcp.RequireClientCapability(ctx, "elicitation"); err != nil {
				return nil, err
			}
			return inputRequired(sdk.InputRequestMap{"confirmation": elicit("Continue?", map[string]any{"ok": map[string]any{"type": "boolean"}}, "ok")}, ""), nil
		}),
	tool("test_logging_tool", "Logs at info level; clients see it only if they asked for logs.", `{"type":"object"}`,
		func(ctx context.Context, _ json.RawMessage) (any, error) {
			if err := mcp.Log(ctx, "info", "conformance", "test_logging_tool ran"); err != nil {
				return nil, fmt.Errorf("logging: %w", err)
			}
			return text("logged"), nil
		}),
	tool("test_custom_header", "Echoes a parameter that is mirrored in the Mcp-Param-Region header.",
		`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}`,
		func(_ context.Context, args json.RawMessage) (any, error) {
			var in struct {
				Region string `json:"region"`
			}
			_ = json.Unmarshal(args, &in)
			return text("region: " + in.Region), nil
		}),
	tool("test_input_required_result_elicitation", "input_required with one elicitation.", `{"type":"object"}`, mrtrElicitation),
	tool("test_input_required_result_sampling", "input_required with one sampling request.", `{"type":"object"}`, mrtrSampling),
	tool("test_input_required_result_list_roots", "input_required with one roots/list request.", `{"type":"object"}`, mrtrRoots),
	tool("test_input_required_result_request_state", "input_required with a sealed requestState.", `{"type":"object"}`, mrtrRequestState),
	tool("test_input_required_result_multiple_inputs", "input_required with three requests at once.", `{"type":"object"}`, mrtrMultiple),
	tool("test_input_required_result_multi_round", "Two input_required rounds, then complete.", `{"type":"object"}`, mrtrMultiRound),
	tool("test_input_required_result_tampered_state", "Rejects a requestState that fails verification.", `{"type":"object"}`, mrtrRequestState),
	tool("test_input_required_result_capabilities", "Asks only for what the client declared.", `{"type":"object"}`, mrtrCapabilities),

	resource("test://static-text", "A static text resource.", "text/plain", func(context.Context, json.RawMessage) (any, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "test://static-text", MIMEType: "text/plain", Text: "This is the content of the static text resource."}}}, nil
	}),
	resource("test://static-binary", "A static binary resource (PNG).", "image/png", func(context.Context, json.RawMessage) (any, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "test://static-binary", MIMEType: "image/png", Blob: redPixelPNG}}}, nil
	}),
	resource("test://watched-resource", "A resource clients may subscribe to.", "text/plain", func(context.Context, json.RawMessage) (any, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "test://watched-resource", MIMEType: "text/plain", Text: "Watched resource content."}}}, nil
	}),
	{
		cap: capability.Capability{ID: "test_template", Name: "test://template/{id}/data", Kind: capability.KindResourceTemplate,
			URITemplate: "test://template/{id}/data", Description: "Data for an id.", MIMEType: "application/json", Scope: Scope, TTLMillis: 60000,
			Inputs: []capability.Variable{{Name: "id", Type: "string", Required: true, Completable: true}}, Source: "internal/mcp/conformance"},
		input:  `{"type":"object","additionalProperties":false,"required":["id"],"properties":{"id":{"type":"string","minLength":1,"maxLength":64}}}`,
		output: `{"type":"object","additionalProperties":false,"required":["id","templateTest","data"],"properties":{"id":{"type":"string"},"templateTest":{"type":"boolean"},"data":{"type":"string"}}}`,
		run: func(_ context.Context, args json.RawMessage) (any, error) {
			var in struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, &errs.Invalid{Field: "id", Reason: "must be a string"}
			}
			return map[string]any{"id": in.ID, "templateTest": true, "data": "Data for ID: " + in.ID}, nil
		},
	},
}

const jsonSchema202012 = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},
"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},
"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],
"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},
"additionalProperties":false}`

// session are the fixtures that send log and progress notifications while they run: they
// need the engine's session (the fast path has none).
var session = map[string]bool{
	"test_tool_with_logging": true, "test_tool_with_progress": true, "test_streaming_elicitation": true, "test_logging_tool": true,
}

// Catalog returns the fixture catalog, in a stable order: every fixture with scope [Scope],
// its arguments validated by the one validator the server uses (internal/capability), then
// the fixture.
func Catalog() *capability.Catalog {
	entries := make([]capability.Entry, len(fixtures))
	for i, f := range fixtures {
		v, err := capability.NewValidator([]byte(f.input))
		if err != nil {
			panic(fmt.Sprintf("fixture %q: %v", f.cap.ID, err)) // the fixtures are constants
		}
		run := f.run
		entries[i] = capability.Entry{Capability: f.cap, InputSchema: json.RawMessage(f.input), Session: session[f.cap.ID],
			Invoke: func(ctx context.Context, _ capability.ScopeSet, args json.RawMessage) (any, error) {
				if err := v.Validate(args); err != nil {
					return nil, err
				}
				return run(ctx, args)
			}}
		if f.output != "" {
			entries[i].OutputSchema = json.RawMessage(f.output)
		}
	}
	c, err := capability.NewCatalog(nil, entries...)
	if err != nil {
		panic(err)
	}
	return c
}

// Complete suggests ids for the template fixture.
func Complete(_ context.Context, id, variable, prefix string) ([]string, error) {
	if id == "test_template" && variable == "id" {
		return []string{"123", "124", "200"}, nil
	}
	return nil, nil
}
