package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/server"
)

// TestOutputsConformOnTheDemoData: the output schemas are proven by tests, not checked on
// every response. Every capability of the registry, over REST on the demo church, for every
// role that may call it, with the role's scopes and with each sensitive scope taken away (the
// redacted variants): each 200 body, the bytes a client gets, validates against the generated
// output schema with a full JSON Schema validator. A read whose URI has no path variable is
// requested as its URI says (GET of its path, no query), so it needs no entry here; any other
// capability without a request here fails the test with the entry to add, and one whose calls
// all fail fails it too.
func TestOutputsConformOnTheDemoData(t *testing.T) {
	t.Parallel()
	a := newAppWith(t, server.Config{RateLimitOff: true})
	users := map[string]demoUser{admin.role: admin, cadastro.role: cadastro, voluntario.role: voluntario, responsavel.role: responsavel}
	free := a.freeChildren(t, 2, true) // in the volunteer's classes, so every staff role may check them in
	kid := a.one(t, `SELECT id::text FROM children WHERE church_id = $1 AND archived_at IS NULL ORDER BY id LIMIT 1`, seed.DemoChurchID)
	busiest := a.one(t, `SELECT service_date::text FROM checkins WHERE church_id = $1 GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`, seed.DemoChurchID)
	name := a.one(t, `SELECT name FROM children WHERE church_id = $1 AND archived_at IS NULL ORDER BY id LIMIT 1`, seed.DemoChurchID)
	fragment := strings.Fields(name)[0]
	// A child with two guardians and one of them, to unlink (idempotent: the next calls answer
	// already_unlinked); none of the children above.
	twoParents := strings.Split(a.one(t, `SELECT gc.child_id::text || ' ' || max(gc.guardian_id::text) FROM guardian_children gc
		WHERE gc.church_id = $1 AND gc.child_id <> ALL($2::uuid[]) AND gc.child_id::text <> $3
		GROUP BY gc.child_id HAVING count(*) >= 2 ORDER BY gc.child_id LIMIT 1`, seed.DemoChurchID, free, kid), " ")
	// A child to archive: none of the others here, not checked in today.
	leaving := a.one(t, `SELECT id::text FROM children c WHERE church_id = $1 AND archived_at IS NULL AND id <> ALL($2::uuid[])
		AND NOT EXISTS (SELECT 1 FROM checkins ck WHERE ck.child_id = c.id AND ck.checked_out_at IS NULL) ORDER BY id DESC LIMIT 1`, seed.DemoChurchID, free)

	// The records' corrections and life: a child and one of its guardians to correct, two
	// children never checked in on the same day to merge, two guardians without an account to
	// merge, and a child whose consent is revoked; none of the children above.
	used := append([]string{kid, twoParents[0], leaving}, free...)
	correctGuardian := a.one(t, `SELECT guardian_id::text FROM guardian_children WHERE child_id = $1 ORDER BY guardian_id LIMIT 1`, kid)
	mergePair := strings.Split(a.one(t, `SELECT s.id::text || ' ' || d.id::text FROM children s JOIN children d ON d.church_id = s.church_id AND d.id > s.id
		WHERE s.church_id = $1 AND s.archived_at IS NULL AND s.id <> ALL($2::uuid[]) AND d.id <> ALL($2::uuid[])
		  AND NOT EXISTS (SELECT 1 FROM checkins x JOIN checkins y ON y.service_date = x.service_date WHERE x.child_id = s.id AND y.child_id = d.id)
		  AND NOT EXISTS (SELECT 1 FROM pickup_adults x JOIN pickup_adults y ON app_fold_name(y.name) = app_fold_name(x.name)
		                  WHERE x.child_id = s.id AND y.child_id = d.id AND x.authorized <> y.authorized)
		ORDER BY (SELECT count(*) FROM checkins ck WHERE ck.child_id = d.id), s.id, d.id LIMIT 1`, seed.DemoChurchID, used), " ")
	used = append(used, mergePair...)
	guardianPair := strings.Split(a.one(t, `SELECT string_agg(id::text, ' ') FROM (SELECT g.id FROM guardians g
		WHERE g.church_id = $1 AND g.user_id IS NULL AND g.id <> $3::uuid
		  AND NOT EXISTS (SELECT 1 FROM guardian_children gc WHERE gc.guardian_id = g.id AND gc.child_id = ANY($2::uuid[]))
		ORDER BY g.id DESC LIMIT 2) p`, seed.DemoChurchID, used, correctGuardian), " ")
	revoked := a.one(t, `SELECT id::text FROM children WHERE church_id = $1 AND archived_at IS NULL AND id <> ALL($2::uuid[])
		AND NOT EXISTS (SELECT 1 FROM guardian_children gc WHERE gc.child_id = children.id AND gc.guardian_id = ANY($3::uuid[]))
		ORDER BY id DESC LIMIT 1`, seed.DemoChurchID, used, guardianPair)

	// A check-in whose pick-up code the test knows, for the check-out.
	status, _, body := restCall(t, "POST", a.base+"/api/v1/tools/neemias_checkin_register", a.token(t, admin), `{"child_id":"`+free[1]+`"}`)
	var ck struct {
		CheckinID  string `json:"checkin_id"`
		PickupCode string `json:"pickup_code"`
	}
	if err := json.Unmarshal([]byte(body), &ck); status != http.StatusOK || err != nil || ck.PickupCode == "" {
		t.Fatalf("check-in for the check-out: %d %s", status, body)
	}
	handle := a.one(t, `SELECT handle FROM children WHERE id = $1`, free[1])
	guardian := a.one(t, `SELECT g.name FROM guardian_children gc JOIN guardians g ON g.id = gc.guardian_id
		WHERE gc.child_id = $1 ORDER BY g.name LIMIT 1`, free[1])
	trusted := a.one(t, `INSERT INTO pickup_adults (church_id, child_id, name, relationship, authorized, created_by)
		VALUES ($1, $2, 'Vizinha Conforme', 'neighbour', true, $3) RETURNING id::text`, seed.DemoChurchID, free[1], seed.DemoAdminID)
	var added atomic.Int32
	var enrolled atomic.Int32
	enroll := func() string {
		n := enrolled.Add(1)
		suffix := string(rune('A'+n%26)) + strings.Repeat("a", int(n/26)+1)
		birth := time.Now().AddDate(-5, 0, 0).Format(time.DateOnly)
		return `{"name":"Saída Conforme ` + suffix + `","birth_date":"` + birth + `","guardian":{"name":"Responsável Conforme","phone":"+55 11 91234-5678","relationship":"mother"},` +
			`"consent":{"granted":true,"text_version":"2026-01","legal_basis":"consent"}}`
	}
	requests := map[string]func() (method, path, body string){
		capapi.CapRosterChild:    func() (string, string, string) { return "GET", "/roster/children/" + kid, "" },
		capapi.CapCheckinsByDate: func() (string, string, string) { return "GET", "/checkins/" + busiest, "" },
		capapi.CapCheckinRegister: func() (string, string, string) {
			return "POST", "/tools/neemias_checkin_register", `{"child_id":"` + free[0] + `"}`
		},
		capapi.CapCheckoutRegister: func() (string, string, string) {
			return "POST", "/tools/neemias_checkout_register", `{"checkin_id":"` + ck.CheckinID + `","pickup_code":"` + ck.PickupCode + `","picked_up_by":"` + guardian + `"}`
		},
		capapi.CapPickupAdults: func() (string, string, string) { return "GET", "/children/" + handle + "/pickup-adults", "" },
		capapi.CapPickupAdultAdd: func() (string, string, string) {
			n := added.Add(1)
			return "POST", "/tools/neemias_pickup_adult_add", `{"child":"` + handle + `","name":"Tia Conforme ` + string(rune('A'+n%26)) + strings.Repeat("a", int(n/26)+1) + `","relationship":"aunt"}`
		},
		capapi.CapPickupAdultRemove: func() (string, string, string) {
			return "POST", "/tools/neemias_pickup_adult_remove", `{"adult_id":"` + trusted + `"}`
		},
		capapi.CapChildEnroll: func() (string, string, string) { return "POST", "/tools/neemias_child_enroll", enroll() },
		capapi.CapGuardianUnlink: func() (string, string, string) {
			return "POST", "/tools/neemias_guardian_unlink", `{"child_id":"` + twoParents[0] + `","guardian_id":"` + twoParents[1] + `"}`
		},
		capapi.CapChildArchive: func() (string, string, string) {
			return "POST", "/tools/neemias_child_archive", `{"child_id":"` + leaving + `"}`
		},
		capapi.CapChildFind: func() (string, string, string) {
			return "POST", "/tools/neemias_child_find", `{"name":"` + fragment + `"}`
		},
		capapi.CapChildCorrect: func() (string, string, string) {
			return "POST", "/tools/neemias_child_correct", `{"child_id":"` + kid + `","medical_notes":"asma leve"}`
		},
		capapi.CapGuardianCorrect: func() (string, string, string) {
			return "POST", "/tools/neemias_guardian_correct", `{"guardian_id":"` + correctGuardian + `","name":"Responsável Conforme Corrigido"}`
		},
		capapi.CapChildMerge: func() (string, string, string) { // the first call merges, the next are not found
			return "POST", "/tools/neemias_child_merge", `{"survivor_id":"` + mergePair[0] + `","duplicate_id":"` + mergePair[1] + `"}`
		},
		capapi.CapGuardianMerge: func() (string, string, string) {
			return "POST", "/tools/neemias_guardian_merge", `{"survivor_id":"` + guardianPair[0] + `","duplicate_id":"` + guardianPair[1] + `"}`
		},
		capapi.CapConsentRevoke: func() (string, string, string) { // idempotent: the next calls revoke nothing
			return "POST", "/tools/neemias_consent_revoke", `{"child_id":"` + revoked + `"}`
		},
	}
	for _, c := range capapi.Catalog(capapi.UnimplementedHandler{}).All() {
		t.Run(c.ID, func(t *testing.T) {
			request, ok := requests[c.ID]
			if !ok {
				request, ok = plainRead(c.Capability)
			}
			if !ok {
				t.Fatalf("no demo request for %s: add to requests in internal/server/outputs_demo_test.go\n\t%s", c.ID, requestEntry(c.Capability))
			}
			var s jsonschema.Schema
			if err := json.Unmarshal(c.OutputSchema, &s); err != nil {
				t.Fatalf("output schema: %v", err)
			}
			resolved, err := s.Resolve(nil)
			if err != nil {
				t.Fatalf("output schema: %v", err)
			}
			checked := 0
			for _, role := range scopes.Roles() {
				u, ok := users[role]
				if !ok {
					t.Fatalf("role %s has no demo user", role)
				}
				full, _ := scopes.RoleScopes(role)
				if !full.Has(c.Scope) {
					continue
				}
				variants := [][]string{full.List()}
				for _, info := range scopes.All() {
					if info.Sensitive && full.Has(info.Name) && info.Name != c.Scope {
						variants = append(variants, without(full, info.Name))
					}
				}
				for _, granted := range variants {
					method, path, in := request()
					status, _, body := restCall(t, method, a.base+"/api/v1"+path, a.token(t, u, granted...), in)
					switch {
					case status >= 500:
						t.Errorf("%s with %v: %d %.300s", role, granted, status, body)
						continue
					case status != http.StatusOK:
						continue // row filters and state may refuse (a guardian's view of another family, a second check-out)
					}
					var v any
					if err := json.Unmarshal([]byte(body), &v); err != nil {
						t.Fatalf("%s with %v: the body is not JSON: %v", role, granted, err)
					}
					if err := resolved.Validate(v); err != nil {
						t.Errorf("%s with %v: output violates its schema: %v", role, granted, err)
					}
					checked++
				}
			}
			if checked == 0 {
				t.Error("no call succeeded, so nothing was checked")
			}
		})
	}
}

