package logic

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/store"
)

// capgen:capability neemias_checkin_register

// CheckinRegister implements tool "neemias_checkin_register" (scope checkins:write).
//
// The child is named by id, or as the class list shows them (handle, label, or first name
// narrowed by class: resolve.go), so "check in Ana in Maternal" is one call when only one Ana
// is there and an ambiguous name is refused with the candidates. Idempotent per child and
// service day: the unique key (child_id, service_date) decides, with INSERT ... ON CONFLICT
// DO NOTHING, so concurrent duplicates converge on one row; every call but the one that
// inserted it gets that row back with already_checked_in and no pick-up code. The code is
// drawn here, returned once (a handoff field: the MCP layer gives it to the person, not the
// model) and stored only as a salted HMAC under the active pick-up key (store.PickupKeys, read
// before the transaction), whose id the row keeps. The child's label is its full name; the generated
// Finalize shortens it for callers without children:read. A child the caller may not see is
// errs.ErrNotFound.
func (s *Service) CheckinRegister(ctx context.Context, in *capapi.CheckinRegisterInput) (*capapi.CheckinRegisterOutput, error) {
	if err := oneOf("child", in.Child != nil, "child_id", in.ChildID != nil, true); err != nil {
		return nil, err
	}
	if err := oneOf("class", in.Class != nil, "class_id", in.ClassID != nil, false); err != nil {
		return nil, err
	}
	var key store.PickupKey
	if _, err := callerOf(ctx); err == nil && s.Store != nil {
		k, err := s.pickupKeys().Active(ctx)
		if err != nil {
			return nil, err
		}
		key = k
	}
	var out *capapi.CheckinRegisterOutput
	var targets []uuid.UUID
	if in.ChildID != nil {
		targets = append(targets, *in.ChildID)
	}
	c := newCall(capapi.CapCheckinRegister, in, targets...)
	err := s.run(ctx, c, func(ctx context.Context, q *db.Queries, w who, st *txState) error {
		out = nil
		today, err := s.churchToday(ctx, q, w.ChurchID)
		if err != nil {
			return err
		}
		day := today
		if in.ServiceDate != nil {
			day = *in.ServiceDate
			if day.After(today) {
				return &errs.Invalid{Field: "service_date", Reason: fmt.Sprintf(
					"is in the future; check a child in on the day itself (today is %s)", today)}
			}
			if oldest := today.AddDays(-s.checkinWindow()); day.Before(oldest) {
				return &errs.Invalid{Field: "service_date", Reason: fmt.Sprintf(
					"is more than %d days ago; check-ins can be registered from %s to %s", s.checkinWindow(), oldest, today)}
			}
		}
		var class *checkinClassChoice
		if in.Class != nil {
			cl, err := pickClass(ctx, q, w, "class", *in.Class)
			if err != nil {
				return err
			}
			class = &checkinClassChoice{id: cl.ID, name: cl.Name}
		}
		childID := uuid.Nil
		if in.ChildID != nil {
			childID = *in.ChildID
		} else {
			children, err := dayChildren(ctx, q, w, day)
			if err != nil {
				return err
			}
			cq := childQuery{field: "child", text: *in.Child, fullNames: w.Scopes.Has(scopes.ChildrenRead)}
			if class != nil {
				cq.class = &class.id
			}
			found, err := pick(children, cq)
			if err != nil {
				if h := normalizeHandle(*in.Child); len(h) == 6 {
					at, rerr := q.RevokedChildByHandle(ctx, db.RevokedChildByHandleParams{
						ChurchID: w.ChurchID, Handle: h, Role: w.Role, UserID: w.UserID})
					if rerr == nil {
						return s.consentRevoked(ctx, q, w, at)
					}
				}
				return err
			}
			childID = found.ChildID
			st.add(childID)
		}
		child, err := q.GetChildForCheckin(ctx, db.GetChildForCheckinParams{
			ChurchID: w.ChurchID, ChildID: childID, Role: w.Role, UserID: w.UserID,
		})
		if err != nil {
			return notFound(err)
		}
		if child.ConsentRevokedAt != nil {
			return s.consentRevoked(ctx, q, w, *child.ConsentRevokedAt)
		}
		if day != today {
			// Today is never before a birth (enrollment refuses birth dates in the future);
			// an earlier day may be.
			born, err := q.ChildBirthDate(ctx, db.ChildBirthDateParams{ChurchID: w.ChurchID, ChildID: child.ID})
			if err != nil {
				return notFound(err)
			}
			if day.Before(capability.DateOf(born)) {
				return &errs.Invalid{Field: "service_date", Reason: "is before the child's birth date; check the day"}
			}
		}

		// A retry: the check-in exists already.
		prev, err := q.GetCheckinByChildDate(ctx, db.GetCheckinByChildDateParams{
			ChurchID: w.ChurchID, ChildID: child.ID, ServiceDate: day.Time(),
		})
		if err == nil {
			out = repeatedCheckin(prev, child)
			st.add(prev.ID)
			st.action = "checkin.repeat"
			return nil
		}
		if err = notFound(err); !errors.Is(err, errs.ErrNotFound) {
			return err
		}

		if class == nil {
			if class, err = checkinClass(ctx, q, w, in.ClassID, child); err != nil {
				return err
			}
		}
		warning, err := roomFor(ctx, q, w, class.id, day)
		if err != nil {
			return err
		}
		code, salt, hash, err := store.NewPickupCode(key)
		if err != nil {
			return err
		}
		if err := q.EnsureServiceDay(ctx, db.EnsureServiceDayParams{ChurchID: w.ChurchID, ServiceDate: day.Time()}); err != nil {
			return err
		}
		row, err := q.InsertCheckin(ctx, db.InsertCheckinParams{
			ChurchID: w.ChurchID, ChildID: child.ID, ClassID: class.id, ServiceDate: day.Time(),
			CheckedInBy: w.UserID, PickupCodeSalt: salt, PickupCodeHash: hash, PickupKeyID: &key.ID,
		})
		if err == nil {
			out = &capapi.CheckinRegisterOutput{
				CheckinID:   row.ID,
				ChildID:     row.ChildID,
				ChildHandle: child.Handle,
				ChildLabel:  child.Name,
				ClassID:     row.ClassID,
				ClassName:   class.name,
				ServiceDate: capability.DateOf(row.ServiceDate),
				CheckedInAt: row.CheckedInAt,
				PickupCode:  &code,
				// The door's alerts; Finalize leaves them out without health:read.
				Allergies: child.Allergies, MedicalNotes: child.MedicalNotes,
			}
			if warning != "" {
				out.CapacityWarning = &warning
			}
			st.add(row.ID)
			return nil
		}
		if err = notFound(err); !errors.Is(err, errs.ErrNotFound) {
			return err
		}

		// No row: a concurrent call inserted the check-in after our first look; ours waited
		// for it to commit, and this statement's fresh snapshot sees it.
		prev, err = q.GetCheckinByChildDate(ctx, db.GetCheckinByChildDateParams{
			ChurchID: w.ChurchID, ChildID: child.ID, ServiceDate: day.Time(),
		})
		if err != nil {
			if errors.Is(notFound(err), errs.ErrNotFound) {
				// It exists but row-level security hides it: another class than the caller's.
				return &errs.Conflict{Reason: "the child is already checked in that day, in a class you cannot see"}
			}
			return err
		}
		out = repeatedCheckin(prev, child)
		st.add(prev.ID)
		st.action = "checkin.repeat"
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// consentRevoked is the refusal to check in a child whose consent was revoked at (00107: the
// child is on no list until a new consent), with the day in the church's time zone.
func (s *Service) consentRevoked(ctx context.Context, q *db.Queries, w who, at time.Time) error {
	on := at.Format(time.DateOnly)
	if _, zone, err := s.churchClock(ctx, q, w.ChurchID); err == nil {
		if loc, err := time.LoadLocation(zone); err == nil {
			on = at.In(loc).Format(time.DateOnly)
		}
	}
	return &errs.Conflict{Reason: fmt.Sprintf("the guardian's consent for this child was revoked on %s, so the child is not checked in; "+
		"record a new consent first (neemias_child_enroll with the child and the guardian, or the roster import)", on)}
}

// oneOf checks that at most one of two alternative inputs is given, and, when required, one.
func oneOf(a string, hasA bool, b string, hasB bool, required bool) error {
	switch {
	case hasA && hasB:
		return &errs.Invalid{Field: a, Reason: fmt.Sprintf("give %s or %s, not both", a, b)}
	case required && !hasA && !hasB:
		return &errs.Invalid{Field: a, Reason: fmt.Sprintf("is required (or give %s)", b)}
	}
	return nil
}

// checkinClassChoice is the class a check-in goes to.
type checkinClassChoice struct {
	id   uuid.UUID
	name string
}

// checkinClass is the class to check in to: the one given by id, if the caller may use it,
// else the child's own.
func checkinClass(ctx context.Context, q *db.Queries, w who, given *uuid.UUID, child db.GetChildForCheckinRow) (*checkinClassChoice, error) {
	if given == nil {
		if child.ClassID == nil || child.ClassName == nil {
			return nil, &errs.Invalid{Field: "class", Reason: "the child is not placed in a class; give the class to check in to"}
		}
		return &checkinClassChoice{id: *child.ClassID, name: *child.ClassName}, nil
	}
	cl, err := q.GetClass(ctx, db.GetClassParams{ChurchID: w.ChurchID, ClassID: *given, Role: w.Role, UserID: w.UserID})
	if err != nil {
		if errors.Is(notFound(err), errs.ErrNotFound) {
			return nil, &errs.Invalid{Field: "class_id", Reason: "is not a class you may check children in to; omit it for the child's own class"}
		}
		return nil, err
	}
	return &checkinClassChoice{id: cl.ID, name: cl.Name}, nil
}

func repeatedCheckin(r db.GetCheckinByChildDateRow, child db.GetChildForCheckinRow) *capapi.CheckinRegisterOutput {
	return &capapi.CheckinRegisterOutput{
		CheckinID:        r.ID,
		ChildID:          r.ChildID,
		ChildHandle:      child.Handle,
		ChildLabel:       child.Name,
		ClassID:          r.ClassID,
		ClassName:        r.ClassName,
		ServiceDate:      capability.DateOf(r.ServiceDate),
		CheckedInAt:      r.CheckedInAt,
		AlreadyCheckedIn: true,
		Allergies:        child.Allergies,
		MedicalNotes:     child.MedicalNotes,
	}
}
