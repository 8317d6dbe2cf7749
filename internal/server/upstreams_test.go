package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/server"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
	"github.com/neemias/neemias-mcp/internal/testsupport"
	"github.com/neemias/neemias-mcp/internal/upstream"
)

// TestUpstreamTools: the spec's upstream docs (server-everything's echo as neemias_docs_echo)
// on the assembled server, with a real @modelcontextprotocol/server-everything on loopback:
// off, the tool is absent and nothing reaches the upstream; on, it is listed to callers with
// its scope and callable through /mcp, a seeded child's name in the arguments is refused
// before any byte reaches the upstream, and every call has its audit row.
func TestUpstreamTools(t *testing.T) {
	if testing.Short() {
		t.Skip("starts node and PostgreSQL")
	}
	t.Parallel()
	const tool = "neemias_docs_echo"
	url, rec := testsupport.Everything(t, "../mcp/conformance/testdata/harness")

	t.Run("off", func(t *testing.T) {
		a := newAppWith(t, server.Config{Upstreams: upstream.Config{Enabled: false, Upstreams: []upstream.Upstream{{ID: "docs", URL: url}}}})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs, _ := a.connect(t, ctx, eras[0], a.token(t, admin))
		if slices.Contains(toolNames(t, cs), tool) {
			t.Errorf("%s listed with upstreams off", tool)
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"message": "x"}})
		if err == nil && !res.IsError {
			t.Errorf("%s callable with upstreams off: %+v", tool, res)
		}
		if n := rec.Count(); n != 0 {
			t.Errorf("%d requests reached the upstream with upstreams off", n)
		}
	})

	a := newAppWith(t, server.Config{Upstreams: upstream.Config{Enabled: true, Upstreams: []upstream.Upstream{{ID: "docs", URL: url}}}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	t.Run("listed by scope", func(t *testing.T) {
		cs, _ := a.connect(t, ctx, eras[0], a.token(t, admin))
		if !slices.Contains(toolNames(t, cs), tool) {
			t.Errorf("%s not listed to ADMIN (roster:read)", tool)
		}
		cs, _ = a.connect(t, ctx, eras[0], a.token(t, responsavel))
		if slices.Contains(toolNames(t, cs), tool) {
			t.Errorf("%s listed to RESPONSAVEL, whose role has no roster:read", tool)
		}
	})

	t.Run("the upstream's schema and hints", func(t *testing.T) {
		cs, _ := a.connect(t, ctx, eras[0], a.token(t, admin))
		var echo *sdk.Tool
		for lt, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			if lt.Name == tool {
				echo = lt
			}
		}
		if echo == nil {
			t.Fatalf("%s not listed", tool)
		}
		b, _ := json.Marshal(echo.InputSchema)
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(b, &schema); err != nil || schema.Type != "object" || schema.Properties["message"] == nil {
			t.Errorf("input schema of %s = %s; want server-everything's echo schema (with message)", tool, b)
		}
		// The upstream's free text (echo's "Message to echo") is untrusted: not shown to agents.
		if bytes.Contains(b, []byte(`"description"`)) || bytes.Contains(b, []byte(`"title"`)) {
			t.Errorf("input schema of %s = %s; want the upstream's descriptions and titles removed", tool, b)
		}
		// echo declares readOnly, idempotent, not destructive and openWorld false: the first
		// three are the upstream's to say, openWorld is ours (the call leaves Neemias).
		a := echo.Annotations
		if a == nil || a.OpenWorldHint == nil || !*a.OpenWorldHint || !a.ReadOnlyHint || !a.IdempotentHint ||
			a.DestructiveHint == nil || *a.DestructiveHint {
			t.Errorf("annotations of %s = %+v; want readOnly, idempotent, not destructive (echo's) and openWorld true", tool, a)
		}
	})

	t.Run("callable", func(t *testing.T) {
		cs, _ := a.connect(t, ctx, eras[0], a.token(t, admin))
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"message": "ensaio do coral às 19h"}})
		if err != nil || res.IsError {
			t.Fatalf("call: %v %+v", err, res)
		}
		if len(res.Content) == 0 || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "ensaio do coral") {
			t.Errorf("echo answered %+v", res.Content)
		}
		if !rec.Saw("ensaio do coral") {
			t.Error("the call did not reach the upstream")
		}
	})

	t.Run("a child's name refused before sending", func(t *testing.T) {
		child := a.one(t, `SELECT name FROM children WHERE church_id = $1 AND name LIKE '% %' ORDER BY name LIMIT 1`, seed.DemoChurchID)
		cs, _ := a.connect(t, ctx, eras[0], a.token(t, admin))
		refusedBeforeSending(t, ctx, cs, rec, tool, "a "+child+" chegou", child, true)
	})

	t.Run("a child enrolled now is refused at once", func(t *testing.T) {
		// The known values of the church are cached (the calls above loaded them); the
		// enrollment must drop them, not leave the new name unprotected for the loader's TTL.
		const canary = "Zzupstream Quiriquinha"
		cs, _ := a.connect(t, ctx, eras[0], a.token(t, admin))
		if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"message": "aquecendo"}}); err != nil || res.IsError {
			t.Fatalf("warm-up call: %v %+v", err, res)
		}
		birth := a.one(t, `SELECT ((now() AT TIME ZONE 'America/Sao_Paulo')::date - interval '7 years 2 months')::date::text`)
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "neemias_child_enroll", Arguments: map[string]any{
			"name": canary, "birth_date": birth,
			"guardian": map[string]any{"name": "Zzupstream Responsavel", "phone": "(11) 98765-1234", "relationship": "mother"},
			"consent":  map[string]any{"granted": true, "text_version": "v1", "legal_basis": "consent"},
		}})
		if err != nil || res.IsError {
			t.Fatalf("enroll: %v %+v", err, res)
		}
		refusedBeforeSending(t, ctx, cs, rec, tool, "buscar "+canary+" às 12h", canary, true)
		got := a.query(t, `SELECT action FROM audit_log WHERE capability = 'upstream:docs/echo' ORDER BY id DESC LIMIT 1`)
		if len(got) != 1 || !strings.HasPrefix(got[0], "call.pii_detected.request") {
			t.Errorf("last audit action of upstream:docs/echo = %v; want call.pii_detected.request…", got)
		}
	})

	t.Run("a valid CPF refused before sending", func(t *testing.T) {
		const cpf = "529.982.247-25"
		cs, _ := a.connect(t, ctx, eras[1], a.token(t, cadastro))
		refusedBeforeSending(t, ctx, cs, rec, tool, "cpf "+cpf, cpf, false)
	})

	t.Run("audit rows", func(t *testing.T) {
		got := a.query(t, `SELECT action || ' ' || outcome FROM audit_log WHERE capability = 'upstream:docs/echo' ORDER BY id`)
		if !slices.Contains(got, "call allowed") || !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "call.pii_detected.request") }) {
			t.Errorf("audit rows of upstream:docs/echo = %v; want an allowed call and a pii_detected refusal", got)
		}
	})
}

