package testsupport

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Recorder holds the request bodies that reached an upstream through Everything's proxy.
type Recorder struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (r *Recorder) add(b []byte) {
	r.mu.Lock()
	r.bodies = append(r.bodies, b)
	r.mu.Unlock()
}

// Saw reports whether any request body that reached the upstream contains s.
func (r *Recorder) Saw(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.bodies {
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

// Count is how many requests reached the upstream.
func (r *Recorder) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bodies)
}

// Everything starts the official @modelcontextprotocol/server-everything (pinned in the npm
// harness in dir, relative to the calling test's package) in Streamable HTTP mode on a free
// loopback port, behind a recording reverse proxy (so a test can assert what reached the
// upstream), and returns the proxy's MCP URL. It skips like HarnessNode.
func Everything(t *testing.T, dir string, env ...string) (string, *Recorder) {
	t.Helper()
	node := HarnessNode(t, dir)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "streamableHttp")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "PORT=" + strconv.Itoa(port)}, env...)
	var out Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(30 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything did not listen on %s:\n%s", addr, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	rec := &Recorder{}
	target, _ := url.Parse("http://" + addr)
	proxy := httputil.NewSingleHostReverseProxy(target)
	ps := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.add(body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(ps.Close)
	return ps.URL + "/mcp", rec
}
