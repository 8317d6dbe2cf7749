package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/seed"
)

// eras are the protocol versions the Go SDK client is pinned to: the stateless revision and the
// latest initialize-era one.
var eras = []string{"2026-07-28", "2025-11-25"}

// connect opens a go-sdk client session on the real server, pinned to version, with token.
func (a *app) connect(t *testing.T, ctx context.Context, version, token string) (*sdk.ClientSession, *bearer) {
	t.Helper()
	rt := &bearer{t: t, token: token}
	client := sdk.NewClient(&sdk.Implementation{Name: "neemias-server-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: a.mcp, HTTPClient: &http.Client{Transport: rt}},
		&sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect (%s): %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Errorf("negotiated %q, want %q", got, version)
	}
	if id := cs.ID(); id != "" {
		t.Errorf("the client session has id %q: the server issued one", id)
	}
	return cs, rt
}

func toolNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		// An upstream tool (open world) has no output schema of ours: its output is the upstream's.
		upstreamTool := tool.Annotations != nil && tool.Annotations.OpenWorldHint != nil && *tool.Annotations.OpenWorldHint && tool.OutputSchema == nil
		if tool.InputSchema == nil || (tool.OutputSchema == nil && !upstreamTool) {
			t.Errorf("tool %s lacks its input or output schema", tool.Name)
		}
	}
	sort.Strings(names)
	return names
}

func resourceURIs(t *testing.T, cs *sdk.ClientSession) (static, templates []string) {
	t.Helper()
	ctx := context.Background()
	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatalf("resources/list: %v", err)
	}
	for _, r := range res.Resources {
		static = append(static, r.URI)
	}
	tpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatalf("resources/templates/list: %v", err)
	}
	for _, r := range tpl.ResourceTemplates {
		templates = append(templates, r.URITemplate)
	}
	sort.Strings(static)
	sort.Strings(templates)
	return static, templates
}

// readJSON reads uri and decodes its one JSON content.
func readJSON(t *testing.T, cs *sdk.ClientSession, uri string) map[string]any {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("resources/read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].MIMEType != "application/json" || res.Contents[0].URI != uri {
		t.Fatalf("resources/read %s: contents %+v", uri, res.Contents)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &v); err != nil {
		t.Fatalf("resources/read %s: not JSON: %v", uri, err)
	}
	return v
}

// callJSON calls a tool and returns the result and its structuredContent as a map.
func callJSON(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) (*sdk.CallToolResult, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	var sc map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &sc)
	}
	return res, sc
}

func resultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// The official Go SDK client, pinned to each era, against the real assembled server as the
// demo ADMIN: lists, every resource and template read, the check-in tool with its idempotent
// retry, bad input, not found. No Mcp-Session-Id is ever issued (the bearer transport fails the
// test if one is).
func TestGoSDKClientAsAdmin(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	kids := a.freeChildren(t, len(eras), false)
	lastDay := a.one(t, `SELECT max(service_date)::text FROM service_days WHERE church_id = $1`, seed.DemoChurchID)
	from := a.one(t, `SELECT min(service_date)::text FROM service_days WHERE church_id = $1`, seed.DemoChurchID)
	classes := a.one(t, `SELECT count(*)::text FROM classes WHERE church_id = $1`, seed.DemoChurchID)
	token := a.token(t, admin)

	for i, version := range eras {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cs, rt := a.connect(t, ctx, version, token)

			if got, want := toolNames(t, cs), roleTools(admin.role); !slices.Equal(got, want) {
				t.Errorf("tools = %v, want %v", got, want)
			}
			static, templates := resourceURIs(t, cs)
			if want := []string{"neemias://roster/children"}; !slices.Equal(static, want) {
				t.Errorf("resources = %v, want %v", static, want)
			}
			wantTpl := roleTemplates(admin.role)
			if !slices.Equal(templates, wantTpl) {
				t.Errorf("templates = %v, want %v", templates, wantTpl)
			}

			roster := readJSON(t, cs, "neemias://roster/children")
			if n, _ := roster["total_children"].(float64); n < 1 {
				t.Errorf("roster total_children = %v", roster["total_children"])
			}
			if cl, _ := roster["classes"].([]any); jsonString(len(cl)) != classes {
				t.Errorf("roster has %d classes, the church %s", len(cl), classes)
			}

			child := readJSON(t, cs, "neemias://roster/children/"+kids[i])
			if child["child_id"] != kids[i] || child["name"] == "" || child["birth_date"] == nil {
				t.Errorf("child record = %v", child)
			}
			gs, _ := child["guardians"].([]any)
			if len(gs) == 0 {
				t.Errorf("child record without guardians: %v", child)
			}
			for _, g := range gs {
				if g.(map[string]any)["phone"] == nil {
					t.Errorf("ADMIN (guardians:read) got a guardian without phone: %v", g)
				}
			}

			att := readJSON(t, cs, "neemias://attendance/summary?from="+from+"&to="+lastDay)
			if att["from"] != from || att["to"] != lastDay {
				t.Errorf("attendance range = %v..%v, want %s..%s", att["from"], att["to"], from, lastDay)
			}
			if n, _ := att["total_checkins"].(float64); n < 1 {
				t.Errorf("attendance total_checkins = %v", att["total_checkins"])
			}
			day := readJSON(t, cs, "neemias://checkins/"+lastDay)
			if classes, _ := day["classes"].([]any); day["date"] != lastDay || len(classes) == 0 || num(day["total"]) == 0 {
				t.Errorf("checkins of %s = %v", lastDay, day)
			}

			// The check-in and its retry.
			res, first := callJSON(t, cs, "neemias_checkin_register", map[string]any{"child_id": kids[i]})
			// A client without MCP Apps gets the code in the text only (a handoff field).
			if res.IsError || first["child_id"] != kids[i] || first["already_checked_in"] != false || first["pickup_code"] != nil ||
				pickupCodeInText.FindStringSubmatch(resultText(res)) == nil {
				t.Fatalf("check-in: isError=%v %v (%s)", res.IsError, first, resultText(res))
			}
			if text := resultText(res); !strings.Contains(text, first["checkin_id"].(string)) {
				t.Errorf("the text block does not carry the structured JSON: %s", text)
			}
			res, again := callJSON(t, cs, "neemias_checkin_register", map[string]any{"child_id": kids[i]})
			if res.IsError || again["checkin_id"] != first["checkin_id"] || again["already_checked_in"] != true || again["pickup_code"] != nil {
				t.Errorf("retry: isError=%v %v, want the same check-in %v without a code", res.IsError, again, first["checkin_id"])
			}
			if n := a.one(t, `SELECT count(*)::text FROM checkins WHERE child_id = $1`, kids[i]); n == "0" {
				t.Errorf("no check-in row for %s", kids[i])
			}

			// Bad input: an isError result naming the field.
			for _, args := range []map[string]any{{"child_id": "not-a-uuid"}, {}, {"child_id": kids[i], "colour": "red"}, {"child_id": kids[i], "service_date": "31/12/2026"}} {
				res, _ := callJSON(t, cs, "neemias_checkin_register", args)
				text := resultText(res)
				field := "child_id"
				if _, ok := args["colour"]; ok {
					field = "colour"
				} else if _, ok := args["service_date"]; ok {
					field = "service_date"
				}
				if !res.IsError || !strings.Contains(text, field) {
					t.Errorf("args %v: isError=%v %q, want an error naming %s", args, res.IsError, text, field)
				}
			}
			// A well-formed id of no child: an isError result, the same as a hidden child.
			if res, _ := callJSON(t, cs, "neemias_checkin_register", map[string]any{"child_id": uuid.NewString()}); !res.IsError || !strings.Contains(resultText(res), "not found") {
				t.Errorf("unknown child: isError=%v %q", res.IsError, resultText(res))
			}
			// An unknown resource is the era's resource-not-found error.
			_, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "neemias://roster/children/" + uuid.NewString()})
			wantCode := int64(-32002)
			if version >= "2026" {
				wantCode = -32602
			}
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != wantCode || !strings.Contains(rpcErr.Message, "not found") {
				t.Errorf("reading an unknown child: %v (%#v), want resource not found (%d)", err, rpcErr, wantCode)
			}
			// A malformed id in a template.
			if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "neemias://checkins/yesterday"}); err == nil {
				t.Errorf("reading checkins/yesterday succeeded")
			}

			for _, r := range rt.records() {
				if r.status >= 500 {
					t.Errorf("%s answered %d", r.method, r.status)
				}
				if version == "2026-07-28" && r.method == "initialize" {
					t.Errorf("the 2026-07-28 client sent initialize")
				}
			}
		})
	}
}

