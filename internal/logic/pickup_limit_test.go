package logic_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/logic"
	"github.com/neemias/neemias-mcp/internal/ratelimit"
	"github.com/neemias/neemias-mcp/internal/store"
)

// TestWrongPickupCodesAreLimitedPerUser: wrong codes spread over several check-ins (each below
// its own lock) exhaust the user's budget of logic.PickupAttemptLimit.Burst; then even a right
// code is refused for that user, not for another.
func TestWrongPickupCodesAreLimitedPerUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t, logic.WithPickupLimiter(&ratelimit.Memory{}))
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
	_, err := e.invoke(admin, capapi.CapCheckoutRegister, map[string]any{"checkin_id": a.ck3, "pickup_code": fixtureCode, "picked_up_by": "Responsável Dois"})
	var c *errs.Conflict
	if !errors.As(err, &c) || !strings.Contains(c.Reason, "too many wrong pick-up codes") || !strings.Contains(c.Reason, "retry after") {
		t.Fatalf("after %d wrong codes, the right one: %v", n, err)
	}
	if s := e.checkinState(a.ck3); s.closed || s.locked {
		t.Errorf("the refused attempt changed the check-in: %+v", s)
	}
	if _, err := e.invoke(a.as(store.RoleVoluntario), capapi.CapCheckoutRegister, map[string]any{"checkin_id": a.ck3, "pickup_code": fixtureCode, "picked_up_by": "Responsável Dois"}); err != nil {
		t.Errorf("another user's right code: %v", err)
	}
}
