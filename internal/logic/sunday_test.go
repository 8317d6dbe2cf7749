package logic_test

// The volunteer's Sunday (issue 20): the class list, check-in and check-out by handle, label or
// first name, who may take a child home. The tests add to the fixture (fixture_test.go) what a
// Sunday needs: a class of the volunteer's with namesakes, guardians, restrictions.

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/logic"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// exec runs one statement in the maintenance context (row-level security does not apply).
func (e *env) exec(sql string, args ...any) {
	e.t.Helper()
	err := e.st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, sql, args...)
		return err
	})
	if err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
}

// addClass adds a class (ages minAge to minAge+1) to church c, assigned to its volunteer when
// volunteer is set.
func (e *env) addClass(c church, name string, minAge int, volunteer bool) uuid.UUID {
	e.t.Helper()
	id := uuid.New()
	e.exec(`INSERT INTO classes (id, church_id, name, min_age, max_age) VALUES ($1, $2, $3, $4, $4 + 1)`, id, c.id, name, minAge)
	if volunteer {
		e.exec(`INSERT INTO volunteer_assignments (user_id, class_id, church_id) VALUES ($1, $2, $3)`, c.users[store.RoleVoluntario], id, c.id)
	}
	return id
}

// addChild adds a three-year-old to church c in class, with the handle given (a valid one) or
// else the one the database draws; it returns the id and the handle.
func (e *env) addChild(c church, name string, class uuid.UUID, handle string) (uuid.UUID, string) {
	e.t.Helper()
	id := uuid.New()
	born := todaySP().Time().AddDate(-3, 0, -20)
	if handle == "" {
		e.exec(`INSERT INTO children (id, church_id, name, birth_date, class_id) VALUES ($1, $2, $3, $4, $5)`, id, c.id, name, born, class)
	} else {
		e.exec(`INSERT INTO children (id, church_id, name, birth_date, class_id, handle) VALUES ($1, $2, $3, $4, $5, $6)`, id, c.id, name, born, class, handle)
	}
	var h string
	err := e.st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT handle FROM children WHERE id = $1`, id).Scan(&h)
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return id, h
}

// addGuardian adds a guardian (no account) of child to church c.
func (e *env) addGuardian(c church, name, phone string, child uuid.UUID, relationship string) uuid.UUID {
	e.t.Helper()
	id := uuid.New()
	e.exec(`INSERT INTO guardians (id, church_id, name, phone) VALUES ($1, $2, $3, $4)`, id, c.id, name, phone)
	e.exec(`INSERT INTO guardian_children (guardian_id, child_id, church_id, relationship) VALUES ($1, $2, $3, $4)`, id, child, c.id, relationship)
	return id
}

// neverShown fails the test, at its end, when one of fragments reached a log line or an error
// message (Error(), not the caller-only Detail): checkCanary for the test's own names.
func (e *env) neverShown(fragments ...string) {
	e.t.Cleanup(func() {
		logs := e.logs.String()
		e.mu.Lock()
		defer e.mu.Unlock()
		for _, f := range fragments {
			if strings.Contains(logs, f) {
				e.t.Errorf("%q appears in the logs:\n%s", f, grepLines(logs, f))
			}
			for _, m := range e.errMsg {
				if strings.Contains(m, f) {
					e.t.Errorf("%q appears in an error message: %s", f, m)
				}
			}
		}
	})
}

// lastAudit is the newest audit entry.
func (e *env) lastAudit() auditRow {
	e.t.Helper()
	rows := e.audit()
	if len(rows) == 0 {
		e.t.Fatal("no audit entry")
	}
	return rows[len(rows)-1]
}

// classOf returns the class named name of a class list, failing the test without it.
func classOf(t *testing.T, out *capapi.ClassListOutput, name string) capapi.ClassListOutputClassesItem {
	t.Helper()
	for _, cl := range out.Classes {
		if cl.ClassName == name {
			return cl
		}
	}
	t.Fatalf("class %q not in the list %s", name, jsonOf(t, out))
	return capapi.ClassListOutputClassesItem{}
}

// labelsOf returns the labels of a class list entry, in order.
func labelsOf(cl capapi.ClassListOutputClassesItem) []string {
	var out []string
	for _, c := range cl.Children {
		out = append(out, c.Label)
	}
	return out
}

// labelsByHandle maps handle → label over a whole class list.
func labelsByHandle(out *capapi.ClassListOutput) map[string]string {
	m := map[string]string{}
	for _, cl := range out.Classes {
		for _, c := range cl.Children {
			m[c.Handle] = c.Label
		}
	}
	return m
}

func classNames(out *capapi.ClassListOutput) []string {
	var names []string
	for _, cl := range out.Classes {
		names = append(names, cl.ClassName)
	}
	return names
}

// childOf returns the entry of handle in cl.
func childOf(t *testing.T, cl capapi.ClassListOutputClassesItem, handle string) capapi.ClassListOutputClassesItemChildrenItem {
	t.Helper()
	for _, c := range cl.Children {
		if c.Handle == handle {
			return c
		}
	}
	t.Fatalf("child %s not in class %s (%v)", handle, cl.ClassName, labelsOf(cl))
	return capapi.ClassListOutputClassesItemChildrenItem{}
}

// sundayClass is the volunteer's second class of TestClassList, with namesakes:
//
//	Pequenos (c1, fixture): Ana Costa, Criança Três (k3), Zzcanary Sentinela (k1)
//	Maternal (new):         Ana Silva (picked up today by her mother Marta Rocha), Ana Souza
//	                        (checked in today), Bruno Lima (not here)
//	Grandes (c2, fixture):  Criança Dois (k2, checked in today), not the volunteer's
type sundayClass struct {
	maternal                  uuid.UUID
	silva, souza, bruno, anaC uuid.UUID
	hSilva, hSouza, hBruno    string
	hAnaC                     string
}

func newSundayClass(e *env) sundayClass {
	a := e.a
	var s sundayClass
	s.maternal = e.addClass(a, "Maternal", 2, true)
	s.silva, s.hSilva = e.addChild(a, "Ana Silva", s.maternal, "")
	s.souza, s.hSouza = e.addChild(a, "Ana Souza", s.maternal, "")
	s.bruno, s.hBruno = e.addChild(a, "Bruno Lima", s.maternal, "")
	s.anaC, s.hAnaC = e.addChild(a, "Ana Costa", a.c1, "")
	e.addGuardian(a, "Marta Rocha", "+55 11 97777-1234", s.silva, "mother")
	vol := a.as(store.RoleVoluntario)
	mustInvoke[capapi.CheckinRegisterOutput](e, vol, capapi.CapCheckinRegister, map[string]any{"child_id": s.souza})
	ck := mustInvoke[capapi.CheckinRegisterOutput](e, vol, capapi.CapCheckinRegister, map[string]any{"child_id": s.silva})
	mustInvoke[capapi.CheckoutRegisterOutput](e, vol, capapi.CapCheckoutRegister,
		map[string]any{"checkin_id": ck.CheckinID, "pickup_code": *ck.PickupCode, "picked_up_by": "Marta Rocha"})
	mustInvoke[capapi.CheckinRegisterOutput](e, a.as(store.RoleAdmin), capapi.CapCheckinRegister, map[string]any{"child_id": a.k2})
	return s
}

// TestClassList: what each role reads in the class list, and how its filters behave.
func TestClassList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.neverShown("Souza", "Silva", "Costa", "Rocha", "97777")
	a := e.a
	s := newSundayClass(e)
	vol := a.as(store.RoleVoluntario)
	today := todaySP()
	list := func(ctx context.Context, args map[string]any) *capapi.ClassListOutput {
		t.Helper()
		return mustInvoke[capapi.ClassListOutput](e, ctx, capapi.CapClassList, args)
	}
	full := list(vol, map[string]any{})

	t.Run("a volunteer sees only their classes, by short label", func(t *testing.T) {
		if got := classNames(full); !slices.Equal(got, []string{"Pequenos", "Maternal"}) {
			t.Fatalf("classes %v, want the volunteer's Pequenos and Maternal, youngest first", got)
		}
		if got := labelsOf(classOf(t, full, "Pequenos")); !slices.Equal(got, []string{"Ana C.", "Criança T.", "Zzcanary S."}) {
			t.Errorf("Pequenos labels %v", got)
		}
		wire := jsonOf(t, full)
		var birth time.Time
		err := e.st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT birth_date FROM children WHERE id = $1`, a.k1).Scan(&birth)
		})
		if err != nil {
			t.Fatal(err)
		}
		// Full names, birth dates, phones: none, whatever the field.
		for _, f := range []string{childSentinel, "Sentinela", "Souza", "Silva", "Costa", "Lima", "Três", "Criança Dois",
			birth.Format("2006-01-02"), todaySP().Time().AddDate(-3, 0, -20).Format("2006-01-02"), "90000", "97777", "birth", "phone"} {
			if strings.Contains(wire, f) {
				t.Errorf("the volunteer's class list holds %q: %s", f, wire)
			}
		}
		for _, id := range []uuid.UUID{a.k2, a.c2} {
			if strings.Contains(wire, id.String()) {
				t.Errorf("the volunteer's class list holds %s of another class", id)
			}
		}
	})
	t.Run("namesakes in one class get distinct labels", func(t *testing.T) {
		m := classOf(t, full, "Maternal")
		if got := labelsOf(m); !slices.Equal(got, []string{"Ana Si.", "Ana So.", "Bruno L."}) {
			t.Errorf("Maternal labels %v, want [Ana Si. Ana So. Bruno L.]", got)
		}
		if childOf(t, m, s.hSilva).Label == childOf(t, m, s.hSouza).Label {
			t.Error("two children share a label")
		}
		// Ana Costa has no namesake in Pequenos: the other class's Anas do not lengthen hers.
		if got := childOf(t, classOf(t, full, "Pequenos"), s.hAnaC).Label; got != "Ana C." {
			t.Errorf("Ana Costa's label %q", got)
		}
	})
	t.Run("headcount, checked in, enrolled", func(t *testing.T) {
		for _, tc := range []struct {
			class                          string
			headcount, checkedIn, enrolled int64
		}{
			{"Maternal", 1, 2, 3}, // Souza here, Silva picked up, Bruno not here
			{"Pequenos", 0, 0, 3}, // the fixture's check-ins are a week ago
		} {
			cl := classOf(t, full, tc.class)
			if cl.Headcount != tc.headcount || cl.CheckedIn != tc.checkedIn || cl.Enrolled != tc.enrolled {
				t.Errorf("%s: headcount %d, checked in %d, enrolled %d; want %d, %d, %d",
					tc.class, cl.Headcount, cl.CheckedIn, cl.Enrolled, tc.headcount, tc.checkedIn, tc.enrolled)
			}
		}
		m := classOf(t, full, "Maternal")
		for handle, want := range map[string]string{s.hSouza: "checked_in", s.hSilva: "picked_up", s.hBruno: "not_here"} {
			c := childOf(t, m, handle)
			if c.Status != want || (want == "not_here") != (c.CheckinID == nil) || (want == "picked_up") != (c.PickedUpAt != nil) {
				t.Errorf("%s: %+v, want status %s", handle, c, want)
			}
		}
		// The fixture's day: k1 and k3 checked in to Pequenos, not picked up.
		past := classOf(t, list(vol, map[string]any{"date": a.day.String()}), "Pequenos")
		if past.Headcount != 2 || past.CheckedIn != 2 || past.Enrolled != 3 {
			t.Errorf("Pequenos on %s: %+v", a.day, past)
		}
	})
	t.Run("picked up: by whom with pickups:read, released by whom", func(t *testing.T) {
		silva := childOf(t, classOf(t, full, "Maternal"), s.hSilva)
		if silva.PickedUpBy == nil || *silva.PickedUpBy != "Marta Rocha" || silva.ReleasedBy == nil || *silva.ReleasedBy != "Vol" {
			t.Errorf("picked-up row %s", jsonOf(t, silva))
		}
		for _, handle := range []string{s.hSouza, s.hBruno} {
			if c := childOf(t, classOf(t, full, "Maternal"), handle); c.PickedUpBy != nil || c.ReleasedBy != nil || c.PickedUpAt != nil {
				t.Errorf("a child not picked up has pick-up fields: %s", jsonOf(t, c))
			}
		}
		// Without pickups:read the adult is left out; who released the child stays.
		out, err := invokeWith(e, vol, capapi.CapClassList, map[string]any{}, without(mustScopes(store.RoleVoluntario), "pickups:read"))
		if err != nil {
			t.Fatal(err)
		}
		c := childOf(t, classOf(t, out.(*capapi.ClassListOutput), "Maternal"), s.hSilva)
		if c.PickedUpBy != nil || c.ReleasedBy == nil || *c.ReleasedBy != "Vol" || c.Status != "picked_up" {
			t.Errorf("without pickups:read: %s", jsonOf(t, c))
		}
		if strings.Contains(jsonOf(t, out), "Marta") {
			t.Errorf("without pickups:read the adult's name is shown: %s", jsonOf(t, out))
		}
	})
	t.Run("ADMIN sees every class, by full name", func(t *testing.T) {
		out := list(a.as(store.RoleAdmin), map[string]any{})
		if got := classNames(out); !slices.Equal(got, []string{"Pequenos", "Maternal", "Grandes"}) {
			t.Fatalf("classes %v", got)
		}
		if got := labelsOf(classOf(t, out, "Maternal")); !slices.Equal(got, []string{"Ana Silva", "Ana Souza", "Bruno Lima"}) {
			t.Errorf("Maternal labels %v", got)
		}
		if got := labelsOf(classOf(t, out, "Pequenos")); !slices.Equal(got, []string{"Ana Costa", "Criança Três", childSentinel}) {
			t.Errorf("Pequenos labels %v", got)
		}
		if g := classOf(t, out, "Grandes"); g.Headcount != 1 || g.CheckedIn != 1 || g.Enrolled != 1 {
			t.Errorf("Grandes %+v", g)
		}
	})
	t.Run("a guardian sees their own children only", func(t *testing.T) {
		out := list(a.as(store.RoleResponsavel), map[string]any{})
		got := labelsByHandle(out)
		if len(got) != 2 || got[a.k1Handle] != "Zzcanary S." {
			t.Errorf("guardian's class list %s", jsonOf(t, out))
		}
	})
	t.Run("the child filter keeps every child of the first name, labels as in the whole list", func(t *testing.T) {
		want := labelsByHandle(full)
		for _, name := range []string{"Ana", "ana", "ÁNA", "  Ana "} {
			out := list(vol, map[string]any{"child": name})
			if got := classNames(out); !slices.Equal(got, []string{"Pequenos", "Maternal"}) {
				t.Fatalf("%q: classes %v", name, got)
			}
			if got := labelsOf(classOf(t, out, "Maternal")); !slices.Equal(got, []string{"Ana Si.", "Ana So."}) {
				t.Errorf("%q: Maternal %v", name, got)
			}
			if got := labelsOf(classOf(t, out, "Pequenos")); !slices.Equal(got, []string{"Ana C."}) {
				t.Errorf("%q: Pequenos %v", name, got)
			}
			for h, l := range labelsByHandle(out) {
				if want[h] != l {
					t.Errorf("%q: %s is %q, %q in the whole list", name, h, l, want[h])
				}
			}
			// The counts are the class's, not the filter's.
			for _, cl := range out.Classes {
				w := classOf(t, full, cl.ClassName)
				if cl.Headcount != w.Headcount || cl.CheckedIn != w.CheckedIn || cl.Enrolled != w.Enrolled {
					t.Errorf("%q: %s counts %d/%d/%d, whole list %d/%d/%d", name, cl.ClassName,
						cl.Headcount, cl.CheckedIn, cl.Enrolled, w.Headcount, w.CheckedIn, w.Enrolled)
				}
			}
		}
		// A name nobody has: no class.
		if out := list(vol, map[string]any{"child": "Zuleica"}); len(out.Classes) != 0 {
			t.Errorf("unknown first name: %s", jsonOf(t, out))
		}
	})
	t.Run("the class filter", func(t *testing.T) {
		for _, name := range []string{"maternal", "MATERNAL", s.maternal.String()} {
			if got := classNames(list(vol, map[string]any{"class": name})); !slices.Equal(got, []string{"Maternal"}) {
				t.Errorf("class %q: %v", name, got)
			}
		}
		// Another class than the volunteer's: an empty list, not an error.
		if got := list(vol, map[string]any{"class": "Grandes"}); len(got.Classes) != 0 {
			t.Errorf("the volunteer lists Grandes: %s", jsonOf(t, got))
		}
	})
	t.Run("date defaults to today", func(t *testing.T) {
		if full.Date != today || full.Today != today || full.TimeZone != "America/Sao_Paulo" {
			t.Errorf("date %s, today %s, zone %s; want %s in America/Sao_Paulo", full.Date, full.Today, full.TimeZone, today)
		}
	})
	t.Run("audited with the children listed", func(t *testing.T) {
		list(vol, map[string]any{"child": "Bruno"})
		r := e.lastAudit()
		if r.Capability != capapi.CapClassList || r.Outcome != "allowed" || !slices.Equal(r.Targets, []uuid.UUID{s.bruno}) {
			t.Errorf("audit %+v", r)
		}
	})
}

