package upstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/pii"
	"github.com/neemias/neemias-mcp/internal/upstream"
)

const (
	canaryChild = "Maria Eduarda Canário"
	validCPF    = "529.982.247-25"
)

var church = uuid.MustParse("6f1c2d3e-0000-4000-8000-000000000001")

func caller() upstream.Caller {
	return upstream.Caller{ChurchID: church, UserID: uuid.MustParse("6f1c2d3e-0000-4000-8000-000000000002"), ClientID: "test-client"}
}

func knownValues(t *testing.T) upstream.KnownValuesFunc {
	t.Helper()
	k, err := pii.NewKnownValues([]pii.Value{
		{Kind: pii.KindChildName, Text: canaryChild},
		{Kind: pii.KindGuardianPhone, Text: "(11) 98765-4321"},
		{Kind: pii.KindBirthDate, Text: "2019-03-14"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return func(_ context.Context, c uuid.UUID) (*pii.KnownValues, error) {
		if c != church {
			return nil, errors.New("unknown church")
		}
		return k, nil
	}
}

func newClient(t *testing.T, ups []upstream.Upstream, ev upstream.Auditor) *upstream.Client {
	t.Helper()
	c, err := upstream.New(upstream.Config{Enabled: true, Upstreams: ups, Backoff: 10 * time.Millisecond},
		upstream.Options{Known: knownValues(t), Auditor: ev})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var allTools = []string{"lookup", "echo", "resource", "register", "upsert", "slow", "callback"}

func TestCallTool(t *testing.T) {
	for _, tc := range []struct {
		name     string
		tool     string
		args     map[string]any
		policy   upstream.Policy
		fail503  int
		cut      bool
		drop     int
		lookup   map[string]any
		timeout  time.Duration
		outcome  upstream.Outcome
		reason   upstream.Reason
		attempts int
		reached  int      // tools/call the upstream's MCP layer saw (503s included)
		errHas   []string // substrings of the error
		textHas  string   // substring of the first text content
		never    string   // never reached the upstream
	}{
		{name: "clean read", tool: "echo", args: map[string]any{"q": "horário do culto infantil"},
			outcome: upstream.OutcomeAllowed, attempts: 1, reached: 1, textHas: "culto infantil"},
		{name: "look-alikes pass both ways", tool: "echo",
			args:    map[string]any{"random11": "52998224726", "isbn": "978-85-333-0227-3", "order": "PED-2026-00012345678", "n": 12345678901},
			outcome: upstream.OutcomeAllowed, attempts: 1, reached: 1, textHas: "52998224726"},
		{name: "canary child name refused before sending", tool: "echo", args: map[string]any{"note": "buscar " + canaryChild},
			outcome: upstream.OutcomeRefused, reason: upstream.ReasonPIIDetected, attempts: 0, reached: 0,
			errHas: []string{`upstream "go"`, "known_name at $.arguments.note", "pii_detected"}, never: "Canário"},
		{name: "valid CPF refused before sending", tool: "register", args: map[string]any{"doc": map[string]any{"cpf": validCPF}},
			outcome: upstream.OutcomeRefused, reason: upstream.ReasonPIIDetected, attempts: 0, reached: 0,
			errHas: []string{"cpf at $.arguments.doc.cpf"}, never: "529.982"},
		{name: "request redacted", tool: "echo", args: map[string]any{"cpf": validCPF}, policy: upstream.Policy{Request: upstream.Redact},
			outcome: upstream.OutcomeAllowed, attempts: 1, reached: 1, textHas: "[redacted cpf]", never: "529.982"},
		{name: "PII in structured response dropped", tool: "lookup", lookup: map[string]any{"responsavel": "tel (11) 98765-4321"},
			outcome: upstream.OutcomeRefused, reason: upstream.ReasonPIIDetected, attempts: 1, reached: 1,
			errHas: []string{"the response was dropped", "$.structuredContent.responsavel", "$.content[0].text"}},
		{name: "PII in response redacted", tool: "lookup", lookup: map[string]any{"aluna": canaryChild, "nasc": "2019-03-14"},
			policy:  upstream.Policy{Response: upstream.Redact},
			outcome: upstream.OutcomeAllowed, attempts: 1, reached: 1, textHas: "[redacted known_name]"},
		{name: "PII in embedded resource contents dropped", tool: "resource",
			outcome: upstream.OutcomeRefused, reason: upstream.ReasonPIIDetected, attempts: 1, reached: 1,
			errHas: []string{"cpf at $.content[0].resource.text"}},
		{name: "read-only tool fails twice then succeeds", tool: "lookup", fail503: 2,
			outcome: upstream.OutcomeAllowed, attempts: 3, reached: 3, textHas: "Manual"},
		{name: "read-only tool that stays down", tool: "lookup", fail503: 5,
			outcome: upstream.OutcomeFailed, attempts: 3, reached: 3, errHas: []string{`upstream "go" is unavailable`, "3 attempt(s)"}},
		{name: "mutating tool is never retried", tool: "register", fail503: 2,
			outcome: upstream.OutcomeFailed, attempts: 1, reached: 1, errHas: []string{`upstream "go"`}},
		{name: "idempotent tool retried when no part of the answer arrived", tool: "upsert", drop: 2,
			outcome: upstream.OutcomeAllowed, attempts: 3, reached: 3, textHas: "upserted"},
		{name: "idempotent tool not retried after a 503 answer", tool: "upsert", fail503: 2,
			outcome: upstream.OutcomeFailed, attempts: 1, reached: 1},
		{name: "mutating tool not retried when the connection drops", tool: "register", drop: 1,
			outcome: upstream.OutcomeFailed, attempts: 1, reached: 1},
		{name: "idempotent tool cut mid-response is not retried", tool: "upsert", cut: true,
			outcome: upstream.OutcomeFailed, attempts: 1, reached: 1, errHas: []string{`upstream "go"`}},
		{name: "read-only tool cut mid-response is retried", tool: "lookup", cut: true,
			outcome: upstream.OutcomeFailed, attempts: 3, reached: 3},
		{name: "slow upstream times out", tool: "slow", timeout: 150 * time.Millisecond,
			outcome: upstream.OutcomeFailed, attempts: 3, errHas: []string{`upstream "go" is unavailable`, "timed out"}},
		{name: "an upstream cannot call back", tool: "callback",
			outcome: upstream.OutcomeAllowed, attempts: 1, reached: 1, textHas: "callbacks refused"},
		{name: "tool not allowlisted", tool: "hidden",
			outcome: upstream.OutcomeRefused, reason: upstream.ReasonNotAllowlisted, attempts: 0, reached: 0, errHas: []string{"not_allowlisted"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := newGoUpstream(t)
			u.fail503[tc.tool] = tc.fail503
			u.cut[tc.tool] = tc.cut
			u.drop[tc.tool] = tc.drop
			if tc.lookup != nil {
				u.lookupOut = tc.lookup
			}
			ev := &events{}
			c := newClient(t, []upstream.Upstream{{ID: "go", URL: u.URL, Tools: allTools, PII: tc.policy, CallTimeout: tc.timeout}}, ev)
			res, err := c.CallTool(context.Background(), caller(), "go", tc.tool, tc.args)
			got := ev.last(t)
			if got.Outcome != tc.outcome || got.Reason != tc.reason || got.Attempts != tc.attempts {
				t.Errorf("event = %s/%s after %d attempt(s), want %s/%s after %d (err %v)", got.Outcome, got.Reason, got.Attempts, tc.outcome, tc.reason, tc.attempts, err)
			}
			if got.Upstream != "go" || got.Tool != tc.tool || got.Caller.ClientID != "test-client" || got.Time.IsZero() {
				t.Errorf("event = %+v", got)
			}
			if tc.name != "slow upstream times out" {
				if n := u.called(tc.tool); n != tc.reached {
					t.Errorf("the upstream saw %d call(s) of %s, want %d", n, tc.tool, tc.reached)
				}
			}
			if tc.outcome == upstream.OutcomeAllowed {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				txt := res.Content[0].(*sdk.TextContent).Text
				if !strings.Contains(txt, tc.textHas) {
					t.Errorf("text = %q, want it to contain %q", txt, tc.textHas)
				}
			} else {
				var ue *upstream.Error
				if !errors.As(err, &ue) || res != nil {
					t.Fatalf("err = %v (%T), res = %v", err, err, res)
				}
				for _, s := range tc.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
				for _, leak := range []string{canaryChild, validCPF, "98765", "127.0.0.1"} {
					if strings.Contains(err.Error(), leak) {
						t.Errorf("error %q leaks %q", err, leak)
					}
				}
			}
			if tc.never != "" && u.received(tc.never) {
				t.Errorf("%q reached the upstream", tc.never)
			}
			if tc.reason == upstream.ReasonPIIDetected && tc.reached == 0 {
				if n := u.ln.accepts.Load(); n != 0 {
					t.Errorf("a request refused for personal data opened %d connection(s)", n)
				}
			}
			if tc.reason == upstream.ReasonPIIDetected && len(got.Findings) == 0 {
				t.Error("no findings in the audit event")
			}
		})
	}
}

func TestFlagOffOpensNoConnection(t *testing.T) {
	u := newGoUpstream(t)
	ev := &events{}
	c, err := upstream.New(upstream.Config{Upstreams: []upstream.Upstream{{ID: "go", URL: u.URL, Tools: allTools}}},
		upstream.Options{Auditor: ev})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(context.Background(), caller(), "go", "lookup", nil); !errors.Is(err, upstream.ErrDisabled) {
		t.Fatalf("CallTool err = %v, want ErrDisabled", err)
	}
	if _, err := c.Check(context.Background()); !errors.Is(err, upstream.ErrDisabled) {
		t.Fatalf("Check err = %v, want ErrDisabled", err)
	}
	if c.Enabled() || len(c.Upstreams()) != 0 {
		t.Error("a disabled client lists upstreams")
	}
	if n := u.ln.accepts.Load(); n != 0 {
		t.Fatalf("%d connection(s) accepted with the flag off", n)
	}
	if ev.len() != 0 {
		t.Fatal("a disabled client audited something")
	}
}

func TestNotAllowlistedOpensNoConnection(t *testing.T) {
	u := newGoUpstream(t)
	ev := &events{}
	c := newClient(t, []upstream.Upstream{{ID: "go", URL: u.URL, Tools: []string{"lookup"}}}, ev)
	for _, call := range [][2]string{{"go", "register"}, {"other", "lookup"}, {"go", "Lookup"}} {
		_, err := c.CallTool(context.Background(), caller(), call[0], call[1], nil)
		var ue *upstream.Error
		if !errors.As(err, &ue) || ue.Reason != upstream.ReasonNotAllowlisted {
			t.Fatalf("%v: err = %v", call, err)
		}
		if e := ev.last(t); e.Reason != upstream.ReasonNotAllowlisted || e.Upstream != call[0] || e.Tool != call[1] {
			t.Fatalf("event = %+v", e)
		}
	}
	if n := u.ln.accepts.Load(); n != 0 {
		t.Fatalf("%d connection(s) accepted for refused calls", n)
	}
}

func TestNotOffered(t *testing.T) {
	u := newGoUpstream(t)
	ev := &events{}
	c := newClient(t, []upstream.Upstream{{ID: "go", URL: u.URL, Tools: []string{"lookup", "missing"}}}, ev)
	_, err := c.CallTool(context.Background(), caller(), "go", "missing", nil)
	var ue *upstream.Error
	if !errors.As(err, &ue) || ue.Reason != upstream.ReasonNotOffered {
		t.Fatalf("err = %v", err)
	}
	reps, err := c.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, ts := range reps[0].Tools {
		got[ts.Name] = ts.Refused
	}
	want := map[string]string{"lookup": "", "missing": "not offered by the upstream", "register": "not allowlisted", "echo": "not allowlisted"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("check: %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}

func TestBearerIsTheUpstreamsOwn(t *testing.T) {
	u := newGoUpstream(t)
	f := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(f, []byte("upstream-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, []upstream.Upstream{{ID: "go", URL: u.URL, Tools: allTools, BearerTokenFile: f}}, nil)
	if _, err := c.CallTool(context.Background(), caller(), "go", "lookup", nil); err != nil {
		t.Fatal(err)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, a := range u.auth {
		if a != "Bearer upstream-secret" {
			t.Fatalf("Authorization = %q", a)
		}
	}
}

func TestDownUpstream(t *testing.T) {
	l := listen(t)
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	ev := &events{}
	c := newClient(t, []upstream.Upstream{{ID: "down", URL: "http://" + addr + "/mcp", Tools: []string{"register"}}}, ev)
	_, err := c.CallTool(context.Background(), caller(), "down", "register", nil)
	if err == nil || !strings.Contains(err.Error(), `upstream "down" is unavailable`) || strings.Contains(err.Error(), addr) {
		t.Fatalf("err = %v", err)
	}
	if e := ev.last(t); e.Outcome != upstream.OutcomeFailed || e.Attempts != 3 {
		t.Fatalf("event = %+v", e)
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	target := newGoUpstream(t)
	redirector := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusTemporaryRedirect))
	t.Cleanup(redirector.Close)
	c := newClient(t, []upstream.Upstream{{ID: "redir", URL: redirector.URL + "/mcp", Tools: []string{"lookup"}}}, nil)
	_, err := c.CallTool(context.Background(), caller(), "redir", "lookup", nil)
	if err == nil || !strings.Contains(err.Error(), "redirect") {
		t.Fatalf("err = %v", err)
	}
	if n := target.ln.accepts.Load(); n != 0 {
		t.Fatalf("the redirect target accepted %d connection(s)", n)
	}
}

func TestHTTPSUpstream(t *testing.T) {
	u := newGoUpstream(t) // its handler, served again over TLS
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxyTo(w, r, u.URL)
	}))
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the untrusted-certificate case logs handshake errors
	ts.StartTLS()
	t.Cleanup(ts.Close)
	pool := ts.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	c := newClient(t, []upstream.Upstream{{ID: "tls", URL: ts.URL + "/mcp", Tools: []string{"lookup"}, RootCAs: pool}}, nil)
	if _, err := c.CallTool(context.Background(), caller(), "tls", "lookup", nil); err != nil {
		t.Fatal(err)
	}
	// Without the CA the certificate is refused.
	c2 := newClient(t, []upstream.Upstream{{ID: "tls", URL: ts.URL + "/mcp", Tools: []string{"lookup"}}}, nil)
	if _, err := c2.CallTool(context.Background(), caller(), "tls", "lookup", nil); err == nil {
		t.Fatal("an untrusted certificate was accepted")
	}
}

func proxyTo(w http.ResponseWriter, r *http.Request, target string) {
	req, _ := http.NewRequestWithContext(r.Context(), r.Method, target, r.Body)
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	var buf [4096]byte
	for {
		n, err := resp.Body.Read(buf[:])
		w.Write(buf[:n])
		if err != nil {
			return
		}
	}
}

func TestConfigRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		up   upstream.Upstream
		want string
	}{
		{"stdio command", upstream.Upstream{ID: "a", Command: []string{"npx", "server"}, Tools: []string{"x"}}, "stdio"},
		{"stdio transport", upstream.Upstream{ID: "a", Transport: "stdio", URL: "http://127.0.0.1:1/mcp", Tools: []string{"x"}}, "stdio"},
		{"command as URL", upstream.Upstream{ID: "a", URL: "npx @modelcontextprotocol/server-everything", Tools: []string{"x"}}, "stdio"},
		{"plain http off loopback", upstream.Upstream{ID: "a", URL: "http://docs.example.com/mcp", Tools: []string{"x"}}, "https"},
		{"not canonical: upper-case host", upstream.Upstream{ID: "a", URL: "https://Docs.Example.com/mcp", Tools: []string{"x"}}, "canonical"},
		{"not canonical: default port", upstream.Upstream{ID: "a", URL: "https://docs.example.com:443/mcp", Tools: []string{"x"}}, "canonical"},
		{"userinfo", upstream.Upstream{ID: "a", URL: "https://u:p@docs.example.com/mcp", Tools: []string{"x"}}, "userinfo"},
		{"query", upstream.Upstream{ID: "a", URL: "https://docs.example.com/mcp?x=1", Tools: []string{"x"}}, "query"},
		{"no tools", upstream.Upstream{ID: "a", URL: "https://docs.example.com/mcp"}, "no tools"},
		{"all tools", upstream.Upstream{ID: "a", URL: "https://docs.example.com/mcp", Tools: []string{"*"}}, "never all"},
		{"bad id", upstream.Upstream{ID: "A B", URL: "https://docs.example.com/mcp", Tools: []string{"x"}}, "id"},
		{"bad mode", upstream.Upstream{ID: "a", URL: "https://docs.example.com/mcp", Tools: []string{"x"}, PII: upstream.Policy{Response: "mask"}}, "PII mode"},
		{"missing token file", upstream.Upstream{ID: "a", URL: "https://docs.example.com/mcp", Tools: []string{"x"}, BearerTokenFile: "/nonexistent/token"}, "token file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := upstream.New(upstream.Config{Enabled: true, Upstreams: []upstream.Upstream{tc.up}}, upstream.Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one about %q", err, tc.want)
			}
		})
	}
}

func TestPrivateAddressRefusedAtConnect(t *testing.T) {
	// An https URL whose host is a private address: refused by the SSRF rules before any
	// packet is sent (nothing listens on 10.255.255.1; a dial would hang until the timeout).
	c := newClient(t, []upstream.Upstream{{ID: "priv", URL: "https://10.255.255.1/mcp", Tools: []string{"x"}, ConnectTimeout: 5 * time.Second}}, nil)
	start := time.Now()
	_, err := c.CallTool(context.Background(), caller(), "priv", "x", nil)
	if err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatal("the refusal waited for a connection attempt")
	}
}

