package server_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neemias/neemias-mcp/internal/seed"
)

// The volunteer's Sunday (issue 20) with real clients: a volunteer checks a child in by first
// name and class, an ADMIN manages who may take her home and asks who did.

// sundayChild enrolls "Ana Zzdomingo Teste" (4 years old) in Maternal with her mother Marta
// in the maintenance context, optionally assigning the demo volunteer to Maternal, and returns
// the child's id and handle.
func (a *app) sundayChild(t *testing.T, volunteerInMaternal bool) (id, handle string) {
	t.Helper()
	maternal := a.one(t, `SELECT id::text FROM classes WHERE church_id = $1 AND name = 'Maternal'`, seed.DemoChurchID)
	if volunteerInMaternal {
		a.query(t, `INSERT INTO volunteer_assignments (user_id, class_id, church_id) VALUES ($1, $2, $3)
			ON CONFLICT DO NOTHING RETURNING user_id::text`, seed.DemoVoluntarioID, maternal, seed.DemoChurchID)
	}
	row := a.one(t, `WITH ch AS (
			INSERT INTO children (church_id, name, birth_date, class_id, created_by)
			VALUES ($1, 'Ana Zzdomingo Teste', (now() - interval '4 years 2 months')::date, $2, $3)
			RETURNING id, handle),
		g AS (INSERT INTO guardians (church_id, name, phone) VALUES ($1, 'Marta Zzdomingo', '+55 11 97777-0101') RETURNING id),
		l AS (INSERT INTO guardian_children (guardian_id, child_id, church_id, relationship)
			SELECT g.id, ch.id, $1, 'mother' FROM ch, g RETURNING child_id)
		SELECT ch.id::text || ' ' || ch.handle FROM ch, l`, seed.DemoChurchID, maternal, seed.DemoCadastroID)
	id, handle, _ = strings.Cut(row, " ")
	return id, handle
}

// TestTypeScriptVolunteerChecksInAnaInMaternal: "check in Ana in Maternal" as the volunteer of
// Maternal, with the official TypeScript client 2.x (2026-07-28) and a bearer token: one call
// by first name and class; when the class has another Ana the refusal lists the candidates
// by label and handle, and the second call with the handle checks her in. The texts name the
// child by her short label and the class, never by her full name, and the pick-up code is in
// the text once, with the note for the guardian, not in structuredContent.
func TestTypeScriptVolunteerChecksInAnaInMaternal(t *testing.T) {
	t.Parallel()
	node := nodeBin(t)
	a := newApp(t)
	childID, handle := a.sundayChild(t, true)
	anas := a.one(t, `SELECT count(*)::text FROM children c JOIN classes cl ON cl.id = c.class_id
		WHERE cl.church_id = $1 AND cl.name = 'Maternal' AND c.archived_at IS NULL
		  AND lower(split_part(c.name, ' ', 1)) = 'ana'`, seed.DemoChurchID)
	token := a.token(t, voluntario)
	call := func(args string) smokeReport {
		t.Helper()
		rep, out, _ := runSmoke(t, node, a.mcp, "--token", token, "--sdk", "v2", "--negotiate", "2026-07-28",
			"--call", "neemias_checkin_register", "--args", args)
		if rep.Call.Result.Content == nil {
			t.Fatalf("no tool result: %s", out)
		}
		return rep
	}
	rep := call(`{"child":"Ana","class":"Maternal"}`)
	calls := 1
	if anas != "1" {
		text := rep.Call.Result.Content[0].Text
		if !rep.Call.Result.IsError || !strings.Contains(text, handle) || !strings.Contains(text, "Maternal") {
			t.Fatalf("with %s Anas in Maternal, the first call = %+v; want a refusal listing the candidates with handles", anas, rep.Call.Result)
		}
		if strings.Contains(text, "Zzdomingo") {
			t.Errorf("the refusal names the child's surname to a volunteer: %s", text)
		}
		rep = call(`{"child":"` + handle + `"}`)
		calls++
	}
	res := rep.Call.Result
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("check-in after %d call(s) = %+v", calls, res)
	}
	text := res.Content[0].Text
	if !strings.Contains(text, "Ana T.") || !strings.Contains(text, "Maternal") || !strings.Contains(text, handle) {
		t.Errorf("the check-in text does not name the child's label, handle and class: %s", text)
	}
	if strings.Contains(text, "Zzdomingo") || strings.Contains(text, "Teste") {
		t.Errorf("the check-in text names the child's full name to a volunteer: %s", text)
	}
	if _, ok := res.StructuredContent["pickup_code"]; ok {
		t.Errorf("the pick-up code is in structuredContent: %v", res.StructuredContent)
	}
	if n := strings.Count(text, "Give this pick-up code to the guardian"); n != 1 {
		t.Errorf("the text carries the code's note %d times, want once: %s", n, text)
	}
	if got := a.one(t, `SELECT cl.name || ' ' || (k.checked_in_by = $2)::text FROM checkins k JOIN classes cl ON cl.id = k.class_id
		WHERE k.child_id = $1 AND k.service_date = (now() AT TIME ZONE 'America/Sao_Paulo')::date`, childID, seed.DemoVoluntarioID); got != "Maternal true" {
		t.Errorf("the check-in row: %q, want Maternal by the volunteer", got)
	}
}

