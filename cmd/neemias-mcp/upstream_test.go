package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeUpstream serves an MCP server with the named tools (echo read-only) on loopback.
func fakeUpstream(t *testing.T, tools ...string) string {
	srv := sdk.NewServer(&sdk.Implementation{Name: "docs", Version: "1"}, nil)
	for _, name := range tools {
		srv.AddTool(&sdk.Tool{Name: name, InputSchema: map[string]any{"type": "object"}, Annotations: &sdk.ToolAnnotations{ReadOnlyHint: name == "echo"}},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{}, nil
			})
	}
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

// TestUpstreamCheck: the check command checks what serve would offer: the spec's upstreams
// (docs, exposing echo) with the runtime URLs.
func TestUpstreamCheck(t *testing.T) {
	withEcho := fakeUpstream(t, "echo", "delete_all")
	withoutEcho := fakeUpstream(t, "search")
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
		wantOut []string
	}{
		{"off by default", nil, "upstreams are off", nil},
		{"exposed and refused", []string{"--upstreams", "on", "--upstream", "docs=" + withEcho}, "",
			[]string{"exposed  echo", "retried (readOnly)", "refused  delete_all", "not allowlisted"}},
		{"allowlisted tool missing", []string{"--upstreams", "on", "--upstream", "docs=" + withoutEcho}, `allowlisted tool "echo" not offered`,
			[]string{"refused  echo", "not offered by the upstream"}},
		{"an upstream the spec does not declare", []string{"--upstreams", "on", "--upstream", "wiki=" + withEcho}, `upstream "wiki" is configured`, nil},
		{"a tool the spec does not declare", []string{"--upstreams", "on", "--upstream", "docs=" + withEcho, "--upstream-tools", "docs=echo,delete_all"},
			`tool "delete_all" is not declared for upstream "docs"`, nil},
		{"stdio refused", []string{"--upstreams", "on", "--upstream", "docs=npx docs-server"}, "stdio", nil},
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

// TestUpstreamEnvironment: the upstream settings come from the variables config.EnvName makes
// of their flags (--upstream ⇒ $NEEMIAS_UPSTREAM), list entries ';'-separated since they hold
// commas; the old names ($NEEMIAS_UPSTREAM_URLS, …) are not read.
func TestUpstreamEnvironment(t *testing.T) {
	withEcho := fakeUpstream(t, "echo", "delete_all")
	token := filepath.Join(t.TempDir(), "docs-token")
	if err := os.WriteFile(token, []byte("t0ken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		wantErr string
		wantOut string
	}{
		{"one upstream", map[string]string{"NEEMIAS_UPSTREAM": "docs=" + withEcho, "NEEMIAS_UPSTREAM_TOOLS": "docs=echo",
			"NEEMIAS_UPSTREAM_PII": "docs=request:enforce,response:enforce"}, "", "exposed  echo"},
		{"entries ';'-separated", map[string]string{"NEEMIAS_UPSTREAM": "docs=" + withEcho + "; wiki=" + withEcho}, `upstream "wiki" is configured`, ""},
		{"the old names are not read", map[string]string{"NEEMIAS_UPSTREAM_URLS": "docs=" + withEcho}, "no upstream configured", ""},
		// docs/operations.md's example, with the shipped spec (docs: enforce both ways).
		{"operations.md's example", map[string]string{"NEEMIAS_UPSTREAM": "docs=" + withEcho, "NEEMIAS_UPSTREAM_TOOLS": "docs=echo",
			"NEEMIAS_UPSTREAM_TOKEN_FILE": "docs=" + token, "NEEMIAS_UPSTREAM_PII": "docs=request:enforce,response:enforce"}, "", "exposed  echo"},
		// issue 26: the runtime may tighten the spec's policy, never loosen it.
		{"loosening refused", map[string]string{"NEEMIAS_UPSTREAM": "docs=" + withEcho, "NEEMIAS_UPSTREAM_PII": "docs=request:enforce,response:redact"},
			`--upstream-pii docs: response:redact would loosen the spec's policy for upstream "docs" (response: enforce in spec/capabilities.yaml upstreams.docs.pii)`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NEEMIAS_UPSTREAMS", "on")
			for _, k := range []string{"NEEMIAS_UPSTREAM", "NEEMIAS_UPSTREAM_TOOLS", "NEEMIAS_UPSTREAM_PII", "NEEMIAS_UPSTREAM_TOKEN_FILE", "NEEMIAS_UPSTREAM_URLS"} {
				t.Setenv(k, tc.env[k])
			}
			cmd := root()
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			cmd.SetArgs([]string{"upstream", "check"})
			err := cmd.Execute()
			if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q\n%s", err, tc.wantErr, out.String())
			}
			if !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("output lacks %q:\n%s", tc.wantOut, out.String())
			}
		})
	}
}