func TestParseFlags(t *testing.T) {
	ups, err := upstream.ParseFlags([]string{"docs=https://docs.example.com/mcp"}, []string{"docs=search, fetch"},
		[]string{"docs=/run/secrets/docs"}, []string{"docs=response:redact"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(ups)
	want := `[{"ID":"docs","URL":"https://docs.example.com/mcp","Transport":"","Command":null,"Tools":["search","fetch"],"PII":{"Request":"","Response":"redact"},"BearerTokenFile":"/run/secrets/docs","ConnectTimeout":0,"CallTimeout":0,"RootCAs":null}]`
	if string(b) != want {
		t.Fatalf("got %s", b)
	}
	if _, err := upstream.ParseFlags(nil, []string{"x=a"}, nil, nil); err == nil {
		t.Fatal("tools for an unknown upstream accepted")
	}
}

// TestConcurrentCalls shares one session among parallel callers; one caller's refusal does not
// affect the others.
func TestConcurrentCalls(t *testing.T) {
	u := newGoUpstream(t)
	ev := &events{}
	c := newClient(t, []upstream.Upstream{{ID: "go", URL: u.URL, Tools: allTools}}, ev)
	errs := make(chan error, 20)
	for i := range 20 {
		go func() {
			args := map[string]any{"i": i}
			if i%5 == 0 {
				args["cpf"] = validCPF
			}
			_, err := c.CallTool(context.Background(), caller(), "go", "echo", args)
			if (err != nil) != (i%5 == 0) {
				errs <- fmt.Errorf("call %d: err = %v", i, err)
				return
			}
			errs <- nil
		}()
	}
	for range 20 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if n := ev.len(); n != 20 {
		t.Fatalf("%d audit events, want 20", n)
	}
	if u.received(validCPF) {
		t.Fatal("a CPF reached the upstream")
	}
}
