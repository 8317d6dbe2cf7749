package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/neemias/neemias-mcp/internal/store/storetest"
	"github.com/neemias/neemias-mcp/internal/testsupport"
)

// TestServeDemo runs what `make run` runs (serve --demo) against a fresh database and uses
// the printed endpoint and token like a person would.
func TestServeDemo(t *testing.T) {
	dbURL := storetest.NewEmptyDatabase(t)
	ctx, cancel := context.WithCancel(context.Background())
	var out testsupport.Buffer
	cmd := root()
	cmd.SetOut(&out)
	cmd.SetErr(io.Discard)
	cmd.SetArgs([]string{"serve", "--demo", "--addr", "127.0.0.1:0", "--database-url", dbURL})
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("serve did not stop")
		}
	})

	endpoint := regexp.MustCompile(`MCP endpoint:\s+(\S+)`)
	admin := regexp.MustCompile(`ADMIN\s+admin@demo\.neemias\.test\s+(\S+)`)
	deadline := time.Now().Add(90 * time.Second)
	for !(endpoint.MatchString(out.String()) && admin.MatchString(out.String())) {
		select {
		case err := <-done:
			done <- nil // let the cleanup see it has stopped
			t.Fatalf("serve exited early: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no instructions printed:\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	text := out.String()
	for _, want := range []string{"mcp-remote", "@modelcontextprotocol/inspector", "responsavel@demo.neemias.test", `password "demo"`} {
		if !strings.Contains(text, want) {
			t.Errorf("instructions lack %q", want)
		}
	}
	url := endpoint.FindStringSubmatch(text)[1]
	token := admin.FindStringSubmatch(text)[1]

	body := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"neemias://roster/children"}}`
	var resp *http.Response
	var err error
	for range 50 { // the listener is up before the instructions print, but be patient
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		if resp, err = http.DefaultClient.Do(req); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `total_children`) {
		t.Fatalf("read with the printed token: %d %s", resp.StatusCode, b)
	}
	if !strings.Contains(string(b), `\"total_children\":300`) {
		t.Errorf("the demo church should have 300 children: %s", b)
	}
	// Issue 24: the main listener is the public one; /metrics is not on it unless asked for
	// (--metrics-public), although metrics are on by default.
	m, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	m.Body.Close()
	if m.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics on the main listener by default: %d, want 404", m.StatusCode)
	}
}

func TestTokenCommandRefusesScopesBeyondTheRole(t *testing.T) {
	dbURL := storetest.NewEmptyDatabase(t)
	var out, errOut bytes.Buffer
	cmd := root()
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs([]string{"token", "--email", "responsavel@demo.neemias.test", "--scopes", "roster:read", "--database-url", dbURL})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), `role RESPONSAVEL cannot hold scope "roster:read"`) {
		t.Fatalf("err = %v", err)
	}
	cmd = root()
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs([]string{"token", "--email", "voluntario@demo.neemias.test", "--scopes", "roster:read", "--database-url", dbURL})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if tok := strings.TrimSpace(out.String()); strings.Count(tok, ".") != 2 {
		t.Errorf("not a JWT: %q", tok)
	}
}

func TestMigrateCommands(t *testing.T) {
	dbURL := storetest.NewEmptyDatabase(t)
	run := func(args ...string) string {
		var out bytes.Buffer
		cmd := root()
		cmd.SetOut(&out)
		cmd.SetErr(io.Discard)
		cmd.SetArgs(append(args, "--database-url", dbURL))
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return out.String()
	}
	if got := run("migrate", "status"); !strings.Contains(got, "00001_app_role.sql") || strings.Contains(got, "applied=true") {
		t.Fatalf("status on an empty database:\n%s", got)
	}
	if got := run("migrate", "up"); strings.Contains(got, "applied=false") {
		t.Fatalf("up left migrations pending:\n%s", got)
	}
	if got := run("migrate", "up"); strings.Contains(got, "applied=false") {
		t.Fatalf("a second up must be a no-op:\n%s", got)
	}
	if got := run("migrate", "status"); strings.Contains(got, "applied=false") {
		t.Fatalf("status after up:\n%s", got)
	}
}
