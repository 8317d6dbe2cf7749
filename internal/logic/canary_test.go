package logic_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/store"
)

// TestPIICanary runs every capability for every role of both churches, through the generated
// dispatcher, on successful and failing paths, with sentinel names and phones in the data and in
// the inputs. No sentinel may reach a log line or an error message (env's cleanup checks both,
// as it does for every test here); in outputs a sentinel appears only where the caller's scopes
// allow it: names with children:read in roster_child and checkins_by_date, the phone with
// guardians:read in roster_child; elsewhere only in the fields the spec lets carry them, each
// with its scope (labelsAndNamesOnly): a child's label is its full name with children:read and
// otherwise a short label (first name, initials), an adult's name needs pickups:read (except
// the check-out's picked_up_by, the adult the caller named), a phone guardians:read.
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
				{capapi.CapCheckinRegister, map[string]any{"child": "Zzcanary", "class": "Pequenos"}},
				{capapi.CapCheckinRegister, map[string]any{"child": c.childName}},
				{capapi.CapCheckinRegister, map[string]any{"child": "Zzcanary", "class": "Turma Inexistente"}},
				{capapi.CapCheckoutRegister, map[string]any{"checkin_id": c.ck1, "pickup_code": "Zzpick0000", "picked_up_by": c.g1Name}},
				// Not on the list: the refusal's detail lists the adults, its message does not.
				{capapi.CapCheckoutRegister, map[string]any{"checkin_id": c.ck1, "pickup_code": fixtureCode, "picked_up_by": "Zzcanary Estranho Sentinela"}},
				{capapi.CapCheckoutRegister, map[string]any{"child": "Zzcanary", "pickup_code": "Zzpick0000", "picked_up_by": trustedName}},
				{capapi.CapCheckoutRegister, map[string]any{"checkin_id": c.ck2, "pickup_code": fixtureCode, "picked_up_by": c.g1Name}},
				{capapi.CapClassList, map[string]any{}},
				{capapi.CapClassList, map[string]any{"date": c.day.String()}},
				{capapi.CapClassList, map[string]any{"date": c.day.String(), "child": "Zzcanary"}},
				{capapi.CapPickupAdults, map[string]any{"child": c.k1Handle}},
				{capapi.CapPickupAdults, map[string]any{"child": c.k2.String()}},
				{capapi.CapPickupAdultAdd, map[string]any{"child": c.k1Handle, "name": "Zzcanary Vizinha Sentinela", "relationship": "neighbour", "phone": phoneSentinel}},
				{capapi.CapPickupAdultAdd, map[string]any{"child": c.k1Handle, "name": "Zzcanary Tio Sentinela", "relationship": "uncle", "note": "liga " + phoneSentinel}},
				{capapi.CapPickupAdultAdd, map[string]any{"child": c.k1Handle, "name": "Zzcanary 4242", "relationship": "uncle"}},
				{capapi.CapPickupAdultAdd, map[string]any{"child": c.k1Handle, "name": c.g1Name, "relationship": "mother"}},
				{capapi.CapPickupAdultRemove, map[string]any{"adult_id": c.pa1}},
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
				default:
					var v any
					if err := json.Unmarshal([]byte(wire), &v); err != nil {
						t.Fatal(err)
					}
					for _, p := range labelsAndNamesOnly(call.id, "", v, granted) {
						t.Errorf("%s as %s: output carries personal data: %s in %s", call.id, role, p, wire)
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

// shortLabel is a label without children:read: a first name, then initials ("S.") and, for
// namesakes, a number; never a whole surname (the fixture's names need no longer initials).
var shortLabel = regexp.MustCompile(`^\S+( \p{L}\.)*( [0-9]+)?$`)

// personal are the fixture's personal data as they could appear in an output: its children's,
// guardians' and adults' names and its phones.
var personal = []string{"Zzcanary", "Sentinela", "Criança", "Responsável", "Guardi", "90000-"}

// labelsAndNamesOnly returns the personal data in the output v (decoded JSON) of capability id
// that the caller's scopes do not allow, field by field (key is the field v is held in).
func labelsAndNamesOnly(id, key string, v any, granted capability.ScopeSet) []string {
	var found []string
	switch x := v.(type) {
	case map[string]any:
		for k, f := range x {
			found = append(found, labelsAndNamesOnly(id, k, f, granted)...)
		}
	case []any:
		for _, f := range x {
			found = append(found, labelsAndNamesOnly(id, key, f, granted)...)
		}
	case string:
		switch {
		case key == "child_label" || key == "label":
			if !granted.Has("children:read") && !shortLabel.MatchString(x) {
				found = append(found, fmt.Sprintf("%s %q is not a short label", key, x))
			}
			return found
		case key == "picked_up_by" && id == capapi.CapCheckoutRegister:
			return found // the adult the caller named, from the child's list
		case key == "name" || key == "picked_up_by":
			if !granted.Has("pickups:read") {
				found = append(found, fmt.Sprintf("%s %q without pickups:read", key, x))
			}
			return found
		case key == "phone":
			if !granted.Has("guardians:read") {
				found = append(found, fmt.Sprintf("phone without guardians:read"))
			}
			return found
		}
		for _, p := range personal {
			if strings.Contains(x, p) {
				found = append(found, fmt.Sprintf("%s holds %q", key, p))
			}
		}
	}
	return found
}