// TestClassListHandleFilterLabelsAsTheWholeList: the child filter given a handle keeps that
// child with the label the whole list gives it, the label a check-in by label resolves
// (resolve.go labels each class's whole list).
func TestClassListHandleFilterLabelsAsTheWholeList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	s := newSundayClass(e)
	vol := a.as(store.RoleVoluntario)
	out := mustInvoke[capapi.ClassListOutput](e, vol, capapi.CapClassList, map[string]any{"child": strings.ToLower(s.hSouza)})
	// A handle keeps its child with the others of the same first name (spec: class_list.child),
	// so the labels are the whole list's.
	m := classOf(t, out, "Maternal")
	var souza *capapi.ClassListOutputClassesItemChildrenItem
	for i := range m.Children {
		if m.Children[i].Handle == s.hSouza {
			souza = &m.Children[i]
		}
		if !strings.HasPrefix(m.Children[i].Label, "Ana ") {
			t.Errorf("handle filter kept %q, not an Ana", m.Children[i].Label)
		}
	}
	if souza == nil {
		t.Fatalf("handle filter: %v, without the handle's child", labelsOf(m))
	}
	if got := souza.Label; got != "Ana So." {
		t.Errorf("by handle, Ana Souza is %q; the whole list (and check-in by label) says \"Ana So.\"", got)
	}
	// The label read from the filtered list must name the child in a check-out.
	_, err := e.invoke(vol, capapi.CapCheckoutRegister, map[string]any{"child": souza.Label, "pickup_code": "000000", "picked_up_by": "Marta Rocha"})
	if inv, ok := errs.AsInvalid(err); ok && inv.Field == "child" {
		t.Errorf("the label %q from the handle-filtered list names no child: %v", souza.Label, err)
	}
}

