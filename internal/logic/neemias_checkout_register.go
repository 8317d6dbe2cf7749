package logic

import (
	"context"
	"fmt"
	"strings"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/store"
)

// capgen:capability neemias_checkout_register

// lockedReason is what a caller hears about a locked check-in.
const lockedReason = "the check-in is locked after too many wrong pick-up codes; a staff member must release the child in person"

// CheckoutRegister implements tool "neemias_checkout_register" (scope checkins:write).
//
// The check-in row is locked (SELECT ... FOR UPDATE) while the code is compared in constant
// time (store.CheckPickupCode). A wrong code changes nothing but the failed-attempt counter,
// which commits although the call fails; at store.MaxPickupAttempts the check-in locks and only
// staff can release the child outside the tool. Error messages never quote the code. A
// check-in already closed is an idempotent success that returns the earlier pick-up, once the
// code is right. Every attempt is audited; wrong codes as denied checkout.wrong_code.
func (s *Service) CheckoutRegister(ctx context.Context, in *capapi.CheckoutRegisterInput) (*capapi.CheckoutRegisterOutput, error) {
	var out *capapi.CheckoutRegisterOutput
	if err := s.pickupAllowed(ctx); err != nil {
		return nil, err
	}
	wrong := false
	code := strings.TrimSpace(in.PickupCode)
	c := newCall(capapi.CapCheckoutRegister, in, in.CheckinID)
	err := s.run(ctx, c, func(ctx context.Context, q *db.Queries, w who, st *txState) error {
		out, wrong = nil, false
		ck, err := q.GetCheckinForCheckout(ctx, db.GetCheckinForCheckoutParams{
			ChurchID: w.ChurchID, CheckinID: in.CheckinID, Role: w.Role, UserID: w.UserID,
		})
		if err != nil {
			return notFound(err)
		}
		st.add(ck.ChildID)
		if ck.LockedAt != nil {
			st.action, st.outcome = "checkout.locked", audit.Denied
			return &errs.Conflict{Reason: lockedReason}
		}
		if !store.CheckPickupCode(ck.PickupCodeSalt, ck.PickupCodeHash, code) {
			st.action, st.outcome = "checkout.wrong_code", audit.Denied
			wrong = true
			if ck.CheckedOutAt != nil {
				// Closed already: nothing left to protect by counting.
				return &errs.Invalid{Field: "pickup_code", Reason: "is not the code issued for this check-in"}
			}
			failed, err := q.RecordFailedPickup(ctx, db.RecordFailedPickupParams{
				MaxAttempts: store.MaxPickupAttempts, ChurchID: w.ChurchID, CheckinID: ck.ID,
			})
			if err != nil {
				return notFound(err) // we hold the row lock, so the row is there: an internal error
			}
			st.commitOnError = true
			if failed.LockedAt != nil {
				st.action = "checkout.wrong_code.locked"
				return &errs.Conflict{Reason: "wrong pick-up code; " + lockedReason}
			}
			left := store.MaxPickupAttempts - int(failed.FailedPickupAttempts)
			return &errs.Invalid{Field: "pickup_code", Reason: fmt.Sprintf(
				"is not the code issued for this check-in; %d more wrong attempt(s) lock it", left)}
		}
		if ck.CheckedOutAt != nil {
			st.action = "checkout.repeat"
			out = &capapi.CheckoutRegisterOutput{CheckinID: ck.ID, ChildID: ck.ChildID, CheckedOutAt: *ck.CheckedOutAt}
			return nil
		}
		done, err := q.CompleteCheckout(ctx, db.CompleteCheckoutParams{
			CheckedOutBy: w.UserID, ChurchID: w.ChurchID, CheckinID: ck.ID,
		})
		if err != nil {
			return notFound(err)
		}
		if done.CheckedOutAt == nil {
			return fmt.Errorf("logic: check-out of %s returned no time", ck.ID)
		}
		out = &capapi.CheckoutRegisterOutput{CheckinID: done.ID, ChildID: done.ChildID, CheckedOutAt: *done.CheckedOutAt}
		return nil
	})
	if wrong {
		s.pickupWrong(ctx)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}
