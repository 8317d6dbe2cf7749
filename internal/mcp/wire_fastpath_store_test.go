package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/authn/authntest"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/httpx"
	"github.com/neemias/neemias-mcp/internal/logic"
	"github.com/neemias/neemias-mcp/internal/mcp"
	"github.com/neemias/neemias-mcp/internal/pipeline"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
	"github.com/neemias/neemias-mcp/internal/views"
)

// roleUsers are the seeded demo accounts, one per role.
var roleUsers = map[string]uuid.UUID{
	"ADMIN": seed.DemoAdminID, "CADASTRO": seed.DemoCadastroID, "VOLUNTARIO": seed.DemoVoluntarioID, "RESPONSAVEL": seed.DemoResponsavelID,
}

// registryHandler is the real generated registry over st, as server.New wires it (the
// pipeline with the scope matrix, the logic, the views), with one token per role.
func registryHandler(t testing.TB, st *store.Store, adjust func(*mcp.Options)) http.Handler {
	t.Helper()
	cat, err := capapi.Catalog(logic.New(st)).With(capability.AppToolEntries(views.All())...)
	if err != nil {
		t.Fatal(err)
	}
	gate, err := pipeline.New(pipeline.Config{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	tokens := map[string]principal.Principal{}
	for _, role := range scopes.Roles() {
		rs, _ := scopes.RoleScopes(role)
		tokens["tok-"+role] = principal.Principal{UserID: roleUsers[role], ChurchID: seed.DemoChurchID, Role: role, Scopes: rs, ClientID: "diff"}
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts := mcp.Options{
		Name: capapi.ServerName, Title: capapi.ServerTitle, Version: "diff",
		ReadToolPrefix: capapi.ToolPrefix, Views: views.All(), Gate: gate,
		Edge: &httpx.Edge{Verifier: authntest.Static{Tokens: tokens},
			ResourceMetadataURL: "http://127.0.0.1/.well-known/oauth-protected-resource/mcp",
			Hosts:               httpx.LoopbackHosts(), Origins: httpx.LoopbackOrigins(), Logger: quiet},
		Logger: quiet,
	}
	adjust(&opts)
	h, err := mcp.NewHandler(opts)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// storeFixture finds in the seeded demo church the named values the spec's examples refer to
// (spec.ExampleNames); what the seed lacks is a well-formed value the capability refuses, which
// the comparison covers as well.
func storeFixture(t testing.TB, st *store.Store) map[string]func() any {
	t.Helper()
	ctx := context.Background()
	q := func(sql, fallback string) string {
		var s string
		if err := st.Pool().QueryRow(ctx, sql, seed.DemoChurchID).Scan(&s); err != nil {
			return fallback
		}
		return s
	}
	none := "00000000-0000-4000-8000-0000000000ff"
	vals := map[string]string{
		"child":              q(`SELECT c.id::text FROM children c JOIN guardian_children g ON g.child_id = c.id WHERE c.church_id = $1 ORDER BY c.id LIMIT 1`, none),
		"child_handle":       q(`SELECT c.handle FROM children c JOIN guardian_children g ON g.child_id = c.id WHERE c.church_id = $1 ORDER BY c.id LIMIT 1`, "ZZZZZZ"),
		"class":              q(`SELECT id::text FROM classes WHERE church_id = $1 ORDER BY id LIMIT 1`, none),
		"day":                q(`SELECT service_date::text FROM checkins WHERE church_id = $1 GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`, "2026-01-04"),
		"checkin":            q(`SELECT id::text FROM checkins WHERE church_id = $1 ORDER BY service_date DESC, id LIMIT 1`, none),
		"guardian":           q(`SELECT guardian_id::text FROM guardian_children g JOIN children c ON c.id = g.child_id WHERE c.church_id = $1 ORDER BY 1 LIMIT 1`, none),
		"duplicate_child":    q(`SELECT id::text FROM children WHERE church_id = $1 ORDER BY id DESC LIMIT 1`, none),
		"duplicate_guardian": q(`SELECT guardian_id::text FROM guardian_children g JOIN children c ON c.id = g.child_id WHERE c.church_id = $1 ORDER BY 1 DESC LIMIT 1`, none),
		"leaving_child":      q(`SELECT id::text FROM children WHERE church_id = $1 ORDER BY id DESC OFFSET 1 LIMIT 1`, none),
		"pickup_adult":       q(`SELECT name FROM pickup_adults WHERE church_id = $1 ORDER BY id LIMIT 1`, "Zzcanary Ninguém"),
		"pickup_adult_id":    q(`SELECT id::text FROM pickup_adults WHERE church_id = $1 ORDER BY id LIMIT 1`, none),
		"pickup_code":        "123456",
		"birth_date":         time.Now().AddDate(-4, 0, -3).Format("2006-01-02"),
	}
	out := map[string]func() any{}
	for k, v := range vals {
		out[k] = func() any { return v }
	}
	n := 0
	out["fresh_name"] = func() any { n++; return fmt.Sprintf("Zzcanary Diferencial %c", 'A'+rune(n%26)) }
	return out
}

// expand fills a URI template's {name} and {?a,b} expressions from args (strings).
func expand(tmpl string, args map[string]any) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		j := strings.IndexByte(tmpl[i:], '}') + i
		b.WriteString(tmpl[:i])
		expr := tmpl[i+1 : j]
		if names, ok := strings.CutPrefix(expr, "?"); ok {
			sep := "?"
			for _, n := range strings.Split(names, ",") {
				if v, ok := args[n]; ok {
					fmt.Fprintf(&b, "%s%s=%v", sep, n, v)
					sep = "&"
				}
			}
		} else if v, ok := args[expr]; ok {
			fmt.Fprint(&b, v)
		}
		tmpl = tmpl[j+1:]
	}
}

// TestFastPathMatchesEngineOnRegistry: every capability of the generated registry, for every
// role, with the spec's example arguments, in both eras (reads as resources/read and as their
// read tools), plus a bad-arguments call of each tool, answered alike by the engine and the fast
// path, each over its own copy of the same seeded store (writes change what later requests
// see, and both sides must see the same). Reads are compared as they are; writes with the
// values the database generates normalized (writeNormalize: ids, now(), drawn pick-up codes).
func TestFastPathMatchesEngineOnRegistry(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: needs PostgreSQL")
	}
	opts := seed.Options{ChildrenPerChurch: 12, Months: 1}
	stA, stB := storetest.NewSeeded(t, opts), storetest.NewSeeded(t, opts)
	p := pair{engine: registryHandler(t, stA, func(o *mcp.Options) { o.EngineOnly = true }),
		fast: registryHandler(t, stB, func(o *mcp.Options) {})}
	fixture := storeFixture(t, stA)
	roles := scopes.Roles()
	sort.Strings(roles)
	caps := capapi.Capabilities()
	var reads, writes []capability.Capability
	for _, c := range caps {
		if c.IsRead() || (c.Annotations.ReadOnly != nil && *c.Annotations.ReadOnly) {
			reads = append(reads, c)
		} else {
			writes = append(writes, c)
		}
	}
	id := 0
	send := func(role string, c capability.Capability, norm normalizer) {
		args, err := c.ExampleArgs(fixture)
		if err != nil {
			t.Fatal(err)
		}
		tok := "tok-" + role
		var reqs []wireReq
		if c.IsRead() {
			reqs = append(reqs, bothEras(tok, id, "resources/read", map[string]any{"uri": expand(c.URITemplate, args)})...)
			if !c.NoReadTool {
				reqs = append(reqs, bothEras(tok, id, "tools/call", map[string]any{"name": capapi.ToolPrefix + c.ID, "arguments": args})...)
			}
		} else {
			reqs = append(reqs, bothEras(tok, id, "tools/call", map[string]any{"name": c.Name, "arguments": args})...)
			reqs = append(reqs, bothEras(tok, id, "tools/call", map[string]any{"name": c.Name, "arguments": map[string]any{"bogus": true}})...)
		}
		id++
		for _, r := range reqs {
			t.Run(c.ID+"/"+role, func(t *testing.T) { p.check(t, r, norm) })
		}
	}
	for _, role := range roles {
		for _, c := range reads {
			send(role, c, nil)
		}
		for _, m := range []string{"tools/list", "resources/list", "resources/templates/list"} {
			for _, r := range bothEras("tok-"+role, 1, m, map[string]any{}) {
				t.Run(m+"/"+role, func(t *testing.T) { p.check(t, r, nil) })
			}
		}
		ui := map[string]any{"uri": "neemias://x", "_meta": fpMeta(map[string]any{"extensions": map[string]any{capability.UIExtension: map[string]any{"mimeTypes": []string{capability.ViewMIMEType}}}})}
		delete(ui, "uri")
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": ui})
		t.Run("tools/list+ui/"+role, func(t *testing.T) {
			p.check(t, mcpReq("tok-"+role, string(body), "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list"), nil)
		})
	}
	for _, role := range roles {
		for _, c := range writes {
			send(role, c, writeNormalize)
		}
	}
	if n := mcp.FastAnswered(p.fast); n < int64(len(roles)*len(reads)) {
		t.Errorf("the fast path answered %d requests, want at least %d", n, len(roles)*len(reads))
	} else {
		t.Logf("the fast path answered %d requests", n)
	}
}