// TestClassListEnrolledCountsTheClasssChildren: a child enrolled in one class and checked in
// to another that day is counted as enrolled in their own class (spec: enrolled, "Children
// enrolled in the class") and listed in the class they were checked in to.
func TestClassListEnrolledCountsTheClasssChildren(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	admin := a.as(store.RoleAdmin)
	// k2 (enrolled in Grandes, alone there) goes to Pequenos today.
	mustInvoke[capapi.CheckinRegisterOutput](e, admin, capapi.CapCheckinRegister, map[string]any{"child_id": a.k2, "class_id": a.c1})
	out := mustInvoke[capapi.ClassListOutput](e, admin, capapi.CapClassList, map[string]any{})
	p := classOf(t, out, "Pequenos")
	if p.Enrolled != 2 || p.CheckedIn != 1 || p.Headcount != 1 || len(p.Children) != 3 {
		t.Errorf("Pequenos %s, want enrolled 2 (k1, k3), checked in 1 (k2), 3 children", jsonOf(t, p))
	}
	g := classOf(t, out, "Grandes")
	if g.Enrolled != 1 || g.CheckedIn != 0 || g.Headcount != 0 {
		t.Errorf("Grandes %s, want enrolled 1 (k2), checked in 0", jsonOf(t, g))
	}
}

