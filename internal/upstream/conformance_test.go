package upstream_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/mcp/conformance"
	"github.com/neemias/neemias-mcp/internal/upstream"
)

// TestConformanceFixtureServer uses the project's own conformance fixture server (the one the
// official suites run against, cmd/neemias-conformance) as an upstream: a real MCP server on
// loopback that demands its own bearer token, speaks the current protocol and returns every
// kind of content. The governed client calls the allowlisted fixtures, scans what comes back
// (text, images, embedded resources), refuses the rest before connecting, and refuses a CPF
// in the arguments before any tools/call reaches the server.
func TestConformanceFixtureServer(t *testing.T) {
	l := listen(t)
	base := "http://" + l.Addr().String()
	h, err := conformance.NewServer(base, "fixture-secret", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var calls []string // the tools/call bodies the fixture server received
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			mu.Lock()
			calls = append(calls, string(body))
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })

	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("fixture-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	c := newClient(t, []upstream.Upstream{{ID: "fixtures", URL: base + "/mcp", BearerTokenFile: token,
		Tools: []string{"test_simple_text", "test_multiple_content_types", "test_custom_header", "test_error_handling"}}}, ev)
	ctx := context.Background()
	received := func() int { mu.Lock(); defer mu.Unlock(); return len(calls) }

	for _, tc := range []struct {
		tool string
		args map[string]any
		want string // a text the result must hold
	}{
		{"test_simple_text", nil, "test"},
		{"test_multiple_content_types", nil, ""},
		{"test_custom_header", map[string]any{"region": "sul"}, "region: sul"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			res, err := c.CallTool(ctx, caller(), "fixtures", tc.tool, tc.args)
			if err != nil || res == nil || res.IsError || len(res.Content) == 0 {
				t.Fatalf("CallTool(%s) = %+v, %v; want content", tc.tool, res, err)
			}
			if tc.want != "" {
				var texts []string
				for _, ct := range res.Content {
					if tx, ok := ct.(*sdk.TextContent); ok {
						texts = append(texts, tx.Text)
					}
				}
				if !strings.Contains(strings.Join(texts, "\n"), tc.want) {
					t.Errorf("text of %s = %q; want it to hold %q", tc.tool, texts, tc.want)
				}
			}
			if e := ev.last(t); e.Outcome != upstream.OutcomeAllowed || e.Upstream != "fixtures" || e.Tool != tc.tool {
				t.Errorf("audit event = %+v; want allowed for fixtures/%s", e, tc.tool)
			}
		})
	}

	t.Run("an upstream tool error is the upstream's, not a failure", func(t *testing.T) {
		res, err := c.CallTool(ctx, caller(), "fixtures", "test_error_handling", nil)
		if err != nil || res == nil || !res.IsError {
			t.Fatalf("CallTool = %+v, %v; want the fixture's tool error passed on", res, err)
		}
	})

	t.Run("a CPF in the arguments never reaches the upstream", func(t *testing.T) {
		before := received()
		if before == 0 {
			t.Fatal("the fixture server's counter saw none of the calls above")
		}
		_, err := c.CallTool(ctx, caller(), "fixtures", "test_custom_header", map[string]any{"region": validCPF})
		var ue *upstream.Error
		if !errors.As(err, &ue) || ue.Reason != upstream.ReasonPIIDetected || strings.Contains(err.Error(), validCPF) {
			t.Fatalf("err = %v; want a pii_detected refusal that does not repeat the value", err)
		}
		if n := received() - before; n != 0 {
			t.Fatalf("the fixture server received %d tools/call request(s) for a refused call", n)
		}
	})

	t.Run("a fixture not allowlisted is refused", func(t *testing.T) {
		before := received()
		_, err := c.CallTool(ctx, caller(), "fixtures", "test_image_content", nil)
		var ue *upstream.Error
		if !errors.As(err, &ue) || ue.Reason != upstream.ReasonNotAllowlisted {
			t.Fatalf("err = %v; want not_allowlisted", err)
		}
		if n := received() - before; n != 0 {
			t.Fatalf("the fixture server received %d tools/call request(s) for a refused call", n)
		}
	})
}
