package logic_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/logic"
	"github.com/neemias/neemias-mcp/internal/store"
)

func TestRosterChildrenCountsPerClassAndAge(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	all := []capapi.RosterChildrenOutputClassesItem{
		{ClassID: a.c1, ClassName: "Pequenos", MinAge: 0, MaxAge: 5, Children: 2},
		{ClassID: a.c2, ClassName: "Grandes", MinAge: 6, MaxAge: 12, Children: 1},
	}
	for _, tc := range []struct {
		role string
		want capapi.RosterChildrenOutput
	}{
		// k4 has no class: not counted. Church B's children never are.
		{store.RoleAdmin, capapi.RosterChildrenOutput{TotalChildren: 3, Classes: all,
			AgeGroups: []capapi.RosterChildrenOutputAgeGroupsItem{{Age: 3, Children: 1}, {Age: 4, Children: 1}, {Age: 8, Children: 1}}}},
		{store.RoleCadastro, capapi.RosterChildrenOutput{TotalChildren: 3, Classes: all,
			AgeGroups: []capapi.RosterChildrenOutputAgeGroupsItem{{Age: 3, Children: 1}, {Age: 4, Children: 1}, {Age: 8, Children: 1}}}},
		// The volunteer sees the class assigned to them only.
		{store.RoleVoluntario, capapi.RosterChildrenOutput{TotalChildren: 2, Classes: all[:1],
			AgeGroups: []capapi.RosterChildrenOutputAgeGroupsItem{{Age: 3, Children: 1}, {Age: 4, Children: 1}}}},
	} {
		t.Run(tc.role, func(t *testing.T) {
			got := mustInvoke[capapi.RosterChildrenOutput](e, a.as(tc.role), capapi.CapRosterChildren, map[string]any{})
			if d := cmp.Diff(&tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
			if j := jsonOf(t, got); strings.Contains(j, "Zzcanary") || strings.Contains(j, "Criança") {
				t.Errorf("aggregate output carries a name: %s", j)
			}
		})
	}
	t.Run("empty class listed with zero", func(t *testing.T) {
		got := mustInvoke[capapi.RosterChildrenOutput](e, e.b.as(store.RoleAdmin), capapi.CapRosterChildren, map[string]any{})
		if got.TotalChildren != 3 || len(got.Classes) != 2 {
			t.Fatalf("church B: %+v", got)
		}
	})
	if n := len(e.audit()); n != 0 {
		t.Errorf("aggregate reads wrote %d audit entries, want none", n)
	}
}

func TestRosterChildRowFilteredWithoutExistenceLeak(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	type want struct {
		visible   bool
		guardians int
		phones    bool // phones present: the caller holds guardians:read
		class     *uuid.UUID
	}
	for _, tc := range []struct {
		name  string
		role  string
		child uuid.UUID
		want  want
	}{
		{"admin sees k1 with phones", store.RoleAdmin, a.k1, want{true, 2, true, &a.c1}},
		{"cadastro sees unplaced k4", store.RoleCadastro, a.k4, want{true, 1, true, nil}},
		{"volunteer sees own class, no phones", store.RoleVoluntario, a.k1, want{true, 2, false, &a.c1}},
		{"volunteer: other class", store.RoleVoluntario, a.k2, want{}},
		{"volunteer: unplaced child", store.RoleVoluntario, a.k4, want{}},
		{"guardian sees own child", store.RoleResponsavel, a.k2, want{true, 1, true, &a.c2}},
		{"guardian: someone else's child", store.RoleResponsavel, a.k3, want{}},
		{"admin: other church's child", store.RoleAdmin, e.b.k1, want{}},
		{"admin: random id", store.RoleAdmin, uuid.New(), want{}},
		{"guardian: random id", store.RoleResponsavel, uuid.New(), want{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The row filters, whatever the role's scopes: children:read is the spec's for
			// ADMIN and CADASTRO only (TestEveryCapabilityForEveryRole), granted here to all.
			out, err := invokeWith(e, a.as(tc.role), capapi.CapRosterChild, map[string]any{"id": tc.child}, plus(tc.role, scopes.ChildrenRead))
			if !tc.want.visible {
				wantNotFound(t, err)
				if out != nil {
					t.Fatalf("output %v with the error", out)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := out.(*capapi.RosterChildOutput)
			if got.ChildID != tc.child || got.Name == "" || got.BirthDate.IsZero() || len(got.Guardians) != tc.want.guardians {
				t.Fatalf("got %v", got)
			}
			if !cmp.Equal(got.ClassID, tc.want.class) || (got.ClassName != nil) != (tc.want.class != nil) {
				t.Errorf("class = %v %v, want %v", got.ClassID, got.ClassName, tc.want.class)
			}
			for _, g := range got.Guardians {
				if (g.Phone != nil) != tc.want.phones || g.Name == "" || g.Relationship == "" {
					t.Errorf("guardian %v: phone present %v, want %v", g, g.Phone != nil, tc.want.phones)
				}
			}
			j := jsonOf(t, got)
			if strings.Contains(j, phoneSentinel) != (tc.want.phones && (tc.child == a.k1 || tc.child == a.k2)) {
				t.Errorf("phone on the wire: %v, want %v", strings.Contains(j, phoneSentinel), tc.want.phones)
			}
		})
	}
	t.Run("invisible and missing read the same", func(t *testing.T) {
		ctx, granted := a.as(store.RoleVoluntario), plus(store.RoleVoluntario, scopes.ChildrenRead)
		_, hidden := invokeWith(e, ctx, capapi.CapRosterChild, map[string]any{"id": a.k2}, granted)
		_, missing := invokeWith(e, ctx, capapi.CapRosterChild, map[string]any{"id": uuid.New()}, granted)
		_, foreign := invokeWith(e, ctx, capapi.CapRosterChild, map[string]any{"id": e.b.k1}, granted)
		if hidden == nil || hidden != missing || foreign != missing {
			t.Fatalf("hidden %#v, foreign %#v, missing %#v: must be identical", hidden, foreign, missing)
		}
	})
}

func TestAttendanceSummaryRangesAndFilters(t *testing.T) {
	t.Parallel()
	// 01:30 UTC two days after the fixture's day is still the evening before in São Paulo:
	// "today" is day+1 there, which the defaults must use.
	var day capability.Date
	clock := func() time.Time { return day.Time().AddDate(0, 0, 2).Add(90 * time.Minute) }
	e := newEnv(t, logic.WithClock(func() time.Time { return clock() }))
	a := e.a
	day = a.day
	today := day.AddDays(1)
	ds := func(d capability.Date) string { return d.String() }
	admin, vol := a.as(store.RoleAdmin), a.as(store.RoleVoluntario)

	t.Run("defaults: last 30 days to today in Sao Paulo", func(t *testing.T) {
		got := mustInvoke[capapi.AttendanceSummaryOutput](e, admin, capapi.CapAttendanceSummary, map[string]any{})
		want := &capapi.AttendanceSummaryOutput{From: today.AddDays(-30), To: today, Children: 3, TotalCheckins: 3,
			Today: today, TimeZone: "America/Sao_Paulo",
			Days: []capapi.AttendanceSummaryOutputDaysItem{
				{Date: day, ClassName: "Grandes", Checkins: 1},
				{Date: day, ClassName: "Pequenos", Checkins: 2},
			},
			Classes: []capapi.AttendanceSummaryOutputClassesItem{
				{ClassID: a.c2, ClassName: "Grandes", Children: 1, Checkins: 1},
				{ClassID: a.c1, ClassName: "Pequenos", Children: 2, Checkins: 2},
			}}
		if d := cmp.Diff(want, got, cmp.Comparer(func(x, y capability.Date) bool { return x == y })); d != "" {
			t.Errorf("(-want +got)\n%s", d)
		}
	})
	t.Run("only to: from is 30 days before", func(t *testing.T) {
		got := mustInvoke[capapi.AttendanceSummaryOutput](e, admin, capapi.CapAttendanceSummary, map[string]any{"to": ds(day.AddDays(-1))})
		if got.From != day.AddDays(-31) || got.TotalCheckins != 0 || len(got.Days) != 0 || got.Children != 0 ||
			got.NearestDay == nil || *got.NearestDay != day {
			t.Errorf("got %v; want an empty range naming the nearest day with data, %s", got, day)
		}
	})
	t.Run("different children, not check-ins; a volunteer is told the answer covers their classes", func(t *testing.T) {
		// k1 came a second Sunday: 4 check-ins, 3 children (a world of its own, so the
		// other cases keep theirs).
		e := newEnv(t, logic.WithClock(func() time.Time { return clock() }))
		a := e.a
		admin, vol := a.as(store.RoleAdmin), a.as(store.RoleVoluntario)
		e.exec(`INSERT INTO service_days (church_id, service_date) VALUES ($1, $2) ON CONFLICT DO NOTHING`, a.id, day.AddDays(-7).Time())
		e.exec(`INSERT INTO checkins (church_id, child_id, class_id, service_date, checked_in_by, pickup_code_salt, pickup_code_hash)
			SELECT church_id, child_id, class_id, $2, checked_in_by, pickup_code_salt, pickup_code_hash FROM checkins WHERE id = $1`, a.ck1, day.AddDays(-7).Time())
		got := mustInvoke[capapi.AttendanceSummaryOutput](e, admin, capapi.CapAttendanceSummary, map[string]any{})
		if got.Children != 3 || got.TotalCheckins != 4 || got.Covers != nil {
			t.Errorf("admin: %d children, %d check-ins, covers %v; want 3, 4, nil", got.Children, got.TotalCheckins, got.Covers)
		}
		got = mustInvoke[capapi.AttendanceSummaryOutput](e, vol, capapi.CapAttendanceSummary, map[string]any{})
		if got.Children != 2 || got.TotalCheckins != 3 || got.Covers == nil || *got.Covers != "your classes: Pequenos" {
			t.Errorf("volunteer: %d children, %d check-ins, covers %v; want 2, 3, your classes: Pequenos", got.Children, got.TotalCheckins, got.Covers)
		}
	})
	t.Run("volunteer: own classes only", func(t *testing.T) {
		got := mustInvoke[capapi.AttendanceSummaryOutput](e, vol, capapi.CapAttendanceSummary, map[string]any{})
		if got.TotalCheckins != 2 || len(got.Days) != 1 || got.Days[0].ClassName != "Pequenos" || len(got.Classes) != 1 || got.Classes[0].ClassID != a.c1 {
			t.Errorf("got %v", got)
		}
	})
	t.Run("class filter", func(t *testing.T) {
		got := mustInvoke[capapi.AttendanceSummaryOutput](e, admin, capapi.CapAttendanceSummary, map[string]any{"class_id": a.c2})
		if got.TotalCheckins != 1 || len(got.Days) != 1 || got.Days[0].ClassName != "Grandes" || len(got.Classes) != 1 || got.Classes[0].ClassID != a.c2 {
			t.Errorf("got %v", got)
		}
	})
	t.Run("other church sees its own", func(t *testing.T) {
		got := mustInvoke[capapi.AttendanceSummaryOutput](e, e.b.as(store.RoleAdmin), capapi.CapAttendanceSummary, map[string]any{})
		for _, cl := range got.Classes {
			if cl.ClassID == a.c1 || cl.ClassID == a.c2 {
				t.Errorf("church B sees church A's class: %v", cl)
			}
		}
	})
	t.Run("366 days inclusive is the limit", func(t *testing.T) {
		got := mustInvoke[capapi.AttendanceSummaryOutput](e, admin, capapi.CapAttendanceSummary,
			map[string]any{"from": ds(today.AddDays(-365)), "to": ds(today)})
		if got.TotalCheckins != 3 {
			t.Errorf("got %v", got)
		}
	})
	for _, tc := range []struct {
		name  string
		ctxOf string
		args  map[string]any
		field string
	}{
		{"from after to", store.RoleAdmin, map[string]any{"from": ds(day), "to": ds(day.AddDays(-1))}, "from"},
		{"from after default to", store.RoleAdmin, map[string]any{"from": ds(today.AddDays(1))}, "from"},
		{"367 days", store.RoleAdmin, map[string]any{"from": ds(today.AddDays(-366)), "to": ds(today)}, "from"},
		{"years", store.RoleAdmin, map[string]any{"from": "2001-01-01"}, "from"},
		{"volunteer: class not theirs", store.RoleVoluntario, map[string]any{"class_id": a.c2}, "class_id"},
		{"other church's class", store.RoleAdmin, map[string]any{"class_id": e.b.c1}, "class_id"},
		{"unknown class", store.RoleAdmin, map[string]any{"class_id": uuid.New()}, "class_id"},
		{"not a date", store.RoleAdmin, map[string]any{"from": "2026-02-30"}, "from"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := e.invoke(a.as(tc.ctxOf), capapi.CapAttendanceSummary, tc.args)
			inv := wantInvalid(t, err, tc.field)
			if out != nil || inv.Reason == "" {
				t.Fatalf("out %v, reason %q", out, inv.Reason)
			}
		})
	}
	t.Run("ten years: the message says how long the range is and what to ask instead", func(t *testing.T) {
		from, to := today.AddDays(-3652), today
		_, err := e.invoke(admin, capapi.CapAttendanceSummary, map[string]any{"from": ds(from), "to": ds(to)})
		inv := wantInvalid(t, err, "from")
		want := fmt.Sprintf("the range from %s to %s spans 3653 days; at most 366 per read, so split it or move from to %s or later", from, to, to.AddDays(-365))
		if inv.Reason != want {
			t.Errorf("reason %q\nwant   %q", inv.Reason, want)
		}
	})
}

func TestCheckinsByDateRowFiltered(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	for _, tc := range []struct {
		name string
		ctx  string
		b    bool
		want []uuid.UUID // the children checked in, by class name (Grandes, Pequenos), then in check-in order
	}{
		{"admin", store.RoleAdmin, false, []uuid.UUID{a.k2, a.k1, a.k3}},
		{"cadastro", store.RoleCadastro, false, []uuid.UUID{a.k2, a.k1, a.k3}},
		{"volunteer: own class", store.RoleVoluntario, false, []uuid.UUID{a.k1, a.k3}},
		{"guardian: own children", store.RoleResponsavel, false, []uuid.UUID{a.k2, a.k1}},
		{"other church", store.RoleAdmin, true, []uuid.UUID{e.b.k2, e.b.k1, e.b.k3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := a
			if tc.b {
				c = e.b
			}
			got := mustInvoke[capapi.CheckinsByDateOutput](e, c.as(tc.ctx), capapi.CapCheckinsByDate, map[string]any{"date": a.day.String()})
			rs, _ := scopes.RoleScopes(tc.ctx)
			named := rs.Has(scopes.ChildrenRead) // VOLUNTARIO and RESPONSAVEL see short labels only
			var want, handles []string
			for _, id := range tc.want {
				want = append(want, c.handles[id])
			}
			rows, classes := checkinsOf(got)
			if got.Total != int64(len(rows)) {
				t.Errorf("total %d, %d check-ins listed", got.Total, len(rows))
			}
			for i, ck := range rows {
				handles = append(handles, ck.ChildHandle)
				if short := strings.HasSuffix(ck.ChildLabel, "."); short == named || ck.CheckedOutAt != nil || classes[i] == "" {
					t.Errorf("check-in %v: want a full name %v (children:read), else a short label; no check-out", ck, named)
				}
			}
			if d := cmp.Diff(want, handles); d != "" {
				t.Errorf("children checked in, in check-in order, by handle (-want +got)\n%s", d)
			}
		})
	}
	t.Run("names only with children:read", func(t *testing.T) {
		out, err := invokeWith(e, a.as(store.RoleAdmin), capapi.CapCheckinsByDate,
			map[string]any{"date": a.day.String()}, capability.NewScopeSet("checkins:read"))
		if err != nil {
			t.Fatal(err)
		}
		got := out.(*capapi.CheckinsByDateOutput)
		if rows, _ := checkinsOf(got); len(rows) != 3 || slices.ContainsFunc(rows, func(c capapi.CheckinsByDateOutputClassesItemCheckinsItem) bool {
			return !strings.HasSuffix(c.ChildLabel, ".")
		}) {
			t.Errorf("got %v, want short labels only", got)
		}
		if body := jsonOf(t, got); strings.Contains(body, a.childName) || strings.Contains(body, strings.Fields(a.childName)[len(strings.Fields(a.childName))-1]) {
			t.Errorf("a child's full name went out without children:read: %s", body)
		}
	})
	t.Run("empty day", func(t *testing.T) {
		got := mustInvoke[capapi.CheckinsByDateOutput](e, a.as(store.RoleAdmin), capapi.CapCheckinsByDate, map[string]any{"date": a.day.AddDays(-1).String()})
		if got.Classes == nil || len(got.Classes) != 0 || got.Total != 0 || got.Date != a.day.AddDays(-1) {
			t.Errorf("got %v", got)
		}
	})
}
