package upstream_test

import (
	"bytes"
	"context"
	"errors"
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
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/testsupport"
	"github.com/neemias/neemias-mcp/internal/upstream"
)

const harness = "../mcp/conformance/testdata/harness"

// everything starts the official @modelcontextprotocol/server-everything (pinned in the
// harness) in Streamable HTTP mode on a free loopback port, behind a recording reverse proxy
// (so the test can assert what reached the upstream), and returns the proxy's MCP URL.
func everything(t *testing.T, env ...string) (string, *recorder) {
	t.Helper()
	node := testsupport.HarnessNode(t, harness)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, filepath.Join(harness, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "streamableHttp")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "PORT=" + strconv.Itoa(port)}, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
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
	rec := &recorder{}
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

type recorder struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (r *recorder) add(b []byte) {
	r.mu.Lock()
	r.bodies = append(r.bodies, b)
	r.mu.Unlock()
}

func (r *recorder) saw(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.bodies {
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

func TestServerEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("starts node")
	}
	// get-env returns the server's environment: personal data in a response to a clean request.
	url, rec := everything(t, "CANARY_GUARDIAN=Responsável CPF "+validCPF, "CANARY_CHILD="+canaryChild)
	tools := []string{"echo", "get-env", "get-structured-content"}
	for _, tc := range []struct {
		name    string
		tool    string
		args    map[string]any
		policy  upstream.Policy
		outcome upstream.Outcome
		errHas  []string
		textHas string
		never   string
	}{
		{name: "echo clean", tool: "echo", args: map[string]any{"message": "ensaio do coral às 19h"},
			outcome: upstream.OutcomeAllowed, textHas: "Echo: ensaio do coral"},
		{name: "echo look-alikes", tool: "echo", args: map[string]any{"message": "pedido 52998224726, ISBN 978-85-333-0227-3, pedido PED-2026-000123-45, telefone da loja 0800 123 4567"},
			outcome: upstream.OutcomeAllowed, textHas: "52998224726"},
		{name: "echo canary child name refused before sending", tool: "echo", args: map[string]any{"message": "a " + canaryChild + " chegou"},
			outcome: upstream.OutcomeRefused, errHas: []string{`upstream "everything"`, "known_name at $.arguments.message"}, never: "Canário"},
		{name: "echo valid CPF refused before sending", tool: "echo", args: map[string]any{"message": "cpf " + validCPF},
			outcome: upstream.OutcomeRefused, errHas: []string{"cpf at $.arguments.message"}, never: validCPF},
		{name: "echo with the request redacted", tool: "echo", args: map[string]any{"message": "cpf " + validCPF},
			policy: upstream.Policy{Request: upstream.Redact}, outcome: upstream.OutcomeAllowed, textHas: "[redacted cpf]", never: validCPF},
		{name: "clean request, personal data in the response", tool: "get-env", args: map[string]any{},
			outcome: upstream.OutcomeRefused, errHas: []string{"personal data in the response", "$.content[0].text", "the response was dropped"}},
		{name: "response redacted", tool: "get-env", args: map[string]any{}, policy: upstream.Policy{Response: upstream.Redact},
			outcome: upstream.OutcomeAllowed, textHas: "[redacted cpf]"},
		{name: "structured content passes", tool: "get-structured-content", args: map[string]any{"location": "Chicago"},
			outcome: upstream.OutcomeAllowed, textHas: "drizzle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := &events{}
			c := newClient(t, []upstream.Upstream{{ID: "everything", URL: url, Tools: tools, PII: tc.policy}}, ev)
			res, err := c.CallTool(context.Background(), caller(), "everything", tc.tool, tc.args)
			if e := ev.last(t); e.Outcome != tc.outcome {
				t.Fatalf("outcome %s, want %s (err %v)", e.Outcome, tc.outcome, err)
			}
			if tc.outcome == upstream.OutcomeAllowed {
				if err != nil {
					t.Fatal(err)
				}
				txt := res.Content[0].(*sdk.TextContent).Text
				if !strings.Contains(txt, tc.textHas) {
					t.Fatalf("text %q lacks %q", txt, tc.textHas)
				}
				for _, leak := range []string{validCPF, canaryChild} {
					if strings.Contains(txt, leak) {
						t.Fatalf("returned text leaks %q", leak)
					}
				}
			} else {
				var ue *upstream.Error
				if !errors.As(err, &ue) || ue.Reason != upstream.ReasonPIIDetected {
					t.Fatalf("err = %v", err)
				}
				for _, s := range tc.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
			}
			if tc.never != "" && rec.saw(tc.never) {
				t.Fatalf("%q reached server-everything", tc.never)
			}
		})
	}

	t.Run("check", func(t *testing.T) {
		c := newClient(t, []upstream.Upstream{{ID: "everything", URL: url, Tools: []string{"echo", "no-such-tool"}}}, nil)
		reps, err := c.Check(context.Background())
		if err != nil || len(reps) != 1 || reps[0].Err != "" {
			t.Fatalf("reps = %+v, err = %v", reps, err)
		}
		var b bytes.Buffer
		upstream.WriteReports(&b, reps)
		for _, want := range []string{"exposed  echo", "refused  get-env", "not allowlisted", "refused  no-such-tool", "not offered by the upstream", "retried (readOnly, idempotent)"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("report lacks %q:\n%s", want, b.String())
			}
		}
	})
}