// TestClassListListsEveryVisibleClass: without class, every class the caller may see has its
// entry (spec: "One entry per class you may see (all when class is absent)"), a class with no
// child yet included, with zero counts.
func TestClassListListsEveryVisibleClass(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	e.addClass(a, "Berçário", 0, true) // no child yet
	out := mustInvoke[capapi.ClassListOutput](e, a.as(store.RoleVoluntario), capapi.CapClassList, map[string]any{})
	if got := classNames(out); !slices.Equal(got, []string{"Berçário", "Pequenos"}) {
		t.Fatalf("classes %v, want the volunteer's Berçário and Pequenos", got)
	}
	if b := classOf(t, out, "Berçário"); b.Headcount != 0 || b.CheckedIn != 0 || b.Enrolled != 0 || len(b.Children) != 0 {
		t.Errorf("Berçário %s", jsonOf(t, b))
	}
}

// TestClassListDefaultDateIsTheChurchsToday: without date, the list is of the church's today in
// its own time zone, not the server's or UTC's.
func TestClassListDefaultDateIsTheChurchsToday(t *testing.T) {
	t.Parallel()
	// 01:30 UTC on June 8th is still June 7th in São Paulo, already 10:30 of the 8th in Tokyo.
	now := time.Date(2026, 6, 8, 1, 30, 0, 0, time.UTC)
	e := newEnv(t, logic.WithClock(func() time.Time { return now }))
	a, b := e.a, e.b
	e.exec(`UPDATE churches SET time_zone = 'Asia/Tokyo' WHERE id = $1`, b.id)
	sunday, monday := capability.DateOf(time.Date(2026, 6, 7, 0, 0, 0, 0, time.UTC)), capability.DateOf(now)
	salt := make([]byte, 16)
	hash := store.HashPickupCode(salt, fixtureCode)
	for _, c := range []church{a, b} {
		e.exec(`INSERT INTO service_days (church_id, service_date) VALUES ($1, $2)`, c.id, sunday.Time())
		e.exec(`INSERT INTO checkins (church_id, child_id, class_id, service_date, checked_in_by, pickup_code_salt, pickup_code_hash, checked_in_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, c.id, c.k1, c.c1, sunday.Time(), c.users[store.RoleCadastro], salt, hash, now.Add(-2*time.Hour))
	}
	for _, tc := range []struct {
		c      church
		day    capability.Date
		zone   string
		status string
	}{
		{a, sunday, "America/Sao_Paulo", "checked_in"},
		{b, monday, "Asia/Tokyo", "not_here"},
	} {
		out := mustInvoke[capapi.ClassListOutput](e, tc.c.as(store.RoleVoluntario), capapi.CapClassList, map[string]any{})
		if out.Date != tc.day || out.Today != tc.day || out.TimeZone != tc.zone {
			t.Errorf("%s: date %s, today %s, zone %s; want %s, %s", tc.zone, out.Date, out.Today, out.TimeZone, tc.day, tc.zone)
		}
		if got := childOf(t, classOf(t, out, "Pequenos"), tc.c.k1Handle).Status; got != tc.status {
			t.Errorf("%s: k1 is %s, want %s", tc.zone, got, tc.status)
		}
		// An explicit date still wins.
		other := mustInvoke[capapi.ClassListOutput](e, tc.c.as(store.RoleVoluntario), capapi.CapClassList, map[string]any{"date": sunday.String()})
		if other.Date != sunday || other.Today != tc.day {
			t.Errorf("%s: explicit date: date %s, today %s", tc.zone, other.Date, other.Today)
		}
	}
}

// TestCheckinRegisterByName: a child is checked in by first name and class, label or handle, as
// a volunteer reads them off the class list; ambiguity and unknown classes are refused with what
// the caller needs to try again, shown to them only.
func TestCheckinRegisterByName(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.neverShown("Souza", "Costa", "Lima")
	a := e.a
	maternal := e.addClass(a, "Maternal", 2, true)
	souza, hSouza := e.addChild(a, "Ana Souza", maternal, "")
	costa, hCosta := e.addChild(a, "Ana Costa", a.c1, "")
	bruno, hBruno := e.addChild(a, "Bruno Lima", maternal, "K0Q1MX")
	vol := a.as(store.RoleVoluntario)
	checkins := func() int { return e.count(`SELECT count(*) FROM checkins`) }

	t.Run("an ambiguous first name is refused with the candidates, for the caller only", func(t *testing.T) {
		before := checkins()
		_, err := e.invoke(vol, capapi.CapCheckinRegister, map[string]any{"child": "Ana"})
		inv := wantInvalid(t, err, "child")
		for _, want := range []string{"Ana S. (" + hSouza + ", Maternal)", "Ana C. (" + hCosta + ", Pequenos)"} {
			if !strings.Contains(inv.Detail, want) {
				t.Errorf("detail %q lacks the candidate %q", inv.Detail, want)
			}
		}
		if !strings.Contains(inv.Reason, "2 children") {
			t.Errorf("reason %q", inv.Reason)
		}
		for _, f := range []string{"Ana S.", "Ana C.", hSouza, hCosta, "Maternal", "Pequenos"} {
			if strings.Contains(err.Error(), f) {
				t.Errorf("Error() %q holds the candidate part %q", err.Error(), f)
			}
		}
		if checkins() != before {
			t.Error("the refusal checked a child in")
		}
	})
	t.Run("first name and class, one call", func(t *testing.T) {
		got := mustInvoke[capapi.CheckinRegisterOutput](e, vol, capapi.CapCheckinRegister, map[string]any{"child": "Ana", "class": "Maternal"})
		if got.ChildID != souza || got.ClassID != maternal || got.ClassName != "Maternal" || got.ChildLabel != "Ana S." ||
			got.ChildHandle != hSouza || got.AlreadyCheckedIn || got.PickupCode == nil {
			t.Fatalf("got %s", jsonOf(t, got))
		}
		again := mustInvoke[capapi.CheckinRegisterOutput](e, vol, capapi.CapCheckinRegister, map[string]any{"child": "ána", "class": "MATERNAL"})
		if again.CheckinID != got.CheckinID || !again.AlreadyCheckedIn || again.PickupCode != nil {
			t.Fatalf("retry %s", jsonOf(t, again))
		}
	})
	t.Run("by label", func(t *testing.T) {
		got := mustInvoke[capapi.CheckinRegisterOutput](e, vol, capapi.CapCheckinRegister, map[string]any{"child": "ana c"})
		if got.ChildID != costa || got.ClassID != a.c1 || got.ChildLabel != "Ana C." {
			t.Fatalf("got %s", jsonOf(t, got))
		}
	})
	t.Run("a handle in any case, O for 0 and I for 1", func(t *testing.T) {
		for _, h := range []string{"koqimx", "K-0Q1-MX", " k0q1mx "} {
			got := mustInvoke[capapi.CheckinRegisterOutput](e, vol, capapi.CapCheckinRegister, map[string]any{"child": h})
			if got.ChildID != bruno || got.ChildHandle != hBruno || got.ClassName != "Maternal" {
				t.Fatalf("%q: got %s", h, jsonOf(t, got))
			}
		}
	})
	t.Run("a full name only with children:read", func(t *testing.T) {
		_, err := e.invoke(vol, capapi.CapCheckinRegister, map[string]any{"child": "Bruno Lima"})
		wantInvalid(t, err, "child")
		got := mustInvoke[capapi.CheckinRegisterOutput](e, a.as(store.RoleAdmin), capapi.CapCheckinRegister, map[string]any{"child": "bruno lima"})
		if got.ChildID != bruno || got.ChildLabel != "Bruno Lima" {
			t.Fatalf("ADMIN by full name: %s", jsonOf(t, got))
		}
	})
	t.Run("a child of another class is no candidate for the volunteer", func(t *testing.T) {
		before := checkins()
		_, err := e.invoke(vol, capapi.CapCheckinRegister, map[string]any{"child": "Criança", "class": "Grandes"})
		inv := wantInvalid(t, err, "class")
		if strings.Contains(inv.Reason, "Grandes") {
			t.Errorf("the refusal names a class that is not the volunteer's: %q", inv.Reason)
		}
		_, err = e.invoke(vol, capapi.CapCheckinRegister, map[string]any{"child": "Criança Dois"})
		wantInvalid(t, err, "child")
		if checkins() != before {
			t.Error("a refusal checked a child in")
		}
	})
	t.Run("an unknown class is refused with the caller's classes", func(t *testing.T) {
		before := checkins()
		_, err := e.invoke(vol, capapi.CapCheckinRegister, map[string]any{"child": "Ana", "class": "Berçário"})
		inv := wantInvalid(t, err, "class")
		if !strings.Contains(inv.Reason, "Pequenos, Maternal") || strings.Contains(inv.Reason, "Grandes") {
			t.Errorf("reason %q, want the volunteer's classes Pequenos, Maternal only", inv.Reason)
		}
		if checkins() != before {
			t.Error("the refusal checked a child in")
		}
	})
	t.Run("child and child_id together are refused", func(t *testing.T) {
		_, err := e.invoke(vol, capapi.CapCheckinRegister, map[string]any{"child": "Ana", "child_id": souza})
		wantInvalid(t, err, "child")
	})
}

// checkoutRow is what a check-out records about who took the child.
type checkoutRow struct {
	closed          bool
	failed          int
	by              *uuid.UUID
	guardian, adult *uuid.UUID
	name            *string
}

func (e *env) checkoutRow(id uuid.UUID) checkoutRow {
	e.t.Helper()
	var r checkoutRow
	err := e.st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT checked_out_at IS NOT NULL, failed_pickup_attempts, checked_out_by,
			picked_up_by_guardian, picked_up_by_adult, picked_up_by_name FROM checkins WHERE id = $1`, id).
			Scan(&r.closed, &r.failed, &r.by, &r.guardian, &r.adult, &r.name)
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// TestCheckoutByAdult: a check-out names the adult taking the child, who must be on the child's
// list and not under a restriction, whoever releases the child.
func TestCheckoutByAdult(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const (
		restricted = "Carlos Restrito"
		note       = "Ordem judicial: não entregar, chamar a coordenação"
	)
	// Names never reach a log or an error message. (The note is not personal data in the spec, and
	// is logged with the input; only the names are checked.)
	e.neverShown("Carlos", "Restrito", "Fulano")
	a := e.a
	admin, vol, resp := a.as(store.RoleAdmin), a.as(store.RoleVoluntario), a.as(store.RoleResponsavel)
	ck := mustInvoke[capapi.CheckinRegisterOutput](e, admin, capapi.CapCheckinRegister, map[string]any{"child_id": a.k1})
	code := *ck.PickupCode
	// Restrictions on k1: an adult, and its guardian g2 (a custody order).
	mustInvoke[capapi.PickupAdultAddOutput](e, admin, capapi.CapPickupAdultAdd,
		map[string]any{"child": a.k1Handle, "name": restricted, "relationship": "father's partner", "authorized": false, "note": note})
	mustInvoke[capapi.PickupAdultAddOutput](e, admin, capapi.CapPickupAdultAdd,
		map[string]any{"child": a.k1Handle, "name": "Responsável Dois", "relationship": "father", "authorized": false, "note": "Guarda suspensa: chamar a coordenação"})
	if n := e.count(`SELECT count(*) FROM pickup_adults WHERE child_id = $1 AND guardian_id = $2 AND NOT authorized`, a.k1, a.g2); n != 1 {
		t.Fatalf("the restriction on the guardian does not point at them (%d rows)", n)
	}
	unchanged := func(t *testing.T, action string) {
		t.Helper()
		if r := e.checkoutRow(ck.CheckinID); r.closed || r.failed != 0 || r.by != nil || r.name != nil {
			t.Errorf("the refusal wrote to the check-in: %+v", r)
		}
		if r := e.lastAudit(); r.Action != action || r.Outcome != "denied" || r.Capability != capapi.CapCheckoutRegister ||
			!slices.Equal(r.Targets, []uuid.UUID{ck.CheckinID, a.k1}) {
			t.Errorf("audit %+v, want %s denied on the check-in and the child", r, action)
		}
	}
	args := func(adult, code string) map[string]any {
		return map[string]any{"child": a.k1Handle, "pickup_code": code, "picked_up_by": adult}
	}

	t.Run("an adult not on the list is refused, nothing written, whatever the code", func(t *testing.T) {
		for _, c := range []string{code, wrongCode(code)} {
			_, err := e.invoke(vol, capapi.CapCheckoutRegister, args("Fulano de Tal", c))
			inv := wantInvalid(t, err, "picked_up_by")
			unchanged(t, "checkout.not_listed")
			// The volunteer (pickups:read) is shown the list, the restricted adults not on it.
			if !strings.Contains(inv.Detail, a.g1Name) || !strings.Contains(inv.Detail, trustedName) ||
				strings.Contains(inv.Detail, restricted) || strings.Contains(inv.Detail, "Responsável Dois") {
				t.Errorf("detail %q", inv.Detail)
			}
		}
	})
	t.Run("a first name shared on the list is refused", func(t *testing.T) {
		_, err := e.invoke(vol, capapi.CapCheckoutRegister, args("Zzcanary", code)) // g1 and the trusted adult
		inv := wantInvalid(t, err, "picked_up_by")
		if !strings.Contains(inv.Reason, "2 adults") {
			t.Errorf("reason %q", inv.Reason)
		}
		unchanged(t, "checkout.not_listed")
	})
	t.Run("a restricted adult is refused with the note, whatever the code", func(t *testing.T) {
		for _, c := range []string{code, wrongCode(code)} {
			_, err := e.invoke(vol, capapi.CapCheckoutRegister, args("carlos  RESTRITO", c))
			var cf *errs.Conflict
			if !errors.As(err, &cf) || !strings.Contains(cf.Reason, "NOT authorized") || !strings.Contains(cf.Detail, note) {
				t.Fatalf("err = %v (%+v), want a *errs.Conflict with the note in its detail", err, cf)
			}
			unchanged(t, "checkout.not_authorized")
		}
	})
	t.Run("a restricted guardian is refused", func(t *testing.T) {
		_, err := e.invoke(admin, capapi.CapCheckoutRegister, args("Responsável Dois", code))
		var cf *errs.Conflict
		if !errors.As(err, &cf) {
			t.Fatalf("err = %v, want *errs.Conflict", err)
		}
		unchanged(t, "checkout.not_authorized")
	})
	t.Run("a guardian releasing the child is refused a restricted adult", func(t *testing.T) {
		// The RESPONSAVEL (g1) cannot read k1's restrictions, yet cannot hand k1 to Carlos.
		_, err := e.invoke(resp, capapi.CapCheckoutRegister, args(restricted, code))
		var cf *errs.Conflict
		if !errors.As(err, &cf) {
			t.Fatalf("err = %v, want *errs.Conflict", err)
		}
		unchanged(t, "checkout.not_authorized")
	})
	t.Run("the refusal does not show a guardian the restriction's note", func(t *testing.T) {
		// Guardians never see restrictions (guardian_sees_no_restrictions; docs/privacy.md):
		// the note staff wrote for the releasing volunteer is not the guardian's to read.
		_, err := e.invoke(resp, capapi.CapCheckoutRegister, args(restricted, code))
		var cf *errs.Conflict
		if !errors.As(err, &cf) {
			t.Fatalf("err = %v, want *errs.Conflict", err)
		}
		if strings.Contains(cf.Detail, "Ordem judicial") || strings.Contains(errs.Shown(cf.Reason, cf.Detail), note) {
			t.Errorf("a RESPONSAVEL is shown the restriction's note: %q", cf.Detail)
		}
	})
	t.Run("a wrong code with a listed adult counts an attempt", func(t *testing.T) {
		_, err := e.invoke(vol, capapi.CapCheckoutRegister, args(trustedName, wrongCode(code)))
		wantInvalid(t, err, "pickup_code")
		if r := e.checkoutRow(ck.CheckinID); r.failed != 1 || r.closed {
			t.Errorf("after a wrong code: %+v", r)
		}
		if r := e.lastAudit(); r.Action != "checkout.wrong_code" || r.Outcome != "denied" {
			t.Errorf("audit %+v", r)
		}
	})
	t.Run("by handle, a trusted adult: recorded with who released the child", func(t *testing.T) {
		got := mustInvoke[capapi.CheckoutRegisterOutput](e, vol, capapi.CapCheckoutRegister,
			map[string]any{"child": strings.ToLower(a.k1Handle), "pickup_code": code, "picked_up_by": "zzcanary avo confiavel"})
		if got.CheckinID != ck.CheckinID || got.ChildHandle != a.k1Handle || got.ChildLabel != "Zzcanary S." ||
			got.PickedUpBy != trustedName || got.ReleasedBy != "Vol" || got.AlreadyCheckedOut || got.ClassName != "Pequenos" {
			t.Fatalf("got %s", jsonOf(t, got))
		}
		r := e.checkoutRow(ck.CheckinID)
		if !r.closed || r.by == nil || *r.by != a.users[store.RoleVoluntario] || r.adult == nil || *r.adult != a.pa1 ||
			r.guardian != nil || r.name == nil || *r.name != trustedName {
			t.Errorf("recorded %+v", r)
		}
		if r := e.lastAudit(); r.Action != "checkout" || r.Outcome != "allowed" {
			t.Errorf("audit %+v", r)
		}
		// The class list tells who took k1 home.
		out := mustInvoke[capapi.ClassListOutput](e, vol, capapi.CapClassList, map[string]any{"child": a.k1Handle})
		c := childOf(t, classOf(t, out, "Pequenos"), a.k1Handle)
		if c.Status != "picked_up" || c.PickedUpBy == nil || *c.PickedUpBy != trustedName || c.ReleasedBy == nil || *c.ReleasedBy != "Vol" {
			t.Errorf("class list row %s", jsonOf(t, c))
		}
	})
	t.Run("by first name, a guardian, released by that guardian", func(t *testing.T) {
		ck2 := mustInvoke[capapi.CheckinRegisterOutput](e, admin, capapi.CapCheckinRegister, map[string]any{"child_id": a.k2})
		got := mustInvoke[capapi.CheckoutRegisterOutput](e, resp, capapi.CapCheckoutRegister,
			map[string]any{"child": "Criança", "pickup_code": *ck2.PickupCode, "picked_up_by": a.g1Name})
		if got.CheckinID != ck2.CheckinID || got.PickedUpBy != a.g1Name || got.ReleasedBy != "Resp" {
			t.Fatalf("got %s", jsonOf(t, got))
		}
		r := e.checkoutRow(ck2.CheckinID)
		if r.by == nil || *r.by != a.users[store.RoleResponsavel] || r.guardian == nil || *r.guardian != a.g1 || r.adult != nil ||
			r.name == nil || *r.name != a.g1Name {
			t.Errorf("recorded %+v", r)
		}
	})
}

// TestPickupAdults: who may add, see and remove which entries of a child's pick-up list.
func TestPickupAdults(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.neverShown("Juiz", "Dona Maria", "Tio Pedro", "95555")
	a := e.a
	admin, cad, vol, resp := a.as(store.RoleAdmin), a.as(store.RoleCadastro), a.as(store.RoleVoluntario), a.as(store.RoleResponsavel)
	k3Handle := ""
	err := e.st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT handle FROM children WHERE id = $1`, a.k3).Scan(&k3Handle)
	})
	if err != nil {
		t.Fatal(err)
	}
	entries := func() int { return e.count(`SELECT count(*) FROM pickup_adults`) }
	add := func(ctx context.Context, args map[string]any) (*capapi.PickupAdultAddOutput, error) {
		out, err := e.invoke(ctx, capapi.CapPickupAdultAdd, args)
		if err != nil {
			return nil, err
		}
		return out.(*capapi.PickupAdultAddOutput), nil
	}
	var trusted, restriction uuid.UUID

	t.Run("a guardian adds a trusted adult for their own child", func(t *testing.T) {
		got, err := add(resp, map[string]any{"child": strings.ToLower(a.k1Handle), "name": "Dona Maria Vizinha", "relationship": "neighbour", "phone": "+55 11 95555-0000"})
		if err != nil {
			t.Fatal(err)
		}
		if !got.Authorized || got.ChildHandle != a.k1Handle {
			t.Fatalf("got %s", jsonOf(t, got))
		}
		trusted = got.AdultID
		if n := e.count(`SELECT count(*) FROM pickup_adults WHERE id = $1 AND child_id = $2 AND authorized AND created_by = $3
			AND name = 'Dona Maria Vizinha' AND relationship = 'neighbour'`, trusted, a.k1, a.users[store.RoleResponsavel]); n != 1 {
			t.Error("the entry is not as given")
		}
		if r := e.lastAudit(); r.Action != "pickup_adult_add" || r.Outcome != "allowed" || !slices.Contains(r.Targets, a.k1) {
			t.Errorf("audit %+v", r)
		}
	})
	t.Run("staff add a restriction with a note", func(t *testing.T) {
		got, err := add(cad, map[string]any{"child": a.k1.String(), "name": "Tio Pedro Juiz", "relationship": "uncle", "authorized": false,
			"note": "Ordem judicial: chamar a coordenação"})
		if err != nil {
			t.Fatal(err)
		}
		if got.Authorized {
			t.Fatalf("got %s", jsonOf(t, got))
		}
		restriction = got.AdultID
	})

	before := entries()
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		args  map[string]any
		field string // "" for a conflict
	}{
		{"a guardian, another's child", resp, map[string]any{"child": k3Handle, "name": "Dona Ana Outra", "relationship": "aunt"}, "child"},
		{"a guardian, a restriction", resp, map[string]any{"child": a.k1Handle, "name": "Dona Ana Outra", "relationship": "aunt", "authorized": false, "note": "não entregar"}, "authorized"},
		{"a restriction without a note", admin, map[string]any{"child": a.k1Handle, "name": "Dona Ana Outra", "relationship": "aunt", "authorized": false}, "note"},
		{"a note with a phone", admin, map[string]any{"child": a.k1Handle, "name": "Dona Ana Outra", "relationship": "aunt", "authorized": false, "note": "liga 11 98765-4321"}, "note"},
		{"a note with a CPF", admin, map[string]any{"child": a.k1Handle, "name": "Dona Ana Outra", "relationship": "aunt", "authorized": false, "note": "CPF 123.456.789-09 na portaria"}, "note"},
		{"a trusted adult's note with a phone", resp, map[string]any{"child": a.k1Handle, "name": "Dona Ana Outra", "relationship": "aunt", "note": "liga 11 98765-4321"}, "note"},
		{"a name with digits", resp, map[string]any{"child": a.k1Handle, "name": "Dona Ana 98765", "relationship": "aunt"}, "name"},
		{"an unknown handle", admin, map[string]any{"child": "ZZZZZZ", "name": "Dona Ana Outra", "relationship": "aunt"}, "child"},
		{"another church's child", admin, map[string]any{"child": e.b.k1Handle, "name": "Dona Ana Outra", "relationship": "aunt"}, "child"},
		{"a name already on the list (accents and case aside)", admin, map[string]any{"child": a.k1Handle, "name": "dona  MARIA vizinha", "relationship": "aunt"}, ""},
		{"the fixture's trusted adult again", resp, map[string]any{"child": a.k1Handle, "name": trustedName, "relationship": "grandmother"}, ""},
		{"a guardian as a trusted adult", resp, map[string]any{"child": a.k1Handle, "name": "Responsável Dois", "relationship": "father"}, ""},
	} {
		t.Run("refused: "+tc.name, func(t *testing.T) {
			out, err := add(tc.ctx, tc.args)
			if out != nil {
				t.Fatalf("output %s", jsonOf(t, out))
			}
			if tc.field == "" {
				var cf *errs.Conflict
				if !errors.As(err, &cf) {
					t.Fatalf("err = %v, want *errs.Conflict", err)
				}
				return
			}
			wantInvalid(t, err, tc.field)
		})
	}
	t.Run("another's child reads like a missing one", func(t *testing.T) {
		_, errOther := add(resp, map[string]any{"child": k3Handle, "name": "Dona Ana Outra", "relationship": "aunt"})
		_, errMissing := add(resp, map[string]any{"child": "ZZZZZZ", "name": "Dona Ana Outra", "relationship": "aunt"})
		if errOther == nil || errMissing == nil || errOther.Error() != errMissing.Error() {
			t.Errorf("another's child: %v; a missing one: %v", errOther, errMissing)
		}
	})
	if after := entries(); after != before {
		t.Errorf("refused additions wrote %d entries", after-before)
	}

	read := func(ctx context.Context, child string) *capapi.PickupAdultsOutput {
		t.Helper()
		return mustInvoke[capapi.PickupAdultsOutput](e, ctx, capapi.CapPickupAdults, map[string]any{"child": child})
	}
	names := func(out *capapi.PickupAdultsOutput) (auth, not []string) {
		for _, x := range out.Authorized {
			auth = append(auth, x.Name)
		}
		for _, x := range out.NotAuthorized {
			not = append(not, x.Name)
		}
		return auth, not
	}
	t.Run("who sees which entries", func(t *testing.T) {
		wantAuth := []string{"Responsável Dois", a.g1Name, "Dona Maria Vizinha", trustedName} // guardians first, then by name
		for _, tc := range []struct {
			role         string
			restrictions bool
		}{
			{store.RoleAdmin, true}, {store.RoleCadastro, true}, {store.RoleVoluntario, true}, {store.RoleResponsavel, false},
		} {
			out := read(a.as(tc.role), a.k1Handle)
			auth, not := names(out)
			if !slices.Equal(auth, wantAuth) {
				t.Errorf("%s: authorized %v, want %v", tc.role, auth, wantAuth)
			}
			if tc.restrictions {
				if !slices.Equal(not, []string{"Tio Pedro Juiz"}) || out.NotAuthorized[0].Note == nil ||
					*out.NotAuthorized[0].Note != "Ordem judicial: chamar a coordenação" || out.NotAuthorized[0].AdultID != restriction {
					t.Errorf("%s: not authorized %s", tc.role, jsonOf(t, out.NotAuthorized))
				}
			} else if len(not) != 0 || strings.Contains(jsonOf(t, out), "Juiz") || strings.Contains(jsonOf(t, out), "Ordem") {
				t.Errorf("%s sees a restriction: %s", tc.role, jsonOf(t, out))
			}
			// Phones only with guardians:read (not the volunteer's).
			granted, _ := scopesOf(tc.role)
			for _, x := range out.Authorized {
				if (x.Phone != nil) && !granted.Has("guardians:read") {
					t.Errorf("%s: phone of %s shown without guardians:read", tc.role, x.Name)
				}
			}
			if want := map[bool]string{true: childSentinel, false: "Zzcanary S."}[granted.Has("children:read")]; out.ChildLabel != want {
				t.Errorf("%s: child label %q, want %q", tc.role, out.ChildLabel, want)
			}
		}
		// The row filter holds in the database too: a guardian's transaction reads no
		// restriction, whatever the query.
		c := store.Caller{ChurchID: a.id, UserID: a.users[store.RoleResponsavel], Role: store.RoleResponsavel, Scopes: mustScopes(store.RoleResponsavel)}
		var n int
		err := e.st.InTx(context.Background(), c, func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT count(*) FROM pickup_adults WHERE NOT authorized`).Scan(&n)
		})
		if err != nil || n != 0 {
			t.Errorf("a guardian's transaction reads %d restrictions (err %v)", n, err)
		}
	})
	t.Run("invisible children read as missing", func(t *testing.T) {
		for _, tc := range []struct {
			ctx   context.Context
			child string
		}{
			{vol, a.k2.String()}, {resp, k3Handle}, {e.b.as(store.RoleAdmin), a.k1Handle}, {admin, "ZZZZZZ"},
		} {
			_, err := e.invoke(tc.ctx, capapi.CapPickupAdults, map[string]any{"child": tc.child})
			wantNotFound(t, err)
		}
	})
	t.Run("a guardian removes their trusted adult, not a restriction", func(t *testing.T) {
		_, err := e.invoke(resp, capapi.CapPickupAdultRemove, map[string]any{"adult_id": restriction})
		wantNotFound(t, err)
		if n := e.count(`SELECT count(*) FROM pickup_adults WHERE id = $1 AND removed_at IS NULL`, restriction); n != 1 {
			t.Error("the guardian removed a restriction")
		}
		// Nor another's child's entry, nor anything of the volunteer's.
		_, err = e.invoke(vol, capapi.CapPickupAdultRemove, map[string]any{"adult_id": trusted})
		var f *errs.Forbidden
		if !errors.As(err, &f) {
			t.Errorf("volunteer removal: err = %v, want *errs.Forbidden (no pickups:write)", err)
		}
		got := mustInvoke[capapi.PickupAdultRemoveOutput](e, resp, capapi.CapPickupAdultRemove, map[string]any{"adult_id": trusted})
		if got.AdultID != trusted {
			t.Fatalf("got %s", jsonOf(t, got))
		}
		if n := e.count(`SELECT count(*) FROM pickup_adults WHERE id = $1 AND removed_at IS NOT NULL AND removed_by = $2`, trusted, a.users[store.RoleResponsavel]); n != 1 {
			t.Error("the removal is not recorded with who removed it")
		}
		again := mustInvoke[capapi.PickupAdultRemoveOutput](e, resp, capapi.CapPickupAdultRemove, map[string]any{"adult_id": trusted})
		if !again.RemovedAt.Equal(got.RemovedAt) {
			t.Errorf("retry %s, first %s", again.RemovedAt, got.RemovedAt)
		}
		if auth, _ := names(read(resp, a.k1Handle)); slices.Contains(auth, "Dona Maria Vizinha") {
			t.Errorf("removed adult still listed: %v", auth)
		}
		// Staff remove the restriction.
		mustInvoke[capapi.PickupAdultRemoveOutput](e, admin, capapi.CapPickupAdultRemove, map[string]any{"adult_id": restriction})
		if _, not := names(read(vol, a.k1Handle)); len(not) != 0 {
			t.Errorf("removed restriction still listed: %v", not)
		}
	})
}