// TestUpstreamDown: an upstream that does not answer yields a tool error naming it, and the
// other capabilities keep working.
func TestUpstreamDown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String() + "/mcp"
	l.Close()
	a := newAppWith(t, server.Config{Upstreams: upstream.Config{Enabled: true, Backoff: time.Millisecond,
		Upstreams: []upstream.Upstream{{ID: "docs", URL: down, ConnectTimeout: time.Second, CallTimeout: 2 * time.Second}}}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, _ := a.connect(t, ctx, eras[0], a.token(t, admin))
	// Unreachable at startup: listed with the plain schema and openWorld only.
	for lt, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if lt.Name != "neemias_docs_echo" {
			continue
		}
		b, _ := json.Marshal(lt.InputSchema)
		if string(b) != `{"type":"object"}` || lt.Annotations == nil || lt.Annotations.ReadOnlyHint || lt.Annotations.OpenWorldHint == nil || !*lt.Annotations.OpenWorldHint {
			t.Errorf("neemias_docs_echo with its upstream down at startup: schema %s, annotations %+v; want the plain schema and openWorld only", b, lt.Annotations)
		}
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "neemias_docs_echo", Arguments: map[string]any{"message": "olá"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, `upstream "docs"`) {
		t.Fatalf("call: %v %+v; want a tool error naming the upstream", err, res)
	}
	if strings.Contains(res.Content[0].(*sdk.TextContent).Text, l.Addr().String()) {
		t.Errorf("the error names the upstream's address: %s", res.Content[0].(*sdk.TextContent).Text)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "neemias_roster_children", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("roster with the upstream down: %v %+v", err, res)
	}
}

// TestUpstreamsMustMatchTheSpec: an upstream configured at runtime that the spec does not
// declare stops the server at startup.
func TestUpstreamsMustMatchTheSpec(t *testing.T) {
	t.Parallel()
	st := storetest.NewSeeded(t, seed.Options{ChildrenPerChurch: 5, Months: 1})
	_, err := server.New(context.Background(), server.Config{PublicURL: "http://127.0.0.1:1",
		Upstreams: upstream.Config{Enabled: true, Upstreams: []upstream.Upstream{{ID: "wiki", URL: "http://127.0.0.1:9/mcp"}}}}, st)
	if err == nil || !strings.Contains(err.Error(), `upstream "wiki" is configured`) {
		t.Fatalf("server.New = %v; want the undeclared upstream refused", err)
	}
}

// refusedBeforeSending calls tool with message and requires a tool error that never repeats
// value (and, with namesPath, names the argument's JSON path), sent before any byte of the call
// reached the upstream.
func refusedBeforeSending(t *testing.T, ctx context.Context, cs *sdk.ClientSession, rec *testsupport.Recorder, tool, message, value string, namesPath bool) {
	t.Helper()
	before := rec.Count()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"message": message}})
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	text := ""
	if len(res.Content) > 0 {
		text = res.Content[0].(*sdk.TextContent).Text
	}
	if !res.IsError || strings.Contains(text, value) || namesPath && !strings.Contains(text, "$.arguments.message") {
		t.Errorf("want a tool error naming the path, never the value; got %+v", res)
	}
	if rec.Saw(value) || rec.Count() != before {
		t.Error("bytes of the refused call reached the upstream")
	}
}
