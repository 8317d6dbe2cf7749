package logic_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/logic"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/store"
)

// TestCheckinDateRules: a check-in may be registered for today and up to the window's days back
// (31 by default, configurable), never in the future, before the window or before the child's
// birth; each refusal names service_date and writes nothing.
func TestCheckinDateRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t, logic.WithCheckinWindow(10))
	a := e.a
	admin := a.as(store.RoleAdmin)
	today := todaySP()
	newborn := mustInvoke[capapi.ChildEnrollOutput](e, admin, capapi.CapChildEnroll, enrollArgs(today.AddDays(-3).String()))
	tests := []struct {
		name   string
		child  any
		day    string
		reason string // "" means accepted
	}{
		{"ten days back, the window's edge", a.k2, today.AddDays(-10).String(), ""},
		{"eleven days back", a.k2, today.AddDays(-11).String(), "is more than 10 days ago"},
		{"the year 0001", a.k2, "0001-01-01", "is more than 10 days ago"},
		{"tomorrow", a.k2, today.AddDays(1).String(), "is in the future"},
		{"before the child's birth", newborn.ChildID, today.AddDays(-5).String(), "is before the child's birth date"},
		{"the day of birth", newborn.ChildID, today.AddDays(-3).String(), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := e.count(`SELECT count(*) FROM checkins`)
			_, err := e.invoke(admin, capapi.CapCheckinRegister, map[string]any{"child_id": tt.child, "service_date": tt.day})
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			inv := wantInvalid(t, err, "service_date")
			if !strings.Contains(inv.Reason, tt.reason) {
				t.Errorf("reason %q, want %q", inv.Reason, tt.reason)
			}
			if after := e.count(`SELECT count(*) FROM checkins`); after != before {
				t.Errorf("a refused check-in wrote %d rows", after-before)
			}
		})
	}
}

// TestDuplicateEnrollmentIsAConflict: the same child (name, birth date, guardian phone in any
// format) enrolled twice is refused as a conflict that names the existing child only to a caller
// with children:read; nothing of the second call is written; a different birth date is another
// child; another church may enroll the same child.
func TestDuplicateEnrollmentIsAConflict(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	birth := todaySP().AddDays(-4 * 365).String()
	first := mustInvoke[capapi.ChildEnrollOutput](e, a.as(store.RoleCadastro), capapi.CapChildEnroll, enrollArgs(birth))
	counts := func() int {
		return e.count(`SELECT (SELECT count(*) FROM children) + (SELECT count(*) FROM guardians) + (SELECT count(*) FROM consent_records)`)
	}
	before := counts()

	again := enrollArgs(birth)
	again["name"] = "  " + strings.ToUpper(enrollChildName) + " "
	again["guardian"].(map[string]any)["phone"] = "(11) 90000-4343" // the same number, another form
	_, err := e.invoke(a.as(store.RoleAdmin), capapi.CapChildEnroll, again)
	var c *errs.Conflict
	if !errors.As(err, &c) || !strings.Contains(c.Reason, first.ChildID.String()) {
		t.Fatalf("second enrollment: %v, want a conflict naming child %s", err, first.ChildID)
	}

	// A caller without children:read learns that it exists, not its id.
	p, _ := principal.From(a.as(store.RoleAdmin))
	p.Scopes = without(p.Scopes, scopes.ChildrenRead)
	_, err = e.invoke(principal.With(context.Background(), p), capapi.CapChildEnroll, again)
	if !errors.As(err, &c) || strings.Contains(c.Reason, first.ChildID.String()) {
		t.Fatalf("without children:read: %v, want a conflict without the id", err)
	}
	if after := counts(); after != before {
		t.Errorf("refused enrollments wrote %d rows", after-before)
	}

	other := enrollArgs(todaySP().AddDays(-3 * 365).String())
	if _, err := e.invoke(a.as(store.RoleAdmin), capapi.CapChildEnroll, other); err != nil {
		t.Errorf("another birth date is another child: %v", err)
	}
	if _, err := e.invoke(e.b.as(store.RoleAdmin), capapi.CapChildEnroll, enrollArgs(birth)); err != nil {
		t.Errorf("another church: %v", err)
	}
}

// TestTodayIsTheChurchsDay: "today" (the default service day of a check-in) is the day in the
// church's own time zone, not the server's nor São Paulo's.
func TestTodayIsTheChurchsDay(t *testing.T) {
	t.Parallel()
	// 03:30 UTC: 00:30 in São Paulo (UTC-3), still 22:30 the evening before in Rio Branco (UTC-5).
	now := time.Date(2026, 6, 7, 3, 30, 0, 0, time.UTC)
	e := newEnv(t, logic.WithClock(func() time.Time { return now }))
	ctx := context.Background()
	if _, err := e.st.Pool().Exec(ctx, `UPDATE churches SET time_zone = 'America/Rio_Branco' WHERE id = $1`, e.a.id); err != nil {
		t.Fatal(err)
	}
	got := mustInvoke[capapi.CheckinRegisterOutput](e, e.a.as(store.RoleAdmin), capapi.CapCheckinRegister, map[string]any{"child_id": e.a.k2})
	if got.ServiceDate.String() != "2026-06-06" {
		t.Errorf("service day in Rio Branco = %s, want 2026-06-06", got.ServiceDate)
	}
	got = mustInvoke[capapi.CheckinRegisterOutput](e, e.b.as(store.RoleAdmin), capapi.CapCheckinRegister, map[string]any{"child_id": e.b.k2})
	if got.ServiceDate.String() != "2026-06-07" {
		t.Errorf("service day in São Paulo = %s, want 2026-06-07", got.ServiceDate)
	}
}
