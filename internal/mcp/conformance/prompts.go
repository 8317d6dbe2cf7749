package conformance

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/mcp"
	"github.com/neemias/neemias-mcp/internal/pipeline"
)

// Extend registers the prompt fixtures: prompts are not part of the capability spec, so they
// come through mcp.Options.Extend.
func Extend(s *sdk.Server) {
	msg := func(c sdk.Content) *sdk.PromptMessage { return &sdk.PromptMessage{Role: "user", Content: c} }
	s.AddPrompt(&sdk.Prompt{Name: "test_simple_prompt", Description: "A simple prompt without arguments."},
		func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{msg(&sdk.TextContent{Text: "This is a simple prompt for testing."})}}, nil
		})
	s.AddPrompt(&sdk.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with two required arguments.", Arguments: []*sdk.PromptArgument{
		{Name: "arg1", Description: "First test argument", Required: true},
		{Name: "arg2", Description: "Second test argument", Required: true},
	}}, func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		a := req.Params.Arguments
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{msg(&sdk.TextContent{
			Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])})}}, nil
	})
	s.AddPrompt(&sdk.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt embedding a resource.", Arguments: []*sdk.PromptArgument{
		{Name: "resourceUri", Description: "URI of the resource to embed", Required: true},
	}}, func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
			msg(&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."}}),
			msg(&sdk.TextContent{Text: "Please process the embedded resource above."}),
		}}, nil
	})
	s.AddPrompt(&sdk.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image."},
		func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
				msg(&sdk.ImageContent{Data: redPixelPNG, MIMEType: "image/png"}),
				msg(&sdk.TextContent{Text: "Please analyze the image above."}),
			}}, nil
		})
	s.AddPrompt(&sdk.Prompt{Name: "test_input_required_result_prompt", Description: "A prompt that first asks the user for context."},
		func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			if r, ok := req.Params.InputResponses["user_context"]; ok {
				return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{msg(&sdk.TextContent{Text: "Prompt using context: " + elicitText(r)})}}, nil
			}
			return &sdk.GetPromptResult{InputRequests: sdk.InputRequestMap{
				"user_context": elicit("What context should the prompt use?", map[string]any{"context": map[string]any{"type": "string"}}, "context"),
			}}, nil
		})
}

// Options returns runtime options serving the fixtures; the caller adds the edge (the
// verifier, the allowlist and the metadata URL).
func Options() mcp.Options {
	gate, err := pipeline.New(pipeline.Config{Catalog: Catalog()})
	if err != nil {
		panic(err) // the catalog is set just above
	}
	return mcp.Options{
		Gate:          gate,
		Name:          "neemias-mcp-conformance",
		Title:         "Neemias MCP conformance fixtures",
		Version:       "0.1.0",
		Instructions:  "Conformance fixtures of the Neemias MCP runtime.",
		Complete:      Complete,
		Logging:       true,
		Subscriptions: true,
		Extend:        Extend,
	}
}
