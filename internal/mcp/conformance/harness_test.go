package conformance_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neemias/neemias-mcp/internal/mcp/conformance"
	"github.com/neemias/neemias-mcp/internal/testsupport"
)

const harness = "testdata/harness"

// node returns the pinned Node 22 of the harness, installing the pinned npm packages first
// when one is missing (testsupport.HarnessNode: skips only without npm, installs under a lock
// shared with internal/server's tests).
func node(t *testing.T) string {
	t.Helper()
	return testsupport.HarnessNode(t, harness)
}

// startFixtures serves the conformance fixtures on loopback with the given token.
func startFixtures(t *testing.T, token string) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	h, err := conformance.NewServer(base, token, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = h
	srv.Start()
	t.Cleanup(srv.Close)
	return base + "/mcp"
}

type smoke struct {
	OK                        bool             `json:"ok"`
	Errors                    []map[string]any `json:"errors"`
	NegotiatedProtocolVersion string           `json:"negotiatedProtocolVersion"`
	SessionID                 *string          `json:"sessionId"`
	Tools                     []struct{ Name string }
	ResourceTemplates         []struct{ URITemplate string }
	Call                      struct{ Result map[string]any }
	Read                      struct{ Result map[string]any }
	HTTP                      []struct {
		RPC    string `json:"rpc"`
		Status int    `json:"status"`
	} `json:"http"`
}

// The official TypeScript SDK clients against the runtime, with a bearer token: 1.32.2 (2025
// era, initialize) and @modelcontextprotocol/client 2.x pinned to, or negotiating, 2026-07-28.
func TestTypeScriptClients(t *testing.T) {
	nodeBin := node(t)
	const token = "ts-client-token"
	url := startFixtures(t, token)
	tests := []struct {
		name        string
		args        []string
		wantVersion string
		initialize  bool
	}{
		{"sdk 1.32.2", nil, "2025-11-25", true},
		{"client 2.x pinned to 2026-07-28", []string{"--sdk", "v2", "--negotiate", "2026-07-28"}, "2026-07-28", false},
		{"client 2.x auto negotiation", []string{"--sdk", "v2", "--negotiate", "auto"}, "2026-07-28", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"client-smoke.mjs", url, "--token", token, "--call", "test_simple_text", "--read", "test://template/42/data"}, tc.args...)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, nodeBin, args...)
			cmd.Dir = harness
			out, err := cmd.Output()
			var res smoke
			if jerr := json.Unmarshal(out, &res); jerr != nil {
				t.Fatalf("client output is not JSON (%v; exit %v): %s", jerr, err, out)
			}
			if err != nil || !res.OK {
				t.Fatalf("client failed (%v): %v\n%s", err, res.Errors, out)
			}
			if res.NegotiatedProtocolVersion != tc.wantVersion {
				t.Errorf("negotiated %q, want %q", res.NegotiatedProtocolVersion, tc.wantVersion)
			}
			if res.SessionID != nil && *res.SessionID != "" {
				t.Errorf("session id %q", *res.SessionID)
			}
			sentInit := false
			for _, h := range res.HTTP {
				sentInit = sentInit || h.RPC == "initialize"
			}
			if sentInit != tc.initialize {
				t.Errorf("initialize sent = %v, want %v", sentInit, tc.initialize)
			}
			if len(res.Tools) == 0 || len(res.ResourceTemplates) == 0 {
				t.Errorf("lists are empty: %d tools, %d templates", len(res.Tools), len(res.ResourceTemplates))
			}
			if !strings.Contains(string(mustJSON(res.Call.Result)), "simple text response") {
				t.Errorf("call result = %v", res.Call.Result)
			}
			if !strings.Contains(string(mustJSON(res.Read.Result)), `Data for ID: 42`) {
				t.Errorf("read result = %v", res.Read.Result)
			}
		})
	}
}

// An unauthenticated TypeScript client sees the RFC 6750 challenge.
func TestTypeScriptClientWithoutToken(t *testing.T) {
	nodeBin := node(t)
	url := startFixtures(t, "secret")
	cmd := exec.Command(nodeBin, "client-smoke.mjs", url)
	cmd.Dir = harness
	out, _ := cmd.Output()
	if !strings.Contains(string(out), `"status": 401`) || !strings.Contains(string(out), "resource_metadata=") {
		t.Fatalf("want a 401 with resource_metadata; got %s", out)
	}
}

// The official conformance suites (both eras), as make conformance runs them. Skipped in -short.
func TestOfficialConformanceSuites(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the conformance suites take about 40 s")
	}
	node(t)
	script, _ := filepath.Abs(filepath.Join(harness, "run-conformance.sh"))
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, script, t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("conformance suites failed: %v\n%s", err, tail(string(out), 80))
	}
	for _, want := range []string{"expected failures: 4, failed: 4", "conformance-suites: 1 passed, 0 failed"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, tail(string(out), 80))
		}
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
