package logic_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/logic"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// TestCrossChurchIsolation: each role of church B, acting on church A's ids, sees and changes
// nothing of church A, and gets the same answers as for ids that do not exist.
func TestCrossChurchIsolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, b := e.a, e.b
	aIDs := []uuid.UUID{a.id, a.c1, a.c2, a.k1, a.k2, a.k3, a.k4, a.g1, a.g2, a.ck1, a.ck2, a.ck3}
	leaks := func(t *testing.T, out any) {
		t.Helper()
		wire := jsonOf(t, out)
		for _, id := range aIDs {
			if strings.Contains(wire, id.String()) {
				t.Errorf("church A's id %s in church B's answer: %s", id, wire)
			}
		}
		if strings.Contains(wire, childSentinel) || strings.Contains(wire, phoneSentinel) {
			t.Errorf("church A's personal data in church B's answer: %s", wire)
		}
	}
	for _, role := range store.Roles() {
		t.Run(role, func(t *testing.T) {
			ctx := b.as(role)
			granted, _ := scopesOf(role)
			if granted.Has("roster:read") {
				leaks(t, mustInvoke[capapi.RosterChildrenOutput](e, ctx, capapi.CapRosterChildren, map[string]any{}))
			}
			if granted.Has("attendance:read") {
				leaks(t, mustInvoke[capapi.AttendanceSummaryOutput](e, ctx, capapi.CapAttendanceSummary, map[string]any{}))
				_, err := e.invoke(ctx, capapi.CapAttendanceSummary, map[string]any{"class_id": a.c1})
				wantInvalid(t, err, "class_id")
			}
			leaks(t, mustInvoke[capapi.CheckinsByDateOutput](e, ctx, capapi.CapCheckinsByDate, map[string]any{"date": a.day.String()}))
			for _, k := range []uuid.UUID{a.k1, a.k2, a.k3, a.k4} {
				if granted.Has("children:read") {
					_, err := e.invoke(ctx, capapi.CapRosterChild, map[string]any{"id": k})
					wantNotFound(t, err)
				}
				_, err := e.invoke(ctx, capapi.CapCheckinRegister, map[string]any{"child_id": k})
				wantNotFound(t, err)
			}
			for _, ck := range []uuid.UUID{a.ck1, a.ck2, a.ck3} {
				// The right code and an adult on the child's list: still nothing.
				_, err := e.invoke(ctx, capapi.CapCheckoutRegister, map[string]any{"checkin_id": ck, "pickup_code": fixtureCode, "picked_up_by": "Responsável Dois"})
				wantNotFound(t, err)
			}
			if granted.Has("children:write") {
				m := enrollArgs("2022-05-05")
				m["class_id"] = a.c1
				_, err := e.invoke(ctx, capapi.CapChildEnroll, m)
				wantInvalid(t, err, "class_id")
			}
			got, err := e.svc.Complete(ctx, capapi.CapAttendanceSummary, "class_id", "")
			if err != nil {
				t.Fatal(err)
			}
			leaks(t, got)
		})
	}
	// Church A's check-ins are untouched, even with the right code offered.
	if n := e.count(`SELECT count(*) FROM checkins WHERE church_id = $1 AND (checked_out_at IS NOT NULL OR failed_pickup_attempts > 0)`, a.id); n != 0 {
		t.Errorf("%d of church A's check-ins changed", n)
	}
	if n := e.count(`SELECT count(*) FROM checkins WHERE church_id = $1 AND service_date = $2`, a.id, todaySP().Time()); n != 0 {
		t.Errorf("%d check-ins written in church A", n)
	}
	// A principal naming church A with church B's user gets nothing: RLS and the filters
	// follow the principal, and the audit entry cannot be forged for someone else.
	forged := principal.With(context.Background(), principal.Principal{
		UserID: b.users[store.RoleResponsavel], ChurchID: a.id, Role: store.RoleResponsavel,
		Scopes: plus(store.RoleResponsavel, "children:read"),
	})
	_, err := e.invoke(forged, capapi.CapRosterChild, map[string]any{"id": a.k1})
	wantNotFound(t, err)
}

func mustScopes(role string) capability.ScopeSet {
	s, ok := scopes.RoleScopes(role)
	if !ok {
		panic(role)
	}
	return s
}

