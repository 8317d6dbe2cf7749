package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/logging"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/server"
	"github.com/neemias/neemias-mcp/internal/testsupport"
)

// The sentinel personal data of the whole-server PII canary.
const (
	sentinelChild    = "Zzcanary Sentinela"
	sentinelGuardian = "Zzcanary Guardiã Sentinela"
	sentinelPhone    = "+55 11 90000-4242"
	// sentinelBroken is a second sentinel child whose check-in fails inside PostgreSQL with an
	// error message full of personal data (an internal error).
	sentinelBroken = "Zzcanary Sentinela Quebrada"
)

// Fragments searched for: the names' distinctive parts and the phone's digits in the forms it
// could be rendered in.
var (
	nameFragments  = []string{"Zzcanary", "Sentinela"}
	phoneFragments = []string{"90000-4242", "900004242", "90000 4242"}
)

// exchangeCapture is one HTTP exchange of the canary, with what the rules need to judge it.
type exchangeCapture struct {
	who     string // role and era, for messages
	granted capability.ScopeSet
	method  string // JSON-RPC method, or "REST <path>"
	status  int
	body    string
}

// canary records every exchange of the canary run.
type canary struct {
	mu        sync.Mutex
	exchanges []exchangeCapture
}

func (c *canary) add(e exchangeCapture) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.exchanges = append(c.exchanges, e)
}

// capturing is a go-sdk client transport that adds the token and records every response body.
type capturing struct {
	c       *canary
	who     string
	token   string
	granted capability.ScopeSet
}

func (ct *capturing) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+ct.token)
	method := rpcMethod(r)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	body, _ := io.ReadAll(resp.Body) // stateless: every response stream ends with its answer
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	ct.c.add(exchangeCapture{who: ct.who, granted: ct.granted, method: method, status: resp.StatusCode, body: string(body)})
	return resp, nil
}

// rpcMessages returns the JSON-RPC messages of a response body: SSE data lines, or the JSON.
func rpcMessages(body string) []map[string]any {
	var out []map[string]any
	if strings.HasPrefix(strings.TrimSpace(body), "{") {
		var m map[string]any
		if json.Unmarshal([]byte(body), &m) == nil {
			out = append(out, m)
		}
		return out
	}
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
			var m map[string]any
			if json.Unmarshal([]byte(strings.TrimSpace(data)), &m) == nil {
				out = append(out, m)
			}
		}
	}
	return out
}

