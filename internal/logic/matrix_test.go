package logic_test

import (
	"context"
	"errors"
	"testing"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/store"
)

// enrollArgs is a valid enrollment of a 4-year-old with the canary's names and phone.
func enrollArgs(birth string) map[string]any {
	return map[string]any{
		"name":       enrollChildName,
		"birth_date": birth,
		"guardian":   map[string]any{"name": enrollGuardName, "phone": enrollPhone, "relationship": "mother"},
		"consent":    map[string]any{"granted": true, "text_version": "2026-01", "legal_basis": "consent"},
	}
}

// TestEveryCapabilityForEveryRole pins the scope matrix of the spec as the generated dispatcher
// enforces it with each role's scopes (gen/scopes.RoleScopes): allowed calls succeed, the others
// are *errs.Forbidden naming the capability, and the handler never runs for them (the audit log
// records only allowed calls of audited capabilities).
func TestEveryCapabilityForEveryRole(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	birth := todaySP().Time().AddDate(-4, 0, -3).Format("2006-01-02")
	args := map[string]any{
		capapi.CapRosterChildren:    map[string]any{},
		capapi.CapRosterChild:       map[string]any{"id": a.k1},
		capapi.CapAttendanceSummary: map[string]any{},
		capapi.CapCheckinsByDate:    map[string]any{"date": a.day.String()},
		capapi.CapCheckinRegister:   map[string]any{"child_id": a.k1},
		capapi.CapCheckoutRegister:  map[string]any{"checkin_id": a.ck1, "pickup_code": fixtureCode},
		capapi.CapChildEnroll:       enrollArgs(birth),
	}
	const (
		admin = store.RoleAdmin
		cad   = store.RoleCadastro
		vol   = store.RoleVoluntario
		resp  = store.RoleResponsavel
	)
	allowed := map[string][]string{
		capapi.CapRosterChildren:    {admin, cad, vol},
		capapi.CapRosterChild:       {admin, cad, vol, resp},
		capapi.CapAttendanceSummary: {admin, vol},
		capapi.CapCheckinsByDate:    {admin, cad, vol, resp},
		capapi.CapCheckinRegister:   {admin, cad, vol, resp},
		capapi.CapCheckoutRegister:  {admin, cad, vol, resp},
		capapi.CapChildEnroll:       {admin, cad},
	}
	audited := map[string]bool{
		capapi.CapRosterChild: true, capapi.CapCheckinsByDate: true,
		capapi.CapCheckinRegister: true, capapi.CapCheckoutRegister: true, capapi.CapChildEnroll: true,
	}
	wantEntries := 0
	for _, id := range []string{
		capapi.CapRosterChildren, capapi.CapRosterChild, capapi.CapAttendanceSummary, capapi.CapCheckinsByDate,
		capapi.CapCheckinRegister, capapi.CapCheckoutRegister, capapi.CapChildEnroll,
	} {
		for _, role := range store.Roles() {
			ok := false
			for _, r := range allowed[id] {
				ok = ok || r == role
			}
			t.Run(id+"/"+role, func(t *testing.T) {
				in := args[id]
				if id == capapi.CapChildEnroll { // another child per role: duplicates are refused
					m := enrollArgs(birth)
					m["name"] = enrollChildName + " " + role
					in = m
				}
				out, err := e.invoke(a.as(role), id, in)
				if ok {
					if err != nil || out == nil {
						t.Fatalf("allowed call failed: %v", err)
					}
					if audited[id] {
						wantEntries++
					}
					return
				}
				var f *errs.Forbidden
				if !errors.As(err, &f) || f.Capability != id {
					t.Fatalf("err = %v, want *errs.Forbidden for %s", err, id)
				}
			})
		}
	}
	if got := len(e.audit()); got != wantEntries {
		t.Errorf("audit log has %d entries, want %d (one per allowed audited call)", got, wantEntries)
	}
}

// TestNoPrincipalIsUnauthenticated: without a verified caller on the context, every capability
// fails closed with errs.ErrUnauthenticated, even with every scope granted to the dispatcher.
func TestNoPrincipalIsUnauthenticated(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	all, _ := scopesOf(store.RoleAdmin)
	for _, tc := range []struct {
		id   string
		args any
	}{
		{capapi.CapRosterChildren, map[string]any{}},
		{capapi.CapRosterChild, map[string]any{"id": e.a.k1}},
		{capapi.CapAttendanceSummary, map[string]any{}},
		{capapi.CapCheckinsByDate, map[string]any{"date": e.a.day.String()}},
		{capapi.CapCheckinRegister, map[string]any{"child_id": e.a.k1}},
		{capapi.CapCheckoutRegister, map[string]any{"checkin_id": e.a.ck1, "pickup_code": fixtureCode}},
		{capapi.CapChildEnroll, enrollArgs("2022-01-01")},
	} {
		t.Run(tc.id, func(t *testing.T) {
			_, err := invokeWith(e, ctx, tc.id, tc.args, all)
			if !errors.Is(err, errs.ErrUnauthenticated) {
				t.Fatalf("err = %v, want %v", err, errs.ErrUnauthenticated)
			}
		})
	}
	if _, err := e.svc.Complete(ctx, capapi.CapAttendanceSummary, "class_id", ""); !errors.Is(err, errs.ErrUnauthenticated) {
		t.Errorf("Complete: err = %v, want %v", err, errs.ErrUnauthenticated)
	}
	if n := e.count(`SELECT count(*) FROM checkins WHERE service_date = $1`, todaySP().Time()); n != 0 {
		t.Errorf("%d check-ins written without a caller", n)
	}
	// The refused child-data calls are audited as anonymous.
	n := 0
	for _, r := range e.audit() {
		if r.ChurchID != nil || r.UserID != nil || r.Outcome != "denied" {
			t.Errorf("entry %+v, want anonymous and denied", r)
		}
		n++
	}
	if n != 5 {
		t.Errorf("%d anonymous audit entries, want 5 (the audited capabilities)", n)
	}
}