func TestCompleteClassIDs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	sorted := func(ids ...uuid.UUID) []string {
		var out []string
		for _, id := range ids {
			out = append(out, id.String())
		}
		return out
	}
	// Classes come youngest first: c1 (0-5), c2 (6-12).
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		capID   string
		varName string
		prefix  string
		want    []string
	}{
		{"all visible", a.as(store.RoleAdmin), capapi.CapAttendanceSummary, "class_id", "", sorted(a.c1, a.c2)},
		{"by prefix", a.as(store.RoleAdmin), capapi.CapAttendanceSummary, "class_id", a.c2.String()[:8], sorted(a.c2)},
		{"upper-case prefix", a.as(store.RoleAdmin), capapi.CapAttendanceSummary, "class_id", strings.ToUpper(a.c2.String()[:8]), sorted(a.c2)},
		{"full id", a.as(store.RoleAdmin), capapi.CapAttendanceSummary, "class_id", a.c1.String(), sorted(a.c1)},
		{"volunteer: own classes", a.as(store.RoleVoluntario), capapi.CapAttendanceSummary, "class_id", "", sorted(a.c1)},
		{"volunteer: prefix of another class", a.as(store.RoleVoluntario), capapi.CapAttendanceSummary, "class_id", a.c2.String()[:8], nil},
		{"other church", e.b.as(store.RoleAdmin), capapi.CapAttendanceSummary, "class_id", a.c1.String()[:8], nil},
		{"LIKE wildcard", a.as(store.RoleAdmin), capapi.CapAttendanceSummary, "class_id", "%", nil},
		{"not completable", a.as(store.RoleAdmin), capapi.CapAttendanceSummary, "from", "", nil},
		{"unknown capability", a.as(store.RoleAdmin), "nope", "class_id", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.svc.Complete(tc.ctx, tc.capID, tc.varName, tc.prefix)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestOnTheDemoData runs the capabilities over internal/seed's demo church, the data `make run`
// serves: the demo accounts see consistent, row-filtered answers.
func TestOnTheDemoData(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds a church")
	}
	t.Parallel()
	until := time.Date(2026, 6, 7, 0, 0, 0, 0, time.UTC) // a Sunday
	st := storetest.NewSeeded(t, seed.Options{Until: until, Months: 2})
	svc := logic.New(st, logic.WithClock(func() time.Time { return until.Add(15 * time.Hour) }))
	as := func(user uuid.UUID, role string) context.Context {
		return principal.With(context.Background(), principal.Principal{
			UserID: user, ChurchID: seed.DemoChurchID, Role: role, Scopes: mustScopes(role), ClientID: "demo",
		})
	}
	admin := as(seed.DemoAdminID, store.RoleAdmin)
	vol := as(seed.DemoVoluntarioID, store.RoleVoluntario)
	resp := as(seed.DemoResponsavelID, store.RoleResponsavel)

	var enrolled, placed int
	err := st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*), count(class_id) FROM children WHERE church_id = $1 AND archived_at IS NULL`, seed.DemoChurchID).
			Scan(&enrolled, &placed)
	})
	if err != nil {
		t.Fatal(err)
	}
	roster, err := svc.RosterChildren(admin, &capapi.RosterChildrenInput{})
	if err != nil {
		t.Fatal(err)
	}
	if roster.TotalChildren != int64(placed) || placed == 0 {
		t.Errorf("roster total %d, want the %d placed children (of %d)", roster.TotalChildren, placed, enrolled)
	}
	volRoster, err := svc.RosterChildren(vol, &capapi.RosterChildrenInput{})
	if err != nil {
		t.Fatal(err)
	}
	if volRoster.TotalChildren == 0 || volRoster.TotalChildren >= roster.TotalChildren || len(volRoster.Classes) != 2 {
		t.Errorf("volunteer roster %v, admin %v", volRoster, roster)
	}

	from := capability.DateOf(until).AddDays(-60)
	sum, err := svc.AttendanceSummary(admin, &capapi.AttendanceSummaryInput{From: &from})
	if err != nil {
		t.Fatal(err)
	}
	if sum.TotalCheckins == 0 {
		t.Fatalf("no attendance in the demo's last 60 days: %v", sum)
	}
	// The latest service day on which the demo guardian's children attended.
	var dayOut, mineOut *capapi.CheckinsByDateOutput
	var day, mine []capapi.CheckinsByDateOutputClassesItemCheckinsItem
	for i := len(sum.Days) - 1; i >= 0 && len(mine) == 0; i-- {
		d := sum.Days[i].Date
		if dayOut, err = svc.CheckinsByDate(admin, &capapi.CheckinsByDateInput{Date: d}); err != nil {
			t.Fatal(err)
		}
		if mineOut, err = svc.CheckinsByDate(resp, &capapi.CheckinsByDateInput{Date: d}); err != nil {
			t.Fatal(err)
		}
		day, _ = checkinsOf(dayOut)
		mine, _ = checkinsOf(mineOut)
	}
	if len(mine) == 0 || len(mine) > 2 || len(day) <= len(mine) || mineOut.Total != int64(len(mine)) {
		t.Fatalf("guardian's check-ins %v, all %v", mineOut, dayOut)
	}
	// A guardian has no children:read (the spec's matrix), and the database requires it of the
	// child record (rf_has_scope): grant it here to test the row filter underneath.
	respChild := principal.With(context.Background(), principal.Principal{
		UserID: seed.DemoResponsavelID, ChurchID: seed.DemoChurchID, Role: store.RoleResponsavel,
		Scopes: plus(store.RoleResponsavel, scopes.ChildrenRead), ClientID: "demo",
	})
	// The check-ins name children by handle; the roster reads them by id.
	idOf := func(handle string) uuid.UUID {
		t.Helper()
		var id uuid.UUID
		if err := st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT id FROM children WHERE handle = $1`, handle).Scan(&id)
		}); err != nil {
			t.Fatalf("child of handle %s: %v", handle, err)
		}
		return id
	}
	if _, err := svc.RosterChild(resp, &capapi.RosterChildInput{ID: idOf(mine[0].ChildHandle)}); !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("guardian without children:read reads their own child's record: err = %v", err)
	}
	for _, ck := range mine {
		if _, err := svc.RosterChild(respChild, &capapi.RosterChildInput{ID: idOf(ck.ChildHandle)}); err != nil {
			t.Errorf("guardian cannot read their own child %s: %v", ck.ChildHandle, err)
		}
	}
	// The guardian cannot read a child of someone else.
	for _, ck := range day {
		if slices.ContainsFunc(mine, func(m capapi.CheckinsByDateOutputClassesItemCheckinsItem) bool {
			return m.ChildHandle == ck.ChildHandle
		}) {
			continue
		}
		if _, err := svc.RosterChild(respChild, &capapi.RosterChildInput{ID: idOf(ck.ChildHandle)}); !errors.Is(err, errs.ErrNotFound) {
			t.Errorf("guardian reads child %s: err = %v", ck.ChildHandle, err)
		}
		break
	}
}