// TestPIICanary runs the whole server (MCP in both eras through the Go SDK client, and REST) with
// sentinel personal data in the database and in the inputs: reads, tools, bad input, denied
// calls, and an internal error raised by PostgreSQL with the sentinels in its message. Every log
// line the server writes (its slog handler, debug level) and every error (HTTP error bodies,
// JSON-RPC errors, isError results, REST errors) must be free of the sentinels; successful
// results carry them only where the caller's scopes allow (names with children:read in reads,
// the phone with guardians:read), and tool results never.
func TestPIICanary(t *testing.T) {
	t.Parallel()
	// Every line the process writes: the libraries' (zitadel/oidc logs through slog.Default and
	// the std log package) go to the one JSON handler, as neemias-mcp serve installs it.
	stdLogs := &testsupport.Buffer{}
	prev := slog.Default()
	logging.Install(logging.New(stdLogs, slog.LevelDebug))
	t.Cleanup(func() { slog.SetDefault(prev) })
	// Hundreds of requests per demo user in a few seconds: above the default rate limit.
	a := newAppWith(t, server.Config{RatePerSecond: 1000, RateBurst: 1000, Metrics: newMetrics(), MetricsOnMain: true})
	c := &canary{}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	today := a.one(t, `SELECT ((now() AT TIME ZONE 'America/Sao_Paulo')::date)::text`)
	birth := a.one(t, `SELECT ((now() AT TIME ZONE 'America/Sao_Paulo')::date - interval '7 years 2 months')::date::text`)

	session := func(u demoUser, era string, only ...string) *sdk.ClientSession {
		t.Helper()
		granted, _ := scopes.RoleScopes(u.role)
		if only != nil {
			granted = scopes.Grant(u.role, capability.NewScopeSet(only...))
		}
		rt := &capturing{c: c, who: u.role + " " + era + " " + granted.String(), token: a.token(t, u, only...), granted: granted}
		client := sdk.NewClient(&sdk.Implementation{Name: "canary", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: a.mcp, HTTPClient: &http.Client{Transport: rt}},
			&sdk.ClientSessionOptions{ProtocolVersion: era})
		if err != nil {
			t.Fatalf("connect %s %s: %v", u.role, era, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	enroll := func(mut func(map[string]any)) map[string]any {
		args := map[string]any{
			"name": sentinelChild, "birth_date": birth,
			"guardian": map[string]any{"name": sentinelGuardian, "phone": sentinelPhone, "relationship": "mother"},
			"consent":  map[string]any{"granted": true, "text_version": "v1", "legal_basis": "consent"},
		}
		if mut != nil {
			mut(args)
		}
		return args
	}

	// The sentinel child and guardian, enrolled through the tool as the demo ADMIN.
	res, err := session(admin, "2026-07-28").CallTool(ctx, &sdk.CallToolParams{Name: "neemias_child_enroll", Arguments: enroll(nil)})
	if err != nil || res.IsError {
		t.Fatalf("enroll: %v %+v", err, res)
	}
	var enrolled struct {
		ChildID string `json:"child_id"`
		ClassID string `json:"class_id"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &enrolled)
	kid := enrolled.ChildID
	if kid == "" || enrolled.ClassID == "" {
		t.Fatalf("enroll result = %s", b)
	}
	// The demo guardian is linked to the sentinel child too (so RESPONSAVEL sees it), and a
	// second sentinel child, in the same class, fails to check in with PII in the error.
	broken := uuid.NewString()
	a.query(t, `INSERT INTO guardian_children (guardian_id, child_id, church_id, relationship)
		SELECT g.id, $1, g.church_id, 'other' FROM guardians g WHERE g.user_id = $2 RETURNING child_id::text`, kid, seed.DemoResponsavelID)
	a.query(t, `INSERT INTO children (id, church_id, name, birth_date, class_id) VALUES ($1, $2, $3, $4, $5) RETURNING id::text`,
		broken, seed.DemoChurchID, sentinelBroken, birth, enrolled.ClassID)
	a.query(t, `CREATE FUNCTION zz_canary_fail() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			RAISE EXCEPTION 'canary: cannot check in % (guardian %, phone %)', '`+sentinelBroken+`', '`+sentinelGuardian+`', '`+sentinelPhone+`'
				USING DETAIL = 'Key (name)=(`+sentinelBroken+`)', HINT = 'call `+sentinelPhone+`';
		END $$`)
	a.query(t, `CREATE TRIGGER zz_canary_fail BEFORE INSERT ON checkins FOR EACH ROW
		WHEN (NEW.child_id = '`+broken+`') EXECUTE FUNCTION zz_canary_fail()`)
	if v := a.one(t, `SELECT count(*)::text FROM v_child_detail WHERE child_id = $1 AND guardian_phone = $2`, kid, sentinelPhone); v != "1" {
		t.Fatalf("the sentinel guardian is not on record (%s rows)", v)
	}

	var pickupCodes []string
	for _, era := range eras {
		// ADMIN: everything, bad input, an internal error.
		cs := session(admin, era)
		cs.ListTools(ctx, nil)
		cs.ListResources(ctx, nil)
		cs.ListResourceTemplates(ctx, nil)
		for _, uri := range []string{
			"neemias://roster/children", "neemias://roster/children/" + kid, "neemias://roster/children/" + broken,
			"neemias://checkins/" + today, "neemias://attendance/summary?from=2020-01-01&to=" + today,
			"neemias://attendance/summary?from=" + today + "&to=2020-01-01",
			"neemias://roster/children/Zzcanary-Sentinela", "neemias://checkins/90000-4242",
			"neemias://attendance/summary?from=Zzcanary", "neemias://roster/children/" + uuid.NewString(),
		} {
			cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		}
		res, _ := cs.CallTool(ctx, &sdk.CallToolParams{Name: "neemias_checkin_register", Arguments: map[string]any{"child_id": kid}})
		if res != nil && res.StructuredContent != nil {
			b, _ := json.Marshal(res.StructuredContent)
			var out struct {
				CheckinID string `json:"checkin_id"`
			}
			_ = json.Unmarshal(b, &out)
			// No MCP Apps: the code is in the text (a handoff field), never in structuredContent.
			if len(res.Content) > 0 {
				if tc, ok := res.Content[0].(*sdk.TextContent); ok {
					if m := pickupCodeInText.FindStringSubmatch(tc.Text); m != nil {
						pickupCodes = append(pickupCodes, m[1])
					}
				}
			}
			cs.CallTool(ctx, &sdk.CallToolParams{Name: "neemias_checkout_register", Arguments: map[string]any{"checkin_id": out.CheckinID, "pickup_code": "0000"}})
			cs.CallTool(ctx, &sdk.CallToolParams{Name: "neemias_checkout_register", Arguments: map[string]any{"checkin_id": out.CheckinID, "pickup_code": sentinelPhone}})
		}
		for _, args := range []map[string]any{
			{"child_id": broken}, // the internal error
			{"child_id": kid, "service_date": "2999-01-01"},
			{"child_id": sentinelChild},
			{"child_id": kid, "note": sentinelPhone},
		} {
			cs.CallTool(ctx, &sdk.CallToolParams{Name: "neemias_checkin_register", Arguments: args})
		}
		for _, mut := range []func(map[string]any){
			func(m map[string]any) { m["guardian"].(map[string]any)["phone"] = "tel " + sentinelPhone + " Zzcanary" },
			func(m map[string]any) { m["consent"].(map[string]any)["granted"] = false },
			func(m map[string]any) { m["birth_date"] = "2999-01-01" },
			func(m map[string]any) { m["birth_date"] = sentinelChild },
			func(m map[string]any) { m["extra"] = sentinelPhone },
			func(m map[string]any) { m["name"] = strings.Repeat(sentinelChild+" ", 10) },
			func(m map[string]any) { m["guardian"].(map[string]any)["relationship"] = sentinelGuardian },
			func(m map[string]any) { m["class_id"] = uuid.NewString() },
		} {
			cs.CallTool(ctx, &sdk.CallToolParams{Name: "neemias_child_enroll", Arguments: enroll(mut)})
		}
		cs.CallTool(ctx, &sdk.CallToolParams{Name: "neemias_" + sentinelChild, Arguments: map[string]any{}})

		// Every other role on the same data.
		for _, u := range []demoUser{cadastro, voluntario, responsavel} {
			cs := session(u, era)
			for _, uri := range []string{"neemias://roster/children/" + kid, "neemias://checkins/" + today, "neemias://roster/children/" + broken} {
				cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
			}
			cs.CallTool(ctx, &sdk.CallToolParams{Name: "neemias_checkin_register", Arguments: map[string]any{"child_id": kid}})
		}
		// Denied calls: each ends the go-sdk session (HTTP 403), so one session each.
		session(responsavel, era).CallTool(ctx, &sdk.CallToolParams{Name: "neemias_child_enroll", Arguments: enroll(nil)})
		session(voluntario, era).CallTool(ctx, &sdk.CallToolParams{Name: "neemias_child_enroll", Arguments: enroll(nil)})
		session(responsavel, era).ReadResource(ctx, &sdk.ReadResourceParams{URI: "neemias://attendance/summary?from=" + today})
		// Narrowed tokens: check-ins without children:read (no names), a child without
		// guardians:read (no phone).
		session(voluntario, era, "checkins:read").ReadResource(ctx, &sdk.ReadResourceParams{URI: "neemias://checkins/" + today})
		session(admin, era, "children:read").ReadResource(ctx, &sdk.ReadResourceParams{URI: "neemias://roster/children/" + kid})
	}

	// REST, the same ground.
	api := a.base + "/api/v1"
	enrollBody := func(mut func(map[string]any)) string { b, _ := json.Marshal(enroll(mut)); return string(b) }
	rest := func(u demoUser, method, path, body string) {
		granted, _ := scopes.RoleScopes(u.role)
		status, _, resp := restCall(t, method, api+path, a.token(t, u), body)
		c.add(exchangeCapture{who: u.role + " REST", granted: granted, method: "REST " + path, status: status, body: resp})
	}
	for _, u := range []demoUser{admin, voluntario, responsavel} {
		rest(u, "GET", "/roster/children/"+kid, "")
		rest(u, "GET", "/checkins/"+today, "")
		rest(u, "GET", "/roster/children/Zzcanary", "")
		rest(u, "POST", "/tools/neemias_checkin_register", `{"child_id":"`+broken+`"}`)
		rest(u, "POST", "/tools/neemias_checkin_register", `{"child_id":"`+sentinelChild+`"}`)
		rest(u, "POST", "/tools/neemias_child_enroll", enrollBody(func(m map[string]any) { m["guardian"].(map[string]any)["phone"] = "tel " + sentinelPhone }))
		rest(u, "POST", "/tools/neemias_child_enroll", enrollBody(func(m map[string]any) { m["consent"].(map[string]any)["granted"] = false }))
		rest(u, "POST", "/tools/neemias_child_enroll", `{"name":"`+sentinelChild+`","guardian":{"phone":"`+sentinelPhone+`"`)
		rest(u, "GET", "/attendance/summary?from=Zzcanary", "")
	}

	// Judge every exchange.
	judged := 0
	for _, e := range c.exchanges {
		judged++
		checkExchange(t, e)
	}
	// The internal error really happened, on both transports, and was logged with a
	// correlation id: the canary had material to find.
	logs := a.logs.String()
	for _, want := range []string{`"msg":"capability failed"`, `"msg":"rest: internal error"`, `"correlation_id"`, `"msg":"capability call"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("the logs lack %s: the canary did not exercise what it should", want)
		}
	}
	if len(pickupCodes) != 1 {
		t.Errorf("pick-up codes issued: %d, want 1", len(pickupCodes))
	}
	for i, line := range strings.Split(logs, "\n") {
		if frag, ok := leaks(line, append(append(append([]string{}, nameFragments...), phoneFragments...), pickupCodes...)); ok {
			t.Errorf("log line %d carries %q: %s", i+1, frag, line)
		}
	}
	// Positive controls: the sentinels were there to leak.
	var sawName, sawPhone bool
	for _, e := range c.exchanges {
		if e.status == 200 {
			_, n := leaks(e.body, nameFragments)
			_, p := leaks(e.body, phoneFragments)
			sawName, sawPhone = sawName || n, sawPhone || p
		}
	}
	if !sawName || !sawPhone {
		t.Errorf("no successful read showed the sentinel name (%v) or phone (%v): the canary saw nothing", sawName, sawPhone)
	}
	if !strings.Contains(logs, "SQLSTATE P0001") || !strings.Contains(logs, "[redacted") {
		t.Errorf("the logs lack the mapped database error or the redacted inputs")
	}
	// The libraries' lines: JSON, of the one handler, and as clean.
	if !strings.Contains(stdLogs.String(), `"msg":"registered route"`) {
		t.Errorf("zitadel/oidc's route lines did not reach the JSON handler:\n%s", stdLogs.String())
	}
	for i, line := range strings.Split(strings.TrimSpace(stdLogs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("library log line %d is not JSON: %s", i+1, line)
		}
		if frag, ok := leaks(line, append(append(append([]string{}, nameFragments...), phoneFragments...), pickupCodes...)); ok {
			t.Errorf("library log line %d carries %q: %s", i+1, frag, line)
		}
	}
	checkMetrics(t, a.base, pickupCodes)
	// CANARY_DUMP=file keeps the captured log for inspection.
	if os.Getenv("CANARY_DUMP") != "" {
		os.WriteFile(os.Getenv("CANARY_DUMP"), []byte(logs), 0o644)
	}
	t.Logf("canary: %d exchanges judged, %d log lines clean", judged, strings.Count(logs, "\n"))
}

func leaks(s string, frags []string) (string, bool) {
	for _, f := range frags {
		if f != "" && strings.Contains(s, f) {
			return f, true
		}
	}
	return "", false
}

// checkExchange applies the canary's rules to one exchange.
func checkExchange(t *testing.T, e exchangeCapture) {
	t.Helper()
	all := append(append([]string{}, nameFragments...), phoneFragments...)
	if e.status >= 300 {
		if f, ok := leaks(e.body, all); ok {
			t.Errorf("%s %s: HTTP %d error body carries %q: %s", e.who, e.method, e.status, f, e.body)
		}
		return
	}
	if strings.HasPrefix(e.method, "REST ") {
		checkSuccess(t, e, e.body, strings.Contains(e.method, "/tools/"))
		return
	}
	for _, m := range rpcMessages(e.body) {
		if errObj, ok := m["error"].(map[string]any); ok {
			// The one echo the spec asks for: resource-not-found names the requested URI in
			// data.uri (the caller's own input; conformance sep-2164-data-uri).
			if data, _ := errObj["data"].(map[string]any); data != nil && errObj["message"] == "Resource not found" {
				delete(data, "uri")
			}
			if f, ok := leaks(mustJSON(errObj), all); ok {
				t.Errorf("%s %s: JSON-RPC error carries %q: %s", e.who, e.method, f, mustJSON(errObj))
			}
			continue
		}
		result, _ := m["result"].(map[string]any)
		if isErr, _ := result["isError"].(bool); isErr {
			if f, ok := leaks(mustJSON(result), all); ok {
				t.Errorf("%s %s: isError result carries %q: %s", e.who, e.method, f, mustJSON(result))
			}
			continue
		}
		if m["method"] != nil { // a notification
			if f, ok := leaks(mustJSON(m), all); ok {
				t.Errorf("%s %s: notification carries %q: %s", e.who, e.method, f, mustJSON(m))
			}
			continue
		}
		checkSuccess(t, e, mustJSON(result), e.method == "tools/call")
	}
}

// shortLabel is the spec's short_name form of the sentinel child ("Zzcanary S.", "Zzcanary Se."):
// what a caller without children:read may read of a child it may see (class list, check-in).
var shortLabel = regexp.MustCompile(`Zzcanary [A-Z][a-z]{0,8}\.`)

// checkSuccess: a successful answer carries a full name only with children:read, from a read
// or a tool (a check-in names its child), otherwise at most the short label; a phone only with
// guardians:read and only in a read.
func checkSuccess(t *testing.T, e exchangeCapture, body string, tool bool) {
	t.Helper()
	read := e.method == "resources/read" || strings.HasPrefix(e.method, "REST /roster/") || strings.HasPrefix(e.method, "REST /checkins/")
	named := body
	if !e.granted.Has(scopes.ChildrenRead) {
		named = shortLabel.ReplaceAllString(body, "")
	}
	if f, ok := leaks(named, nameFragments); ok && !((tool || read) && e.granted.Has(scopes.ChildrenRead)) {
		t.Errorf("%s %s: success carries %q beyond the scopes: %.400s", e.who, e.method, f, body)
	}
	if f, ok := leaks(body, phoneFragments); ok && (tool || !read || !e.granted.Has(scopes.GuardiansRead)) {
		t.Errorf("%s %s: success carries %q beyond the scopes: %.400s", e.who, e.method, f, body)
	}
}
