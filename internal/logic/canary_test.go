package logic_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/store"
)

// TestPIICanary runs every capability for every role of both churches, through the generated
// dispatcher, on successful and failing paths, with sentinel names and phones in the data and in
// the inputs. No sentinel may reach a log line or an error message (env's cleanup checks both,
// as it does for every test here); in outputs a sentinel appears only where the caller's scopes
// allow it: names with children:read in roster_child and checkins_by_date, the phone with
// guardians:read in roster_child, and never in a tool's output.
func TestPIICanary(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	birth := todaySP().Time().AddDate(-3, 0, -1).Format("2006-01-02")
	for _, c := range []church{e.a, e.b} {
		for _, role := range store.Roles() {
			ctx := c.as(role)
			granted, _ := scopesOf(role)
			badConsent := enrollArgs(birth)
			badConsent["consent"].(map[string]any)["granted"] = false
			badPhone := enrollArgs(birth)
			badPhone["guardian"].(map[string]any)["phone"] = "tel " + enrollPhone
			future := enrollArgs(todaySP().AddDays(3).String())
			calls := []struct {
				id   string
				args map[string]any
			}{
				{capapi.CapRosterChildren, map[string]any{}},
				{capapi.CapAttendanceSummary, map[string]any{}},
				{capapi.CapAttendanceSummary, map[string]any{"from": "2020-01-01"}},
				{capapi.CapCheckinsByDate, map[string]any{"date": c.day.String()}},
				{capapi.CapCheckinRegister, map[string]any{"child_id": c.k1}},
				{capapi.CapCheckinRegister, map[string]any{"child_id": c.k4}},
				{capapi.CapCheckinRegister, map[string]any{"child_id": uuid.New()}},
				{capapi.CapCheckoutRegister, map[string]any{"checkin_id": c.ck1, "pickup_code": "Zzpick0000"}},
				{capapi.CapCheckoutRegister, map[string]any{"checkin_id": c.ck2, "pickup_code": fixtureCode}},
				{capapi.CapChildEnroll, enrollArgs(birth)},
				{capapi.CapChildEnroll, badConsent},
				{capapi.CapChildEnroll, badPhone},
				{capapi.CapChildEnroll, future},
				{capapi.CapChildEnroll, map[string]any{"name": enrollChildName, "extra": enrollPhone}},
			}
			for _, k := range []uuid.UUID{c.k1, c.k2, c.k3, c.k4, e.a.k1, uuid.New()} {
				calls = append(calls, struct {
					id   string
					args map[string]any
				}{capapi.CapRosterChild, map[string]any{"id": k}})
			}
			for _, call := range calls {
				out, err := e.invoke(ctx, call.id, call.args)
				if err != nil {
					continue // its message is checked by the cleanup
				}
				wire := jsonOf(t, out)
				name := strings.Contains(wire, "Zzcanary")
				phone := strings.Contains(wire, "90000-4")
				switch call.id {
				case capapi.CapRosterChild:
					if name && !granted.Has("children:read") || phone && !granted.Has("guardians:read") {
						t.Errorf("%s as %s: output beyond the scopes: %s", call.id, role, wire)
					}
				case capapi.CapCheckinsByDate:
					if name && !granted.Has("children:read") || phone {
						t.Errorf("%s as %s: output beyond the scopes: %s", call.id, role, wire)
					}
				default:
					if name || phone || strings.Contains(wire, "Criança") {
						t.Errorf("%s as %s: output carries personal data: %s", call.id, role, wire)
					}
				}
				// The generated String and LogValue of the output redact too.
				if s := fmt.Sprint(out) + fmt.Sprintf("%v %+v", out, out); strings.Contains(s, "Zzcanary") || strings.Contains(s, "90000-4") {
					t.Errorf("%s: fmt of the output shows personal data: %s", call.id, s)
				}
			}
		}
	}
	// The canary is only meaningful if the calls were logged, inputs included.
	logs := e.logs.String()
	if !strings.Contains(logs, `"capability":"neemias_child_enroll"`) || !strings.Contains(logs, "[redacted child_name]") ||
		!strings.Contains(logs, "[redacted guardian_phone]") {
		t.Errorf("the service did not log the calls with their redacted inputs:\n%.2000s", logs)
	}
}
