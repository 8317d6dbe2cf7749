package logic_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/logic"
	"github.com/neemias/neemias-mcp/internal/store"
)

// budgetCheckins adds n children to class c1 of church c, each with guardian g2 and checked in
// on c.day with fixtureCode (an unkeyed hash, like the fixture's), and returns the check-ins.
func (e *env) budgetCheckins(c church, n int) []uuid.UUID {
	e.t.Helper()
	salt := make([]byte, 16)
	hash := store.HashPickupCode(salt, fixtureCode)
	ids := make([]uuid.UUID, n)
	for i := range ids {
		child, _ := e.addChild(c, fmt.Sprintf("Criança Orçamento %d", i), c.c1, "")
		e.exec(`INSERT INTO guardian_children (guardian_id, child_id, church_id, relationship) VALUES ($1, $2, $3, 'father')`, c.g2, child, c.id)
		ids[i] = uuid.New()
		e.exec(`INSERT INTO checkins (id, church_id, child_id, class_id, service_date, checked_in_by, pickup_code_salt, pickup_code_hash)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, ids[i], c.id, child, c.c1, c.day.Time(), c.users[store.RoleCadastro], salt, hash)
	}
	return ids
}

// TestPickupBudgetIsTakenBeforeTheComparison (issue 24, finding 1): the account's budget of
// wrong pick-up codes is taken before a code is compared, atomically, so 20 wrong codes sent at
// once over 20 check-ins are compared as ordinary attempts at most logic.PickupAttemptLimit.Burst
// times; the rest find the budget spent and lock their check-in. Once it is spent a right code
// still releases its child (a token holder cannot stop a volunteer releasing children), and a
// right code gives its unit back.
func TestPickupBudgetIsTakenBeforeTheComparison(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	admin := a.as(store.RoleAdmin)
	ids := e.budgetCheckins(a, 22)
	guesses, spare := ids[:20], ids[20:]

	// Right codes first: each gives back the unit it took, so the whole budget is left.
	for _, id := range spare[:1] {
		mustInvoke[capapi.CheckoutRegisterOutput](e, admin, capapi.CapCheckoutRegister,
			map[string]any{"checkin_id": id, "pickup_code": fixtureCode, "picked_up_by": "Responsável Dois"})
	}

	var (
		mu             sync.Mutex
		plain, refused int
		other          []error
		wg             sync.WaitGroup
	)
	for _, id := range guesses {
		wg.Go(func() {
			_, err := e.invoke(admin, capapi.CapCheckoutRegister,
				map[string]any{"checkin_id": id, "pickup_code": wrongCode(fixtureCode), "picked_up_by": "Responsável Dois"})
			mu.Lock()
			defer mu.Unlock()
			var c *errs.Conflict
			inv, isInvalid := errs.AsInvalid(err)
			switch {
			case isInvalid && inv.Field == "pickup_code":
				plain++
			case errors.As(err, &c) && strings.Contains(c.Reason, "too many wrong pick-up codes"):
				refused++
			default:
				other = append(other, err)
			}
		})
	}
	wg.Wait()
	burst := logic.PickupAttemptLimit.Burst
	if plain != burst || refused != len(guesses)-burst || len(other) > 0 {
		t.Errorf("20 wrong codes at once: %d compared as ordinary attempts, %d refused by the budget, others %v; want %d and %d",
			plain, refused, other, burst, len(guesses)-burst)
	}
	var attempts, locked int
	for _, id := range guesses {
		s := e.checkinState(id)
		attempts += s.failed
		if s.locked {
			locked++
		}
		if s.closed {
			t.Errorf("a wrong code closed check-in %s", id)
		}
	}
	if attempts != len(guesses) || locked != len(guesses)-burst {
		t.Errorf("%d wrong attempts counted on the check-ins, %d locked; want %d and %d (a wrong code past the budget locks its check-in)",
			attempts, locked, len(guesses), len(guesses)-burst)
	}

	// The budget is spent: a right code still releases the child.
	out, err := e.invoke(admin, capapi.CapCheckoutRegister,
		map[string]any{"checkin_id": spare[1], "pickup_code": fixtureCode, "picked_up_by": "Responsável Dois"})
	if err != nil {
		t.Fatalf("a right code after the budget is spent: %v", err)
	}
	if o := out.(*capapi.CheckoutRegisterOutput); o.AlreadyCheckedOut || !e.checkinState(spare[1]).closed {
		t.Errorf("the right code did not release the child: %+v", o.LogValue())
	}
	if n := e.count(`SELECT count(*) FROM audit_log WHERE action = 'checkout.wrong_code.budget' AND outcome = 'denied'`); n != len(guesses)-burst {
		t.Errorf("%d wrong codes past the budget audited as checkout.wrong_code.budget, want %d", n, len(guesses)-burst)
	}
}