// pickupCodeInText finds the pick-up code a client without MCP Apps gets in the text.
var pickupCodeInText = regexp.MustCompile(`pickup_code: ([0-9A-Za-z-]+)`)

// TestMCPRemoteAdminAsksWhoPickedUpAna: through mcp-remote (Claude Desktop's way in, OAuth in
// a browser, step-ups as needed) the ADMIN adds Ana's aunt as a trusted adult, reads Ana's
// pick-up list, checks her in, hands her to the aunt with the code from the text, and "who
// picked up Ana?" is one call of the class list filtered by her first name.
func TestMCPRemoteAdminAsksWhoPickedUpAna(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	_, handle := a.sundayChild(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cs, _ := mcpRemoteSession(t, ctx, a)
	callText := func(name string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError || len(res.Content) == 0 {
			t.Fatalf("%s: %+v", name, res)
		}
		tc, ok := res.Content[0].(*sdk.TextContent)
		if !ok {
			t.Fatalf("%s: content %T", name, res.Content[0])
		}
		return tc.Text
	}
	callText("neemias_pickup_adult_add", map[string]any{"child": handle, "name": "Tia Zzconfiável", "relationship": "aunt"})
	if list := callText("neemias_pickup_adults", map[string]any{"child": handle}); !strings.Contains(list, "Tia Zzconfiável") || !strings.Contains(list, "Marta Zzdomingo") {
		t.Fatalf("Ana's pick-up list lacks the aunt or the mother: %s", list)
	}
	in := callText("neemias_checkin_register", map[string]any{"child": handle})
	m := pickupCodeInText.FindStringSubmatch(in)
	if m == nil {
		t.Fatalf("no pick-up code in the check-in text of a client without MCP Apps: %s", in)
	}
	out := callText("neemias_checkout_register", map[string]any{"child": handle, "pickup_code": m[1], "picked_up_by": "Tia Zzconfiável"})
	if !strings.Contains(out, "picked up") {
		t.Errorf("check-out text: %s", out)
	}
	// The session never asked for children:read (nothing needed it), so even the ADMIN reads
	// Ana by her short label here; who took her needs pickups:read, granted by the step-up.
	who := callText("neemias_class_list", map[string]any{"child": "Ana"})
	// The text is the class list rendered for the model: Ana's row of her class's table
	// (handle | label | status | checked_in_at | picked_up_at | picked_up_by | released_by).
	row := regexp.MustCompile(`(?m)^\s*` + handle + ` \| Ana T\. \| picked_up \| [^|]+ \| [^|]+ \| Tia Zzconfiável \| \S[^|\n]*$`)
	if !row.MatchString(who) || !strings.Contains(who, "picked_up_by | released_by") {
		t.Errorf(`"who picked up Ana?" does not name the aunt and who released her: %s`, who)
	}
}