// TestSundayOnTheDemoData: the demo church (internal/seed, what `make run` serves) answers the
// volunteer's Sunday: who picked up each child of the last service, the restriction on a child
// of the volunteer's class with its note, and the demo guardian's trusted adult, without the
// restriction.
func TestSundayOnTheDemoData(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds a church")
	}
	t.Parallel()
	until := time.Date(2026, 6, 7, 0, 0, 0, 0, time.UTC) // a Sunday
	st := storetest.NewSeeded(t, seed.Options{Until: until, Months: 1})
	svc := logic.New(st, logic.WithClock(func() time.Time { return until.Add(15 * time.Hour) }))
	as := func(user uuid.UUID, role string) context.Context {
		return principal.With(context.Background(), principal.Principal{
			UserID: user, ChurchID: seed.DemoChurchID, Role: role, Scopes: mustScopes(role), ClientID: "demo",
		})
	}
	vol := as(seed.DemoVoluntarioID, store.RoleVoluntario)
	resp := as(seed.DemoResponsavelID, store.RoleResponsavel)

	// The last service, seeded with its check-outs.
	var last time.Time
	err := st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT max(service_date) FROM service_days WHERE church_id = $1`, seed.DemoChurchID).Scan(&last)
	})
	if err != nil {
		t.Fatal(err)
	}
	day := capability.DateOf(last)
	list, err := svc.ClassList(vol, &capapi.ClassListInput{Date: &day})
	if err != nil {
		t.Fatal(err)
	}
	list.Finalize(mustScopes(store.RoleVoluntario))
	if got := classNames(list); !slices.Equal(got, []string{"Jardim", "Primários"}) {
		t.Fatalf("the demo volunteer's classes %v", got)
	}
	picked := 0
	for _, cl := range list.Classes {
		for _, c := range cl.Children {
			if c.Status != "picked_up" {
				continue
			}
			picked++
			if c.PickedUpBy == nil || *c.PickedUpBy == "" || c.ReleasedBy == nil || *c.ReleasedBy == "" {
				t.Errorf("%s picked up without who took or released them: %s", cl.ClassName, jsonOf(t, c))
			}
		}
	}
	if picked == 0 {
		t.Errorf("nobody picked up on the demo's last Sunday: %s", jsonOf(t, list))
	}

	var restrictedHandle string
	err = st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT c.handle FROM pickup_adults r JOIN children c ON c.id = r.child_id WHERE NOT r.authorized`).Scan(&restrictedHandle)
	})
	if err != nil {
		t.Fatal(err)
	}
	pa, err := svc.PickupAdults(vol, &capapi.PickupAdultsInput{Child: restrictedHandle})
	if err != nil {
		t.Fatal(err)
	}
	if len(pa.NotAuthorized) != 1 || pa.NotAuthorized[0].Note == nil || !strings.Contains(*pa.NotAuthorized[0].Note, "coordenação") || len(pa.Authorized) == 0 {
		t.Errorf("the volunteer's view of the restricted child's list: %s", jsonOf(t, pa))
	}

	// The demo guardian's children: their grandmother on the list, no restriction.
	mine, err := svc.ClassList(resp, &capapi.ClassListInput{})
	if err != nil {
		t.Fatal(err)
	}
	handles := slices.Sorted(maps.Keys(labelsByHandle(mine)))
	if len(handles) != 2 {
		t.Fatalf("the demo guardian's class list %s", jsonOf(t, mine))
	}
	for _, h := range handles {
		pa, err := svc.PickupAdults(resp, &capapi.PickupAdultsInput{Child: h})
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]int{}
		for _, a := range pa.Authorized {
			kinds[a.Kind+"/"+a.Relationship]++
		}
		if kinds["guardian/mother"] != 1 || kinds["guardian/father"] != 1 || kinds["trusted/grandmother"] != 1 || len(pa.NotAuthorized) != 0 {
			t.Errorf("the demo guardian's child %s: %s", h, jsonOf(t, pa))
		}
	}
}
