package logic_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/store"
)

var pickupCodeForm = regexp.MustCompile(`^[A-Z]{3}-[0-9]{3}$`)

func TestCheckinRegister(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	today := todaySP()
	admin := a.as(store.RoleAdmin)

	t.Run("first call issues the code once, retry returns the same check-in", func(t *testing.T) {
		first := mustInvoke[capapi.CheckinRegisterOutput](e, admin, capapi.CapCheckinRegister, map[string]any{"child_id": a.k1})
		if first.AlreadyCheckedIn || first.PickupCode == nil || !pickupCodeForm.MatchString(*first.PickupCode) ||
			first.ChildID != a.k1 || first.ClassID != a.c1 || first.ServiceDate != today {
			t.Fatalf("first = %v (code present %v)", first, first.PickupCode != nil)
		}
		// ADMIN holds children:read: the label is the full name (the spec's child_label); the
		// output carries no other personal data.
		if first.ChildLabel != a.childName || first.ChildHandle != a.k1Handle || first.ClassName != "Pequenos" {
			t.Errorf("label %q, handle %q (k1's %q), class %q", first.ChildLabel, first.ChildHandle, a.k1Handle, first.ClassName)
		}
		j := jsonOf(t, first)
		if strings.Contains(j, "90000") || strings.Contains(j, "birth") || strings.Contains(j, "Guardiã") {
			t.Errorf("output carries personal data beyond the label: %s", j)
		}
		// Only the hash is stored.
		if n := e.count(`SELECT count(*) FROM checkins WHERE id = $1 AND pickup_code_hash <> convert_to($2, 'UTF8')
			AND position(convert_to($2, 'UTF8') IN pickup_code_hash) = 0`, first.CheckinID, *first.PickupCode); n != 1 {
			t.Errorf("the pick-up code is stored in clear")
		}
		again := mustInvoke[capapi.CheckinRegisterOutput](e, a.as(store.RoleCadastro), capapi.CapCheckinRegister,
			map[string]any{"child_id": a.k1, "service_date": today.String(), "class_id": a.c2})
		if !again.AlreadyCheckedIn || again.PickupCode != nil || again.CheckinID != first.CheckinID || again.ClassID != a.c1 ||
			!again.CheckedInAt.Equal(first.CheckedInAt) {
			t.Fatalf("retry = %v", again)
		}
		if strings.Contains(jsonOf(t, again), "pickup_code") {
			t.Error("the retry shows a pick-up code")
		}
		if n := e.count(`SELECT count(*) FROM checkins WHERE child_id = $1 AND service_date = $2`, a.k1, today.Time()); n != 1 {
			t.Errorf("%d check-ins, want 1", n)
		}
	})
	t.Run("explicit class and past day", func(t *testing.T) {
		got := mustInvoke[capapi.CheckinRegisterOutput](e, admin, capapi.CapCheckinRegister,
			map[string]any{"child_id": a.k4, "class_id": a.c2, "service_date": today.AddDays(-1).String()})
		if got.ClassID != a.c2 || got.ServiceDate != today.AddDays(-1) || got.AlreadyCheckedIn {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("existing fixture check-in is found", func(t *testing.T) {
		got := mustInvoke[capapi.CheckinRegisterOutput](e, a.as(store.RoleVoluntario), capapi.CapCheckinRegister,
			map[string]any{"child_id": a.k3, "service_date": a.day.String()})
		if got.CheckinID != a.ck3 || !got.AlreadyCheckedIn || got.PickupCode != nil {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("guardian checks in own child", func(t *testing.T) {
		got := mustInvoke[capapi.CheckinRegisterOutput](e, a.as(store.RoleResponsavel), capapi.CapCheckinRegister, map[string]any{"child_id": a.k2})
		if got.ClassID != a.c2 || got.PickupCode == nil {
			t.Fatalf("got %v", got)
		}
	})

	before := e.count(`SELECT count(*) FROM checkins`)
	for _, tc := range []struct {
		name  string
		role  string
		args  map[string]any
		field string // "" for not found
	}{
		{"volunteer: child of another class", store.RoleVoluntario, map[string]any{"child_id": a.k2}, ""},
		{"volunteer: random id", store.RoleVoluntario, map[string]any{"child_id": uuid.New()}, ""},
		{"guardian: someone else's child", store.RoleResponsavel, map[string]any{"child_id": a.k3}, ""},
		{"other church's child", store.RoleAdmin, map[string]any{"child_id": e.b.k3}, ""},
		// The class is asked for by name (class; class_id is the alternative by id).
		{"child without class, no class given", store.RoleAdmin, map[string]any{"child_id": a.k4}, "class"},
		{"volunteer: class not theirs", store.RoleVoluntario, map[string]any{"child_id": a.k3, "class_id": a.c2}, "class_id"},
		{"other church's class", store.RoleAdmin, map[string]any{"child_id": a.k3, "class_id": e.b.c1}, "class_id"},
		{"future day", store.RoleAdmin, map[string]any{"child_id": a.k3, "service_date": today.AddDays(1).String()}, "service_date"},
		{"bad child id", store.RoleAdmin, map[string]any{"child_id": "k3"}, "child_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := e.invoke(a.as(tc.role), capapi.CapCheckinRegister, tc.args)
			if out != nil {
				t.Fatalf("output %v", out)
			}
			if tc.field == "" {
				wantNotFound(t, err)
			} else {
				wantInvalid(t, err, tc.field)
			}
		})
	}
	if after := e.count(`SELECT count(*) FROM checkins`); after != before {
		t.Errorf("refused check-ins wrote %d rows", after-before)
	}
}

// TestCheckinRegisterConcurrentDuplicates: 50 simultaneous check-ins of one child for one day
// make one check-in; exactly one caller gets the pick-up code, all get the same check-in.
func TestCheckinRegisterConcurrentDuplicates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	const n = 50
	var (
		wg   sync.WaitGroup
		outs = make([]*capapi.CheckinRegisterOutput, n)
		errs = make([]error, n)
	)
	warmPool(t, e.st)
	start := make(chan struct{})
	roles := []string{store.RoleAdmin, store.RoleCadastro, store.RoleVoluntario, store.RoleResponsavel}
	for i := range n {
		wg.Go(func() {
			<-start
			out, err := e.invoke(a.as(roles[i%len(roles)]), capapi.CapCheckinRegister, map[string]any{"child_id": a.k1})
			errs[i] = err
			if err == nil {
				outs[i] = out.(*capapi.CheckinRegisterOutput)
			}
		})
	}
	close(start)
	wg.Wait()
	codes := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if outs[i].CheckinID != outs[0].CheckinID || outs[i].ClassID != a.c1 {
			t.Fatalf("call %d returned check-in %v, call 0 %v", i, outs[i], outs[0])
		}
		if outs[i].PickupCode != nil {
			codes++
			if outs[i].AlreadyCheckedIn {
				t.Errorf("call %d: code with already_checked_in", i)
			}
		} else if !outs[i].AlreadyCheckedIn {
			t.Errorf("call %d: neither new nor already checked in", i)
		}
	}
	if codes != 1 {
		t.Errorf("%d calls got a pick-up code, want exactly 1", codes)
	}
	if c := e.count(`SELECT count(*) FROM checkins WHERE child_id = $1 AND service_date = $2`, a.k1, todaySP().Time()); c != 1 {
		t.Errorf("%d check-ins in the database, want 1", c)
	}
	var created, repeats int
	for _, r := range e.audit() {
		switch {
		case r.Action == "checkin" && r.Outcome == "allowed":
			created++
		case r.Action == "checkin.repeat" && r.Outcome == "allowed":
			repeats++
		}
	}
	if created != 1 || repeats != n-1 {
		t.Errorf("audit: %d checkin, %d checkin.repeat; want 1 and %d", created, repeats, n-1)
	}
}

// checkinState reads what checkout may change.
type checkinState struct {
	failed    int
	locked    bool
	closed    bool
	closedBy  *uuid.UUID
	hashBytes []byte
}

func (e *env) checkinState(id uuid.UUID) checkinState {
	e.t.Helper()
	var s checkinState
	err := e.st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT failed_pickup_attempts, locked_at IS NOT NULL, checked_out_at IS NOT NULL, checked_out_by, pickup_code_hash
			FROM checkins WHERE id = $1`, id).Scan(&s.failed, &s.locked, &s.closed, &s.closedBy, &s.hashBytes)
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// wrongCode is a code that differs from code.
func wrongCode(code string) string {
	if code == "000000" {
		return "111111"
	}
	return "000000"
}

func TestCheckoutRegister(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	admin := a.as(store.RoleAdmin)
	ck := mustInvoke[capapi.CheckinRegisterOutput](e, admin, capapi.CapCheckinRegister, map[string]any{"child_id": a.k2})
	code := *ck.PickupCode
	bad := wrongCode(code)

	t.Run("wrong code changes nothing but the counter", func(t *testing.T) {
		before := e.checkinState(ck.CheckinID)
		out, err := e.invoke(a.as(store.RoleResponsavel), capapi.CapCheckoutRegister,
			map[string]any{"checkin_id": ck.CheckinID, "pickup_code": bad, "picked_up_by": a.g1Name})
		inv := wantInvalid(t, err, "pickup_code")
		if out != nil || strings.Contains(err.Error(), bad) || strings.Contains(err.Error(), code) || !strings.Contains(inv.Reason, "4 more") {
			t.Fatalf("out %v, err %v", out, err)
		}
		after := e.checkinState(ck.CheckinID)
		if after.failed != before.failed+1 || after.closed || after.locked || string(after.hashBytes) != string(before.hashBytes) {
			t.Fatalf("state %+v -> %+v", before, after)
		}
	})
	var first *capapi.CheckoutRegisterOutput
	t.Run("right code checks out", func(t *testing.T) {
		first = mustInvoke[capapi.CheckoutRegisterOutput](e, a.as(store.RoleResponsavel), capapi.CapCheckoutRegister,
			map[string]any{"checkin_id": ck.CheckinID, "pickup_code": " " + code + " ", "picked_up_by": a.g1Name})
		if first.CheckinID != ck.CheckinID || first.ChildID != a.k2 || first.CheckedOutAt.Before(ck.CheckedInAt) ||
			first.PickedUpBy != a.g1Name || first.ReleasedBy != "Resp" || first.AlreadyCheckedOut {
			t.Fatalf("got %v", first)
		}
		s := e.checkinState(ck.CheckinID)
		if !s.closed || s.closedBy == nil || *s.closedBy != a.users[store.RoleResponsavel] {
			t.Fatalf("state %+v", s)
		}
	})
	t.Run("retry returns the earlier check-out", func(t *testing.T) {
		// The retry names another adult of the list: the earlier pick-up stands.
		again := mustInvoke[capapi.CheckoutRegisterOutput](e, admin, capapi.CapCheckoutRegister,
			map[string]any{"checkin_id": ck.CheckinID, "pickup_code": code, "picked_up_by": "Responsável Dois"})
		if !again.CheckedOutAt.Equal(first.CheckedOutAt) || again.ChildID != a.k2 || !again.AlreadyCheckedOut ||
			again.PickedUpBy != a.g1Name || again.ReleasedBy != "Resp" {
			t.Fatalf("again %v, first %v", again, first)
		}
		s := e.checkinState(ck.CheckinID)
		if *s.closedBy != a.users[store.RoleResponsavel] {
			t.Errorf("the retry changed who checked out")
		}
	})
	t.Run("wrong code after check-out: refused, not counted", func(t *testing.T) {
		before := e.checkinState(ck.CheckinID)
		_, err := e.invoke(admin, capapi.CapCheckoutRegister, map[string]any{"checkin_id": ck.CheckinID, "pickup_code": bad, "picked_up_by": a.g1Name})
		wantInvalid(t, err, "pickup_code")
		if after := e.checkinState(ck.CheckinID); after.failed != before.failed {
			t.Errorf("counted: %d -> %d", before.failed, after.failed)
		}
	})
	t.Run("invisible and missing check-ins read the same and count nothing", func(t *testing.T) {
		for _, tc := range []struct {
			role string
			c    church
			id   uuid.UUID
		}{
			{store.RoleVoluntario, a, a.ck2},       // another class
			{store.RoleResponsavel, a, a.ck3},      // someone else's child
			{store.RoleAdmin, e.b, a.ck1},          // another church
			{store.RoleAdmin, a, uuid.New()},       // missing
			{store.RoleVoluntario, a, uuid.New()},  // missing
			{store.RoleResponsavel, a, uuid.New()}, // missing
		} {
			_, err := e.invoke(tc.c.as(tc.role), capapi.CapCheckoutRegister,
				map[string]any{"checkin_id": tc.id, "pickup_code": "999999", "picked_up_by": "Responsável Dois"})
			wantNotFound(t, err)
		}
		for _, id := range []uuid.UUID{a.ck1, a.ck2, a.ck3} {
			if s := e.checkinState(id); s.failed != 0 || s.closed {
				t.Errorf("check-in %s changed: %+v", id, s)
			}
		}
	})
}

func TestCheckoutLocksAfterTooManyWrongCodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	vol := a.as(store.RoleVoluntario)
	args := map[string]any{"checkin_id": a.ck3, "pickup_code": wrongCode(fixtureCode), "picked_up_by": "Responsável Dois"}
	for i := 1; i < store.MaxPickupAttempts; i++ {
		_, err := e.invoke(vol, capapi.CapCheckoutRegister, args)
		wantInvalid(t, err, "pickup_code")
		if s := e.checkinState(a.ck3); s.failed != i || s.locked || s.closed {
			t.Fatalf("after %d wrong codes: %+v", i, s)
		}
	}
	_, err := e.invoke(vol, capapi.CapCheckoutRegister, args)
	var c *errs.Conflict
	if !errors.As(err, &c) || !strings.Contains(c.Reason, "locked") {
		t.Fatalf("attempt %d: err = %v, want a locked *errs.Conflict", store.MaxPickupAttempts, err)
	}
	if s := e.checkinState(a.ck3); !s.locked || s.closed || s.failed != store.MaxPickupAttempts {
		t.Fatalf("after the limit: %+v", s)
	}
	// Locked: even the right code no longer closes it, and nothing is counted.
	_, err = e.invoke(vol, capapi.CapCheckoutRegister, map[string]any{"checkin_id": a.ck3, "pickup_code": fixtureCode, "picked_up_by": "Responsável Dois"})
	if !errors.As(err, &c) {
		t.Fatalf("right code on a locked check-in: err = %v, want *errs.Conflict", err)
	}
	if s := e.checkinState(a.ck3); !s.locked || s.closed || s.failed != store.MaxPickupAttempts {
		t.Fatalf("after the right code: %+v", s)
	}
	// Every attempt is audited, denied, about the check-in and its child.
	var wrong, locked int
	for _, r := range e.audit() {
		if r.Capability != capapi.CapCheckoutRegister || r.Outcome != "denied" || len(r.Targets) != 2 ||
			r.Targets[0] != a.ck3 || r.Targets[1] != a.k3 || *r.UserID != a.users[store.RoleVoluntario] {
			t.Errorf("entry %+v", r)
			continue
		}
		switch r.Action {
		case "checkout.wrong_code", "checkout.wrong_code.locked":
			wrong++
		case "checkout.locked":
			locked++
		}
	}
	if wrong != store.MaxPickupAttempts || locked != 1 {
		t.Errorf("audit: %d wrong-code entries, %d locked; want %d and 1", wrong, locked, store.MaxPickupAttempts)
	}
	// The other check-ins are untouched.
	if s := e.checkinState(a.ck1); s.failed != 0 || s.locked {
		t.Errorf("ck1 changed: %+v", s)
	}
}

func TestChildEnroll(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	today := todaySP().Time()
	born := func(years, days int) string { return today.AddDate(-years, 0, -days).Format("2006-01-02") }
	counts := func() [4]int {
		return [4]int{
			e.count(`SELECT count(*) FROM children`), e.count(`SELECT count(*) FROM guardians`),
			e.count(`SELECT count(*) FROM guardian_children`), e.count(`SELECT count(*) FROM consent_records`),
		}
	}
	variant := 0
	with := func(mod func(m map[string]any)) map[string]any {
		m := enrollArgs(born(4, 3))
		variant++ // another child each time: identical enrollments are refused as duplicates
		m["name"] = fmt.Sprintf("%s %c", enrollChildName, 'A'+variant)
		mod(m)
		return m
	}

	t.Run("placed by age, one transaction, ids only", func(t *testing.T) {
		before := counts()
		got := mustInvoke[capapi.ChildEnrollOutput](e, a.as(store.RoleCadastro), capapi.CapChildEnroll, enrollArgs(born(4, 3)))
		if got.ClassID == nil || *got.ClassID != a.c1 || got.ChildID == uuid.Nil || got.GuardianID == uuid.Nil || got.ConsentID == uuid.Nil {
			t.Fatalf("got %v", got)
		}
		after := counts()
		for i := range after {
			if after[i] != before[i]+1 {
				t.Fatalf("rows %v -> %v, want one more of each", before, after)
			}
		}
		if j := jsonOf(t, got); strings.Contains(j, "Zzcanary") || strings.Contains(j, "90000") {
			t.Errorf("output echoes personal data: %s", j)
		}
		if n := e.count(`SELECT count(*) FROM consent_records cr JOIN guardian_children gc ON gc.child_id = cr.child_id AND gc.guardian_id = cr.guardian_id
			WHERE cr.id = $1 AND cr.child_id = $2 AND cr.guardian_id = $3 AND cr.granted_by = $4 AND cr.text_version = '2026-01'
			AND cr.legal_basis = 'consent' AND gc.relationship = 'mother'`, got.ConsentID, got.ChildID, got.GuardianID, a.users[store.RoleCadastro]); n != 1 {
			t.Error("consent record and link not as given")
		}
		// The new child is visible to the staff right away, in the class chosen.
		rc := mustInvoke[capapi.RosterChildOutput](e, a.as(store.RoleAdmin), capapi.CapRosterChild, map[string]any{"id": got.ChildID})
		if rc.Name != enrollChildName || len(rc.Guardians) != 1 || *rc.Guardians[0].Phone != enrollPhone {
			t.Errorf("read back: %+v", rc.LogValue())
		}
	})
	t.Run("explicit class wins over age", func(t *testing.T) {
		got := mustInvoke[capapi.ChildEnrollOutput](e, a.as(store.RoleAdmin), capapi.CapChildEnroll,
			with(func(m map[string]any) { m["class_id"] = a.c2 }))
		if got.ClassID == nil || *got.ClassID != a.c2 {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("no class fits the age", func(t *testing.T) {
		got := mustInvoke[capapi.ChildEnrollOutput](e, a.as(store.RoleAdmin), capapi.CapChildEnroll,
			with(func(m map[string]any) { m["birth_date"] = born(15, 0) }))
		if got.ClassID != nil || strings.Contains(jsonOf(t, got), "class_id") {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("newborn today", func(t *testing.T) {
		got := mustInvoke[capapi.ChildEnrollOutput](e, a.as(store.RoleAdmin), capapi.CapChildEnroll,
			with(func(m map[string]any) { m["birth_date"] = born(0, 0) }))
		if got.ClassID == nil || *got.ClassID != a.c1 {
			t.Fatalf("got %v", got)
		}
	})

	before := counts()
	for _, tc := range []struct {
		name  string
		role  string
		mod   func(m map[string]any)
		field string
	}{
		{"no consent", store.RoleCadastro, func(m map[string]any) { m["consent"].(map[string]any)["granted"] = false }, "consent.granted"},
		{"consent missing", store.RoleCadastro, func(m map[string]any) { delete(m, "consent") }, "consent"},
		{"birth date in the future", store.RoleCadastro, func(m map[string]any) { m["birth_date"] = today.AddDate(0, 0, 1).Format("2006-01-02") }, "birth_date"},
		{"too old", store.RoleCadastro, func(m map[string]any) { m["birth_date"] = born(19, 1) }, "birth_date"},
		{"not a date", store.RoleCadastro, func(m map[string]any) { m["birth_date"] = "2024-02-30" }, "birth_date"},
		{"unknown class", store.RoleAdmin, func(m map[string]any) { m["class_id"] = uuid.New() }, "class_id"},
		{"other church's class", store.RoleAdmin, func(m map[string]any) { m["class_id"] = e.b.c1 }, "class_id"},
		{"blank name", store.RoleAdmin, func(m map[string]any) { m["name"] = "  x  " }, "name"},
		{"blank guardian name", store.RoleAdmin, func(m map[string]any) { m["guardian"].(map[string]any)["name"] = " y  " }, "guardian.name"},
		{"phone without digits", store.RoleAdmin, func(m map[string]any) { m["guardian"].(map[string]any)["phone"] = "(((( ))))" }, "guardian.phone"},
		{"phone malformed", store.RoleAdmin, func(m map[string]any) { m["guardian"].(map[string]any)["phone"] = "call 90000-4343" }, "guardian.phone"},
		{"relationship unknown", store.RoleAdmin, func(m map[string]any) { m["guardian"].(map[string]any)["relationship"] = "aunt" }, "guardian.relationship"},
		{"legal basis unknown", store.RoleAdmin, func(m map[string]any) { m["consent"].(map[string]any)["legal_basis"] = "because" }, "consent.legal_basis"},
		{"blank consent version", store.RoleAdmin, func(m map[string]any) { m["consent"].(map[string]any)["text_version"] = "   " }, "consent.text_version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := e.invoke(a.as(tc.role), capapi.CapChildEnroll, with(tc.mod))
			if out != nil {
				t.Fatalf("output %v", out)
			}
			wantInvalid(t, err, tc.field)
		})
	}
	if after := counts(); after != before {
		t.Errorf("refused enrollments wrote rows: %v -> %v", before, after)
	}
	t.Run("only the roles with children:write, even with the scope on the token", func(t *testing.T) {
		// Row-level security refuses the insert (app_role_has_scope, from the spec); the
		// refusal reads as not found, as every RLS refusal does (no existence leak).
		for _, role := range []string{store.RoleVoluntario, store.RoleResponsavel} {
			all, _ := scopesOf(store.RoleAdmin)
			m := enrollArgs(born(4, 3))
			m["name"] = nextEnrollName() // not a duplicate: the insert itself must be refused
			_, err := invokeWith(e, a.as(role), capapi.CapChildEnroll, m, all)
			if !errors.Is(err, errs.ErrNotFound) || !store.IsPermissionDenied(err) {
				t.Errorf("%s: err = %v, want the database's refusal (errs.ErrNotFound, SQLSTATE 42501)", role, err)
			}
		}
		if after := counts(); after != before {
			t.Errorf("rows written: %v -> %v", before, after)
		}
	})
}

// warmPool opens all of the pool's connections up front, so concurrent calls really overlap
// instead of queueing behind connection set-up.
func warmPool(t *testing.T, st *store.Store) {
	t.Helper()
	pool := st.Pool()
	conns := make([]*pgxpool.Conn, pool.Config().MaxConns)
	for i := range conns {
		c, err := pool.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	for _, c := range conns {
		c.Release()
	}
}
