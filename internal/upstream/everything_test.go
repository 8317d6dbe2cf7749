package upstream_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/testsupport"
	"github.com/neemias/neemias-mcp/internal/upstream"
)

const harness = "../mcp/conformance/testdata/harness"

// everything starts server-everything behind a recording proxy (testsupport.Everything).
func everything(t *testing.T, env ...string) (string, *testsupport.Recorder) {
	t.Helper()
	return testsupport.Everything(t, harness, env...)
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
			if tc.never != "" && rec.Saw(tc.never) {
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
