package logic

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/store"
)

// capgen:capability neemias_checkout_register

// lockedReason is what a caller hears about a locked check-in.
const lockedReason = "the check-in is locked after too many wrong pick-up codes; a staff member must release the child in person"

// CheckoutRegister implements tool "neemias_checkout_register" (scope checkins:write).
//
// The check-in is named by id, or by the child as the class list shows them (resolve.go). The
// adult taking the child is checked before the code: an adult under a restriction is refused
// whatever the code (app_pickup_restriction sees restrictions for every role, so a guardian
// releasing the child cannot bypass them) and an adult not on the child's list is refused;
// both are audited as denied (checkout.not_authorized, checkout.not_listed) and change nothing.
// The check-in row is locked (SELECT ... FOR UPDATE) while the code is compared in constant
// time (store.CheckPickupCode, under the key the hash was made with), after a unit of the
// caller's wrong-code budget (PickupAttemptLimit) has been taken in the same transaction; a
// right code gives it back. A wrong code changes nothing but the failed-attempt counter and the
// budget, which commit although the call fails; at store.MaxPickupAttempts the check-in locks
// and only staff can release the child outside the tool, and a wrong code that finds the
// budget spent locks it at once (checkout.wrong_code.budget). A spent budget never refuses a
// right code. Error messages never quote the code, and names
// and notes go only to the caller (errs Detail), never to a log. A check-in already closed is
// an idempotent success that returns the earlier pick-up, once the code is right. The
// releasing user is the caller (checked_out_by).
func (s *Service) CheckoutRegister(ctx context.Context, in *capapi.CheckoutRegisterInput) (*capapi.CheckoutRegisterOutput, error) {
	if err := oneOf("child", in.Child != nil, "checkin_id", in.CheckinID != nil, true); err != nil {
		return nil, err
	}
	if _, err := callerOf(ctx); err == nil && s.Store != nil {
		// Read the keys before the transaction, not in it (store.PickupKeys).
		if _, err := s.pickupKeys().Active(ctx); err != nil {
			return nil, err
		}
	}
	var out *capapi.CheckoutRegisterOutput
	code := strings.TrimSpace(in.PickupCode)
	var targets []uuid.UUID
	if in.CheckinID != nil {
		targets = append(targets, *in.CheckinID)
	}
	c := newCall(capapi.CapCheckoutRegister, in, targets...)
	err := s.run(ctx, c, func(ctx context.Context, q *db.Queries, w who, st *txState) error {
		out = nil
		checkinID := uuid.Nil
		if in.CheckinID != nil {
			checkinID = *in.CheckinID
		} else {
			today, err := s.churchToday(ctx, q, w.ChurchID)
			if err != nil {
				return err
			}
			children, err := dayChildren(ctx, q, w, today)
			if err != nil {
				return err
			}
			found, err := pick(children, childQuery{
				field: "child", text: *in.Child, fullNames: w.Scopes.Has(scopes.ChildrenRead), checkedIn: true,
			})
			if err != nil {
				return err
			}
			checkinID = *found.CheckinID
			st.add(checkinID)
		}
		ck, err := q.GetCheckinForCheckout(ctx, db.GetCheckinForCheckoutParams{
			ChurchID: w.ChurchID, CheckinID: checkinID, Role: w.Role, UserID: w.UserID,
		})
		if err != nil {
			return notFound(err)
		}
		st.add(ck.ChildID)
		if ck.LockedAt != nil {
			st.action, st.outcome = "checkout.locked", audit.Denied
			return &errs.Conflict{Reason: lockedReason}
		}
		if ck.CheckedOutAt != nil {
			right, over, err := s.checkPickupCode(ctx, q, ck, code)
			if err != nil {
				return err
			}
			if !right {
				// Closed already: nothing left to lock, but the guess counts against the caller.
				st.action, st.outcome = "checkout.wrong_code", audit.Denied
				if over {
					st.action = "checkout.wrong_code.budget"
					return &errs.Conflict{Reason: "too many wrong pick-up codes from this account; wait before trying another"}
				}
				st.commitOnError = true
				return &errs.Invalid{Field: "pickup_code", Reason: "is not the code issued for this check-in"}
			}
			st.action = "checkout.repeat"
			out = checkoutOutput(ck, *ck.CheckedOutAt, deref(ck.PickedUpByName), ck.ReleasedBy, true)
			return nil
		}
		adult, err := s.pickupAdult(ctx, q, w, st, ck, in.PickedUpBy)
		if err != nil {
			return err
		}
		right, over, err := s.checkPickupCode(ctx, q, ck, code)
		if err != nil {
			return err
		}
		if !right {
			st.action, st.outcome = "checkout.wrong_code", audit.Denied
			lockAt := store.MaxPickupAttempts
			if over {
				lockAt = 1 // past the account's budget a wrong code locks the check-in at once
			}
			failed, err := q.RecordFailedPickup(ctx, db.RecordFailedPickupParams{
				MaxAttempts: int32(lockAt), ChurchID: w.ChurchID, CheckinID: ck.ID,
			})
			if err != nil {
				return notFound(err) // we hold the row lock, so the row is there: an internal error
			}
			st.commitOnError = true
			if over {
				st.action = "checkout.wrong_code.budget"
				return &errs.Conflict{Reason: "wrong pick-up code; this account has entered too many wrong pick-up codes, so the check-in is now locked: a staff member must release the child in person"}
			}
			if failed.LockedAt != nil {
				st.action = "checkout.wrong_code.locked"
				return &errs.Conflict{Reason: "wrong pick-up code; " + lockedReason}
			}
			left := store.MaxPickupAttempts - int(failed.FailedPickupAttempts)
			return &errs.Invalid{Field: "pickup_code", Reason: fmt.Sprintf(
				"is not the code issued for this check-in; %d more wrong attempt(s) lock it", left)}
		}
		params := db.CompleteCheckoutParams{
			CheckedOutBy: w.UserID, ChurchID: w.ChurchID, CheckinID: ck.ID, PickedUpByName: adult.Name,
		}
		if adult.Kind == adultGuardian {
			params.PickedUpByGuardian = &adult.AdultID
		} else {
			params.PickedUpByAdult = &adult.AdultID
		}
		done, err := q.CompleteCheckout(ctx, params)
		if err != nil {
			return notFound(err)
		}
		if done.CheckedOutAt == nil {
			return fmt.Errorf("logic: check-out of %s returned no time", ck.ID)
		}
		out = checkoutOutput(ck, *done.CheckedOutAt, adult.Name, done.ReleasedBy, false)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// adultGuardian is the kind of a pick-up list entry that is one of the child's guardians.
const adultGuardian = "guardian"

// pickupAdult is the adult of the child's pick-up list that name names, or the refusal: a
// restricted adult (with the restriction's note for the caller), or a name not on the list
// (with the list's names when the caller may read it). Both are audited as denied.
func (s *Service) pickupAdult(ctx context.Context, q *db.Queries, w who, st *txState, ck db.GetCheckinForCheckoutRow, name string) (db.PickupAdultsForCheckoutRow, error) {
	r, err := q.PickupRestriction(ctx, db.PickupRestrictionParams{ChildID: ck.ChildID, AdultName: name, Role: w.Role})
	if err != nil {
		return db.PickupAdultsForCheckoutRow{}, err
	}
	if r.Restricted {
		st.action, st.outcome = "checkout.not_authorized", audit.Denied
		refusal := &errs.Conflict{Reason: "this adult is NOT authorized to take the child home; do not release the child, keep them in class and call a coordinator"}
		if r.Note != "" { // empty for a guardian, who is not shown restrictions
			refusal.Detail = "the note for the volunteer: " + r.Note
		}
		return db.PickupAdultsForCheckoutRow{}, refusal
	}
	adults, err := q.PickupAdultsForCheckout(ctx, db.PickupAdultsForCheckoutParams{
		ChurchID: w.ChurchID, ChildID: ck.ChildID, ClassID: ck.ClassID, UserID: w.UserID, Role: w.Role,
	})
	if err != nil {
		return db.PickupAdultsForCheckoutRow{}, err
	}
	want := capability.FoldName(name)
	var byFirst []db.PickupAdultsForCheckoutRow
	for _, a := range adults {
		full := capability.FoldName(a.Name)
		if full == want {
			return a, nil
		}
		if !strings.Contains(want, " ") && firstWord(full) == want {
			byFirst = append(byFirst, a)
		}
	}
	if len(byFirst) == 1 {
		return byFirst[0], nil
	}
	st.action, st.outcome = "checkout.not_listed", audit.Denied
	names := ""
	if w.Scopes.Has(scopes.PickupsRead) { // a caller who may read the list is shown it
		list := make([]string, len(adults))
		for i, a := range adults {
			list[i] = a.Name
		}
		names = "the list: " + strings.Join(list, "; ")
	}
	reason := "is not on the child's list of adults who may take them home; check the name (read neemias_pickup_adults), or ask a coordinator to add the adult"
	if len(byFirst) > 1 {
		reason = fmt.Sprintf("matches %d adults on the child's list; give the full name", len(byFirst))
	}
	return db.PickupAdultsForCheckoutRow{}, &errs.Invalid{Field: "picked_up_by", Reason: reason, Detail: names}
}

func checkoutOutput(ck db.GetCheckinForCheckoutRow, at time.Time, by, releasedBy string, repeat bool) *capapi.CheckoutRegisterOutput {
	return &capapi.CheckoutRegisterOutput{
		CheckinID:         ck.ID,
		ChildID:           ck.ChildID,
		ChildHandle:       ck.Handle,
		ChildLabel:        ck.ChildName,
		ClassName:         ck.ClassName,
		CheckedOutAt:      at,
		PickedUpBy:        by,
		ReleasedBy:        releasedBy,
		AlreadyCheckedOut: repeat,
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
