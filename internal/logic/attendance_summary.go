package logic

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
)

// capgen:capability attendance_summary

// Range defaults and limit of attendance_summary (the spec's description promises them).
const (
	defaultAttendanceDays = 30  // from defaults to 30 days before to
	maxAttendanceDays     = 366 // days per read, both ends counted
)

// AttendanceSummary implements resource "neemias://attendance/summary{?from,to,class_id}" (scope attendance:read).
//
// to defaults to today in the church's time zone, from to 30 days before to; the range holds at most
// 366 days, both ends included. A class_id the caller may not use (unknown, another church's,
// or not a volunteer's own) is an *errs.Invalid rather than an empty answer, so the agent
// learns its mistake. The answer leads with the different children (AttendanceChildren: a
// child of 4 Sundays is one child), per class too (AttendanceClasses), states the church's today, names the nearest service day
// with data when the range has none, and says which classes it covers when the caller sees
// only some. Counts only, so no audit entry.
func (s *Service) AttendanceSummary(ctx context.Context, in *capapi.AttendanceSummaryInput) (*capapi.AttendanceSummaryOutput, error) {
	var out *capapi.AttendanceSummaryOutput
	c := newCall(capapi.CapAttendanceSummary, in)
	err := s.run(ctx, c, func(ctx context.Context, q *db.Queries, w who, _ *txState) error {
		today, zone, err := s.churchClock(ctx, q, w.ChurchID)
		if err != nil {
			return err
		}
		from, to, err := attendanceRange(in.From, in.To, today)
		if err != nil {
			return err
		}
		if in.ClassID != nil {
			_, err := q.GetClass(ctx, db.GetClassParams{
				ChurchID: w.ChurchID, ClassID: *in.ClassID, Role: w.Role, UserID: w.UserID,
			})
			if errors.Is(notFound(err), errs.ErrNotFound) {
				return &errs.Invalid{Field: "class_id", Reason: "is not a class you may see; omit it for all your classes"}
			}
			if err != nil {
				return err
			}
		}
		rows, err := q.AttendanceSummary(ctx, db.AttendanceSummaryParams{
			ChurchID: w.ChurchID, Role: w.Role, UserID: w.UserID,
			FromValue: from.Time(), ToValue: to.Time(), ClassID: in.ClassID,
		})
		if err != nil {
			return err
		}
		out = &capapi.AttendanceSummaryOutput{
			From: from, To: to, Today: today, TimeZone: zone,
			Days: make([]capapi.AttendanceSummaryOutputDaysItem, 0, len(rows)),
		}
		for _, r := range rows {
			out.Days = append(out.Days, capapi.AttendanceSummaryOutputDaysItem{
				Date: capability.DateOf(r.ServiceDate), ClassName: r.ClassName, Checkins: r.Checkins,
			})
			out.TotalCheckins += r.Checkins
		}
		byClass, err := q.AttendanceClasses(ctx, db.AttendanceClassesParams{
			ChurchID: w.ChurchID, Role: w.Role, UserID: w.UserID, FromDay: from.Time(), ToDay: to.Time(), ClassID: in.ClassID,
		})
		if err != nil {
			return err
		}
		out.Classes = make([]capapi.AttendanceSummaryOutputClassesItem, 0, len(byClass))
		for _, r := range byClass {
			out.Classes = append(out.Classes, capapi.AttendanceSummaryOutputClassesItem{
				ClassID: r.ClassID, ClassName: r.ClassName, Children: r.Children, Checkins: r.Checkins,
			})
		}
		if out.Children, err = q.AttendanceChildren(ctx, db.AttendanceChildrenParams{
			ChurchID: w.ChurchID, Role: w.Role, UserID: w.UserID, FromDay: from.Time(), ToDay: to.Time(), ClassID: in.ClassID,
		}); err != nil {
			return err
		}
		if len(rows) == 0 {
			near, err := q.AttendanceNearestDay(ctx, db.AttendanceNearestDayParams{
				ChurchID: w.ChurchID, Role: w.Role, UserID: w.UserID, FromDay: from.Time(), ToDay: to.Time(), ClassID: in.ClassID,
			})
			if err != nil {
				return err
			}
			if len(near) == 1 {
				d := capability.DateOf(near[0])
				out.NearestDay = &d
			}
		}
		if in.ClassID == nil {
			cov, err := q.AttendanceCoverage(ctx, db.AttendanceCoverageParams{ChurchID: w.ChurchID, Role: w.Role, UserID: w.UserID})
			if err != nil {
				return err
			}
			if cov.Hidden > 0 {
				covers := "your classes: " + strings.Join(cov.Visible, ", ")
				out.Covers = &covers
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// attendanceRange applies the defaults and limits of attendance_summary's range.
func attendanceRange(fromIn, toIn *capability.Date, today capability.Date) (from, to capability.Date, err error) {
	to = today
	if toIn != nil {
		to = *toIn
	}
	from = to.AddDays(-defaultAttendanceDays)
	if fromIn != nil {
		from = *fromIn
	}
	if from.After(to) {
		return from, to, &errs.Invalid{Field: "from", Reason: fmt.Sprintf("must not be after to (%s)", to)}
	}
	if days := daysBetween(from, to) + 1; days > maxAttendanceDays {
		return from, to, &errs.Invalid{Field: "from", Reason: fmt.Sprintf(
			"the range from %s to %s spans %d days; at most %d per read, so split it or move from to %s or later",
			from, to, days, maxAttendanceDays, to.AddDays(-(maxAttendanceDays - 1)))}
	}
	return from, to, nil
}

// daysBetween counts the days from a to b (negative when b is before a).
func daysBetween(a, b capability.Date) int {
	return int(b.Time().Sub(a.Time()).Hours() / 24)
}