func without(s capability.ScopeSet, scope string) []string {
	var out []string
	for _, x := range s.List() {
		if x != scope {
			out = append(out, x)
		}
	}
	return out
}

// restPath is the REST path of a capability: POST /tools/NAME for a tool, the path of its URI
// (scheme and query variables left out) for a read.
func restPath(c capability.Capability) (method, path string) {
	if c.Kind == capability.KindTool {
		return "POST", "/tools/" + c.Name
	}
	_, rest, _ := strings.Cut(c.URITemplate, "://")
	rest, _, _ = strings.Cut(rest, "{?")
	return "GET", "/" + rest
}

// plainRead is the request of a read whose URI has no path variable: GET its path, no query.
func plainRead(c capability.Capability) (func() (string, string, string), bool) {
	method, path := restPath(c)
	if c.Kind == capability.KindTool || strings.Contains(path, "{") {
		return nil, false
	}
	return func() (string, string, string) { return method, path, "" }, true
}

// requestEntry is the line to add to the requests of TestOutputsConformOnTheDemoData for c: its
// method and path, and its spec example as the body (or in the path), whose $names the entry
// replaces with demo values.
func requestEntry(c capability.Capability) string {
	method, path := restPath(c)
	example := string(c.Example)
	if example == "" {
		example = "{}"
	}
	const entry = "capapi.%s: func() (string, string, string) { return %q, %q, %s },  // spec example: %s; replace each $name with a demo value"
	goName := "Cap"
	for _, w := range strings.Split(strings.TrimPrefix(c.ID, capapi.ToolPrefix), "_") {
		if w != "" {
			goName += strings.ToUpper(w[:1]) + w[1:]
		}
	}
	if method == "POST" {
		return fmt.Sprintf(entry, goName, method, path, "`"+example+"`", example)
	}
	return fmt.Sprintf(entry, goName, method, path, `""`, example)
}
