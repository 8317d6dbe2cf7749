package logic

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/store"
)

// capgen:capability neemias_checkin_register

// CheckinRegister implements tool "neemias_checkin_register" (scope checkins:write).
//
// Idempotent per child and service day: the unique key (child_id, service_date) decides, with
// INSERT ... ON CONFLICT DO NOTHING, so concurrent duplicates converge on one row; every call
// but the one that inserted it gets that row back with already_checked_in and no pick-up code.
// The code is drawn here, shown once in the output and stored only as a salted hash. The output
// names the child by id only. A child the caller may not see is errs.ErrNotFound.
func (s *Service) CheckinRegister(ctx context.Context, in *capapi.CheckinRegisterInput) (*capapi.CheckinRegisterOutput, error) {
	var out *capapi.CheckinRegisterOutput
	c := newCall(capapi.CapCheckinRegister, in, in.ChildID)
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
		child, err := q.GetChildForCheckin(ctx, db.GetChildForCheckinParams{
			ChurchID: w.ChurchID, ChildID: in.ChildID, Role: w.Role, UserID: w.UserID,
		})
		if err != nil {
			return notFound(err)
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
			out = repeatedCheckin(prev)
			st.add(prev.ID)
			st.action = "checkin.repeat"
			return nil
		}
		if err = notFound(err); !errors.Is(err, errs.ErrNotFound) {
			return err
		}

		classID, err := checkinClass(ctx, q, w, in.ClassID, child.ClassID)
		if err != nil {
			return err
		}
		code, salt, hash, err := store.NewPickupCode()
		if err != nil {
			return err
		}
		if err := q.EnsureServiceDay(ctx, db.EnsureServiceDayParams{ChurchID: w.ChurchID, ServiceDate: day.Time()}); err != nil {
			return err
		}
		row, err := q.InsertCheckin(ctx, db.InsertCheckinParams{
			ChurchID: w.ChurchID, ChildID: child.ID, ClassID: classID, ServiceDate: day.Time(),
			CheckedInBy: w.UserID, PickupCodeSalt: salt, PickupCodeHash: hash,
		})
		if err == nil {
			out = &capapi.CheckinRegisterOutput{
				CheckinID:   row.ID,
				ChildID:     row.ChildID,
				ClassID:     row.ClassID,
				ServiceDate: capability.DateOf(row.ServiceDate),
				CheckedInAt: row.CheckedInAt,
				PickupCode:  &code,
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
		out = repeatedCheckin(prev)
		st.add(prev.ID)
		st.action = "checkin.repeat"
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkinClass is the class to check in to: the one given, if the caller may use it, else the
// child's own.
func checkinClass(ctx context.Context, q *db.Queries, w who, given, own *uuid.UUID) (uuid.UUID, error) {
	if given == nil {
		if own == nil {
			return uuid.Nil, &errs.Invalid{Field: "class_id", Reason: "the child is not placed in a class; give the class to check in to"}
		}
		return *own, nil
	}
	cl, err := q.GetClass(ctx, db.GetClassParams{ChurchID: w.ChurchID, ClassID: *given, Role: w.Role, UserID: w.UserID})
	if err != nil {
		if errors.Is(notFound(err), errs.ErrNotFound) {
			return uuid.Nil, &errs.Invalid{Field: "class_id", Reason: "is not a class you may check children in to; omit it for the child's own class"}
		}
		return uuid.Nil, err
	}
	return cl.ID, nil
}

func repeatedCheckin(r db.GetCheckinByChildDateRow) *capapi.CheckinRegisterOutput {
	return &capapi.CheckinRegisterOutput{
		CheckinID:        r.ID,
		ChildID:          r.ChildID,
		ClassID:          r.ClassID,
		ServiceDate:      capability.DateOf(r.ServiceDate),
		CheckedInAt:      r.CheckedInAt,
		AlreadyCheckedIn: true,
	}
}