func jsonString(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// What each role sees and may do, through the Go SDK client in both eras: lists show what the
// role can reach; what the role can never hold is neither listed nor challenged (child records,
// children:read, are for ADMIN and CADASTRO only); a token narrower than its role gets HTTP 403
// insufficient_scope naming the scopes it holds plus the one needed.
func TestGoSDKClientPerRole(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	ownKids := a.query(t, `SELECT gc.child_id::text FROM guardian_children gc JOIN guardians g ON g.id = gc.guardian_id
		WHERE g.user_id = $1 ORDER BY 1`, seed.DemoResponsavelID)
	if len(ownKids) != 2 {
		t.Fatalf("the demo guardian has %d children, want 2", len(ownKids))
	}
	volKid := a.freeChildren(t, 1, true)[0]

	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()

			t.Run("RESPONSAVEL", func(t *testing.T) {
				cs, _ := a.connect(t, ctx, version, a.token(t, responsavel))
				if got, want := toolNames(t, cs), roleTools(responsavel.role); !slices.Equal(got, want) || slices.Contains(got, "neemias_child_enroll") {
					t.Errorf("tools = %v, want %v (the role never holds children:write)", got, want)
				}
				static, templates := resourceURIs(t, cs)
				if len(static) != 0 {
					t.Errorf("resources = %v, want none (no roster:read)", static)
				}
				if want := roleTemplates(responsavel.role); !slices.Equal(templates, want) || slices.Contains(templates, "neemias://roster/children/{id}") {
					t.Errorf("templates = %v, want %v (no attendance:read, no children:read)", templates, want)
				}
				// Child records need children:read, which a guardian can never hold (ADMIN and
				// CADASTRO only): even their own child's record reads as not found, and they work
				// with the child ids of their check-ins.
				if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "neemias://roster/children/" + ownKids[0]}); err == nil || !strings.Contains(err.Error(), "not found") {
					t.Errorf("own child's record as a guardian: %v, want not found", err)
				}
				// What the role can never hold: a plain error, no step-up challenge (it is not
				// listed either).
				_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "neemias_child_enroll", Arguments: map[string]any{}})
				if err == nil || !strings.Contains(err.Error(), "unknown tool") {
					t.Errorf("enroll as a guardian: %v, want unknown tool", err)
				}
				if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "neemias://roster/children"}); err == nil || !strings.Contains(err.Error(), "not found") {
					t.Errorf("roster counts as a guardian: %v, want not found", err)
				}
			})

			t.Run("VOLUNTARIO", func(t *testing.T) {
				cs, _ := a.connect(t, ctx, version, a.token(t, voluntario))
				if got, want := toolNames(t, cs), roleTools(voluntario.role); !slices.Equal(got, want) {
					t.Errorf("tools = %v, want %v", got, want)
				}
				// Child records need children:read (ADMIN and CADASTRO only), even in an
				// assigned class: not found, like anything outside the role; the volunteer works
				// with the child ids of the check-ins.
				if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "neemias://roster/children/" + volKid}); err == nil || !strings.Contains(err.Error(), "not found") {
					t.Errorf("a child record as a volunteer: %v, want not found", err)
				}
			})

			t.Run("token narrowed to roster:read: the role's list, step-up keeping scopes", func(t *testing.T) {
				cs, rt := a.connect(t, ctx, version, a.token(t, voluntario, "roster:read"))
				if got, want := toolNames(t, cs), roleTools(voluntario.role); !slices.Equal(got, want) {
					t.Errorf("tools = %v, want the role's %v", got, want)
				}
				static, templates := resourceURIs(t, cs)
				if !slices.Equal(static, []string{"neemias://roster/children"}) || !slices.Equal(templates, roleTemplates(voluntario.role)) {
					t.Errorf("resources = %v, templates = %v; want the role's (attendance, check-ins)", static, templates)
				}
				readJSON(t, cs, "neemias://roster/children")
				_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "neemias_checkin_register", Arguments: map[string]any{"child_id": volKid}})
				assertInsufficientScope(t, rt, err, "checkins:write roster:read")
			})
		})
	}
	if n := a.one(t, `SELECT count(*)::text FROM checkins WHERE child_id = $1 AND service_date = (now() AT TIME ZONE 'America/Sao_Paulo')::date`, volKid); n != "0" {
		t.Errorf("a refused check-in left %s rows", n)
	}
}

// assertInsufficientScope checks that the last call failed with HTTP 403 and an RFC 6750
// insufficient_scope challenge naming scope.
func assertInsufficientScope(t *testing.T, rt *bearer, err error, scope string) {
	t.Helper()
	if err == nil {
		t.Errorf("a request needing %s succeeded", scope)
		return
	}
	recs := rt.records()
	last := recs[len(recs)-1]
	if last.status != http.StatusForbidden || !strings.Contains(last.challenge, `error="insufficient_scope"`) ||
		!strings.Contains(last.challenge, `scope="`+scope+`"`) || !strings.Contains(last.challenge, "resource_metadata=") {
		t.Errorf("request needing %s: HTTP %d, WWW-Authenticate %q (client error %v)", scope, last.status, last.challenge, err)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
