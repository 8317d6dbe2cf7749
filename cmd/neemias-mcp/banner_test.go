package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neemias/neemias-mcp/internal/devdb"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// splitWords splits a command line as a POSIX shell would for what the banner prints:
// spaces separate words, double quotes group (with \" inside).
func splitWords(t *testing.T, line string) []string {
	t.Helper()
	var out []string
	var cur strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quoted && c == '\\' && i+1 < len(line) && line[i+1] == '"':
			cur.WriteByte('"')
			i++
		case c == '"':
			quoted, inWord = !quoted, true
		case c == ' ' && !quoted:
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unbalanced quotes in %q", line)
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

// freshEnv is the environment of a new terminal on a machine without Neemias settings.
func freshEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DATABASE_URL=") && !strings.HasPrefix(kv, "NEEMIAS_") {
			env = append(env, kv)
		}
	}
	return env
}

// TestBannerCommandsWork builds the real binary, runs `serve --demo` as a person would,
// and uses what the banner prints literally: the token command is run as printed (in a
// fresh environment, from another directory) and its token, the Claude Desktop snippet's
// header and the Inspector line's header are each used against the server.
func TestBannerCommandsWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, "neemias-mcp")
	if out, err := exec.Command("go", "build", "-o", exe, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dbURL := storetest.NewEmptyDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := exec.CommandContext(ctx, exe, "serve", "--demo", "--addr", "127.0.0.1:0", "--database-url", dbURL)
	srv.Env, srv.Dir, srv.Stderr = freshEnv(), dir, io.Discard
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })

	var lines []string
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if n := len(lines); n >= 2 && strings.TrimSpace(lines[n-2]) == "More tokens:" {
			break
		}
	}
	banner := strings.Join(lines, "\n")
	after := func(label string) string {
		for i, l := range lines {
			if strings.TrimSpace(l) == label && i+1 < len(lines) {
				return strings.TrimSpace(lines[i+1])
			}
		}
		t.Fatalf("banner lacks %q:\n%s", label, banner)
		return ""
	}
	var endpoint string
	for _, l := range lines {
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "MCP" && f[1] == "endpoint:" {
			endpoint = f[2]
		}
	}
	if endpoint == "" {
		t.Fatalf("no endpoint in:\n%s", banner)
	}
	call := func(what, authorization string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"neemias://roster/children"}}`))
		req.Header.Set("Authorization", authorization)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "total_children") {
			t.Errorf("%s: %d %s", what, resp.StatusCode, b)
		}
	}

	t.Run("token command", func(t *testing.T) {
		words := splitWords(t, after("More tokens:"))
		if words[0] != exe {
			t.Errorf("the command runs %q, want this binary %q", words[0], exe)
		}
		for _, want := range []string{"--public-url", "--database-url"} {
			if !strings.Contains(strings.Join(words, " "), want) {
				t.Errorf("the token command lacks %s: %v", want, words)
			}
		}
		cmd := exec.CommandContext(ctx, words[0], words[1:]...)
		cmd.Env, cmd.Dir = freshEnv(), t.TempDir()
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("running %v: %v", words, err)
		}
		call("the minted token", "Bearer "+strings.TrimSpace(string(out)))
	})
	t.Run("Claude Desktop snippets", func(t *testing.T) {
		for _, label := range []string{"with OAuth (log in as a demo user in the browser that opens):", "with the ADMIN token above:"} {
			var cfg struct {
				MCPServers map[string]struct {
					Command string            `json:"command"`
					Args    []string          `json:"args"`
					Env     map[string]string `json:"env"`
				} `json:"mcpServers"`
			}
			if err := json.Unmarshal([]byte(after(label)), &cfg); err != nil {
				t.Fatalf("%s: not JSON: %v", label, err)
			}
			s := cfg.MCPServers["neemias"]
			if s.Command != "npx" || len(s.Args) < 3 || s.Args[1] != "mcp-remote" || s.Args[2] != endpoint {
				t.Errorf("%s: %+v", label, s)
			}
			for _, a := range s.Args {
				if strings.ContainsAny(a, " \t") {
					t.Errorf("%s: argument %q has a space (Windows splits it)", label, a)
				}
			}
			if h := s.Env["AUTH_HEADER"]; h != "" {
				var header string
				for i, a := range s.Args {
					if a == "--header" && i+1 < len(s.Args) {
						header = strings.ReplaceAll(s.Args[i+1], "${AUTH_HEADER}", h)
					}
				}
				name, value, _ := strings.Cut(header, ":")
				if name != "Authorization" {
					t.Fatalf("header %q", header)
				}
				call("the Claude Desktop header", strings.TrimSpace(value))
			}
		}
	})
	t.Run("Inspector", func(t *testing.T) {
		label := ""
		for _, l := range lines {
			if strings.HasPrefix(l, "MCP Inspector") {
				label = strings.TrimSpace(l)
			}
		}
		if !strings.Contains(label, "Node.js "+InspectorNode) {
			t.Errorf("the Inspector line does not say it needs Node %s: %q", InspectorNode, label)
		}
		words := splitWords(t, after(label))
		var header string
		for i, w := range words {
			if w == "--header" && i+1 < len(words) {
				header = words[i+1]
			}
		}
		if words[0] != "npx" || !containsWord(words, endpoint) || !containsWord(words, "--cli") {
			t.Errorf("Inspector command %v", words)
		}
		_, value, _ := strings.Cut(header, ":")
		call("the Inspector header", strings.TrimSpace(value))
	})
}

func containsWord(words []string, w string) bool {
	for _, x := range words {
		if x == w {
			return true
		}
	}
	return false
}

func TestDatabaseFlag(t *testing.T) {
	for _, tc := range []struct {
		db   devdb.DB
		want string
	}{
		{devdb.DB{Source: "local", URL: "postgres://postgres@127.0.0.1:5432/neemias?sslmode=disable"}, ""},
		{devdb.DB{Source: "private cluster", URL: "postgres://postgres@127.0.0.1:41234/neemias?sslmode=disable"}, ` --database-url "postgres://postgres@127.0.0.1:41234/neemias?sslmode=disable"`},
		{devdb.DB{Source: "DATABASE_URL", URL: "postgres://app:s3cret@db.example/neemias"}, ` --database-url "$DATABASE_URL"`},
		{devdb.DB{Source: "DATABASE_URL", URL: "postgres://app@db.example/neemias"}, ` --database-url postgres://app@db.example/neemias`},
	} {
		if got := databaseFlag(&tc.db); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.db.Source, tc.db.URL, got, tc.want)
		}
	}
}
