package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestUpstreamCheck(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "docs", Version: "1"}, nil)
	for _, name := range []string{"search", "delete_all"} {
		srv.AddTool(&sdk.Tool{Name: name, InputSchema: map[string]any{"type": "object"}, Annotations: &sdk.ToolAnnotations{ReadOnlyHint: name == "search"}},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{}, nil
			})
	}
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	defer hs.Close()
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
		wantOut []string
	}{
		{"off by default", nil, "upstreams are off", nil},
		{"exposed and refused", []string{"--upstreams", "on", "--upstream", "docs=" + hs.URL + "/mcp", "--upstream-tools", "docs=search"}, "",
			[]string{"exposed  search", "retried (readOnly)", "refused  delete_all", "not allowlisted"}},
		{"allowlisted tool missing", []string{"--upstreams", "on", "--upstream", "docs=" + hs.URL + "/mcp", "--upstream-tools", "docs=search,gone"}, `allowlisted tool "gone" not offered`,
			[]string{"refused  gone", "not offered by the upstream"}},
		{"stdio refused", []string{"--upstreams", "on", "--upstream", "docs=npx docs-server", "--upstream-tools", "docs=search"}, "stdio", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NEEMIAS_UPSTREAMS", "")
			cmd := root()
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			cmd.SetArgs(append([]string{"upstream", "check"}, tc.args...))
			err := cmd.Execute()
			if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q\n%s", err, tc.wantErr, out.String())
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}
