package server_test

import (
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/server"
	"github.com/neemias/neemias-mcp/internal/testsupport"
	"github.com/neemias/neemias-mcp/internal/upstream"
)

// TestReconcileUpstreams: the runtime configuration of upstreams must match the spec's
// upstreams section; the spec's tools and PII policy are what the client gets.
func TestReconcileUpstreams(t *testing.T) {
	declared := []capability.UpstreamTool{
		{Name: "n_docs_echo", Upstream: "docs", Tool: "echo", Scope: "a:read", PIIRequest: "enforce", PIIResponse: "redact"},
		{Name: "n_docs_add", Upstream: "docs", Tool: "add", Scope: "a:read", PIIRequest: "enforce", PIIResponse: "redact"},
		{Name: "n_wiki_find", Upstream: "wiki", Tool: "find", Scope: "a:read", PIIRequest: "enforce", PIIResponse: "enforce"},
	}
	docs := upstream.Upstream{ID: "docs", URL: "http://127.0.0.1:9/mcp"}
	for _, tc := range []struct {
		name    string
		cfg     upstream.Config
		offered []string
		policy  upstream.Policy // of the first upstream; zero: the spec's (request enforce, response redact)
		err     string
		logged  string
	}{
		{name: "off offers nothing", cfg: upstream.Config{Upstreams: []upstream.Upstream{docs}}},
		{name: "the spec's tools and policy", cfg: upstream.Config{Enabled: true, Upstreams: []upstream.Upstream{docs}},
			offered: []string{"n_docs_echo", "n_docs_add"}, logged: `"upstream":"wiki"`},
		{name: "narrowed at runtime", cfg: upstream.Config{Enabled: true, Upstreams: []upstream.Upstream{{ID: "docs", URL: docs.URL, Tools: []string{"add"}}}},
			offered: []string{"n_docs_add"}},
		{name: "not in the spec", cfg: upstream.Config{Enabled: true, Upstreams: []upstream.Upstream{{ID: "files", URL: docs.URL}}},
			err: `upstream "files" is configured (--upstream files=…) but spec/capabilities.yaml declares no such upstream`},
		{name: "a tool the spec does not declare", cfg: upstream.Config{Enabled: true, Upstreams: []upstream.Upstream{{ID: "docs", URL: docs.URL, Tools: []string{"printEnv"}}}},
			err: `tool "printEnv" is not declared for upstream "docs"`},
		// The runtime may tighten the spec's policy (redact to enforce), never loosen it.
		{name: "tightened at runtime", cfg: upstream.Config{Enabled: true, Upstreams: []upstream.Upstream{{ID: "docs", URL: docs.URL, PII: upstream.Policy{Response: upstream.Enforce}}}},
			offered: []string{"n_docs_echo", "n_docs_add"}, policy: upstream.Policy{Request: upstream.Enforce, Response: upstream.Enforce},
			logged: `"msg":"upstream personal-data policy tightened at runtime","upstream":"docs","direction":"response","spec":"redact","runtime":"enforce"`},
		{name: "the spec's policy repeated", cfg: upstream.Config{Enabled: true, Upstreams: []upstream.Upstream{{ID: "docs", URL: docs.URL, PII: upstream.Policy{Request: upstream.Enforce, Response: upstream.Redact}}}},
			offered: []string{"n_docs_echo", "n_docs_add"}},
		{name: "loosened request refused", cfg: upstream.Config{Enabled: true, Upstreams: []upstream.Upstream{{ID: "docs", URL: docs.URL, PII: upstream.Policy{Request: upstream.Redact}}}},
			err: `--upstream-pii docs: request:redact would loosen the spec's policy for upstream "docs" (request: enforce in spec/capabilities.yaml upstreams.docs.pii); the runtime may only tighten it (redact to enforce): to redact, change the spec, run make generate and rebuild`},
		{name: "loosened response refused", cfg: upstream.Config{Enabled: true, Upstreams: []upstream.Upstream{{ID: "wiki", URL: docs.URL, PII: upstream.Policy{Response: upstream.Redact}}}},
			err: `--upstream-pii wiki: response:redact would loosen the spec's policy for upstream "wiki" (response: enforce in spec/capabilities.yaml`},
		{name: "unknown mode", cfg: upstream.Config{Enabled: true, Upstreams: []upstream.Upstream{{ID: "docs", URL: docs.URL, PII: upstream.Policy{Response: "log"}}}},
			err: `--upstream-pii docs: unknown mode response:"log" (enforce or redact)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &testsupport.Buffer{}
			got, offered, err := server.ReconcileUpstreams(tc.cfg, declared, slog.New(slog.NewJSONHandler(logs, nil)))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v; want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, o := range offered {
				names = append(names, o.Name)
			}
			if !slices.Equal(names, tc.offered) {
				t.Errorf("offered %v, want %v", names, tc.offered)
			}
			if len(tc.offered) > 0 {
				want := tc.policy
				if want == (upstream.Policy{}) {
					want = upstream.Policy{Request: upstream.Enforce, Response: upstream.Redact}
				}
				if u := got.Upstreams[0]; u.PII != want {
					t.Errorf("policy %+v, want %+v", u.PII, want)
				}
			}
			if tc.logged != "" && !strings.Contains(logs.String(), tc.logged) {
				t.Errorf("log %s lacks %s", logs.String(), tc.logged)
			}
		})
	}
}
