package logic_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/logic"
	"github.com/neemias/neemias-mcp/internal/store"
)

// TestWrongPickupCodesAreLimitedPerUser: wrong codes spread over several check-ins (each below
// its own lock) spend the user's budget of logic.PickupAttemptLimit.Burst; then the user's next
// wrong code locks its check-in at once, while their right code still releases a child and
// another user's wrong code is an ordinary attempt.
func TestWrongPickupCodesAreLimitedPerUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	admin := a.as(store.RoleAdmin)
	n := 0
	// The adult is on each child's list (g1 for k1 and k2, g2 for k3): only the code is wrong.
	for _, ck := range []struct {
		id    any
		adult string
	}{{a.ck1, a.g1Name}, {a.ck2, a.g1Name}, {a.ck3, "Responsável Dois"}} {
		for range store.MaxPickupAttempts - 1 {
			if n == logic.PickupAttemptLimit.Burst {
				break
			}
			_, err := e.invoke(admin, capapi.CapCheckoutRegister, map[string]any{"checkin_id": ck.id, "pickup_code": wrongCode(fixtureCode), "picked_up_by": ck.adult})
			wantInvalid(t, err, "pickup_code")
			n++
		}
	}
	if s := e.checkinState(a.ck3); s.failed != 2 || s.locked {
		t.Fatalf("ck3 after the budget: %+v, want 2 wrong attempts", s)
	}
	// Another user's budget is their own: an ordinary attempt, 2 more before the lock.
	_, err := e.invoke(a.as(store.RoleVoluntario), capapi.CapCheckoutRegister, map[string]any{"checkin_id": a.ck3, "pickup_code": wrongCode(fixtureCode), "picked_up_by": "Responsável Dois"})
	if inv := wantInvalid(t, err, "pickup_code"); !strings.Contains(inv.Reason, "2 more") {
		t.Errorf("another user's wrong code: %v", err)
	}
	// The spent budget: the next wrong code locks ck3 at once, the 4th attempt on it.
	_, err = e.invoke(admin, capapi.CapCheckoutRegister, map[string]any{"checkin_id": a.ck3, "pickup_code": wrongCode(fixtureCode), "picked_up_by": "Responsável Dois"})
	var c *errs.Conflict
	if !errors.As(err, &c) || !strings.Contains(c.Reason, "too many wrong pick-up codes") || !strings.Contains(c.Reason, "locked") {
		t.Fatalf("after %d wrong codes, another: %v", n, err)
	}
	if s := e.checkinState(a.ck3); !s.locked || s.closed || s.failed != 4 {
		t.Errorf("ck3 after a wrong code past the budget: %+v, want locked", s)
	}
	// A right code is never refused by the budget.
	if _, err := e.invoke(admin, capapi.CapCheckoutRegister, map[string]any{"checkin_id": a.ck1, "pickup_code": fixtureCode, "picked_up_by": a.g1Name}); err != nil {
		t.Errorf("the right code after the budget is spent: %v", err)
	}
	if s := e.checkinState(a.ck1); !s.closed {
		t.Errorf("ck1 not released by its code: %+v", s)
	}
}
