package logic

import (
	"context"
	"strings"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/capability"
)

// capgen:capability class_list

// ClassList implements resource "neemias://checkin/classes{?date,class,child}" (scope checkins:read).
//
// One row per child the caller may see (ClassListChildren: row filters in SQL and RLS), in the
// class of that day's check-in or else their own, grouped by class in the query's order. The
// label is the full name here; the generated Finalize turns it into the spec's short_name for
// callers without children:read, over each class's whole list. That is why the child filter
// keeps every child of a first name (or one handle): the labels of those it keeps come out as
// in the unfiltered list, the ones a check-in by label is resolved against (resolve.go). A
// class given by name that the caller does not see is an empty list, not an error: the
// caller's classes are what the list shows. Audited like every read of child-level data.
func (s *Service) ClassList(ctx context.Context, in *capapi.ClassListInput) (*capapi.ClassListOutput, error) {
	var out *capapi.ClassListOutput
	c := newCall(capapi.CapClassList, in)
	err := s.run(ctx, c, func(ctx context.Context, q *db.Queries, w who, st *txState) error {
		today, zone, err := s.churchClock(ctx, q, w.ChurchID)
		if err != nil {
			return err
		}
		day := today
		if in.Date != nil {
			day = *in.Date
		}
		rows, err := q.ClassListChildren(ctx, db.ClassListChildrenParams{
			ChurchID: w.ChurchID, UserID: w.UserID, Role: w.Role, ServiceDate: day.Time(),
		})
		if err != nil {
			return err
		}
		out = &capapi.ClassListOutput{Date: day, Today: today, TimeZone: zone, Classes: []capapi.ClassListOutputClassesItem{}}
		keep := childFilter(in.Child)
		for i := 0; i < len(rows); {
			r := rows[i]
			cl := capapi.ClassListOutputClassesItem{ClassID: r.ClassID, ClassName: r.ClassName, Children: []capapi.ClassListOutputClassesItemChildrenItem{}}
			for ; i < len(rows) && rows[i].ClassID == cl.ClassID; i++ {
				row := rows[i]
				item := classListItem(row)
				if row.EnrolledHere {
					cl.Enrolled++
				}
				if row.CheckinID != nil {
					cl.CheckedIn++
					if row.CheckedOutAt == nil {
						cl.Headcount++
					}
				}
				if keep(row) {
					cl.Children = append(cl.Children, item)
					st.add(row.ChildID)
				}
			}
			if in.Class != nil && !sameClass(*in.Class, cl) {
				continue
			}
			if in.Child != nil && len(cl.Children) == 0 {
				continue
			}
			out.Classes = append(out.Classes, cl)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func classListItem(r db.ClassListChildrenRow) capapi.ClassListOutputClassesItemChildrenItem {
	item := capapi.ClassListOutputClassesItemChildrenItem{
		Handle: r.Handle, Label: r.ChildName, Status: "not_here",
		CheckinID: r.CheckinID, CheckedInAt: r.CheckedInAt, PickedUpAt: r.CheckedOutAt,
	}
	switch {
	case r.CheckedOutAt != nil:
		item.Status = "picked_up"
		item.PickedUpBy = r.PickedUpByName
		if r.ReleasedBy != "" {
			item.ReleasedBy = &r.ReleasedBy
		}
	case r.CheckinID != nil:
		item.Status = "checked_in"
	}
	return item
}

// childFilter keeps the rows of a first name or a handle; every row when child is absent.
func childFilter(child *string) func(db.ClassListChildrenRow) bool {
	if child == nil {
		return func(db.ClassListChildrenRow) bool { return true }
	}
	handle := normalizeHandle(*child)
	first := firstWord(capability.FoldName(*child))
	return func(r db.ClassListChildrenRow) bool {
		return r.Handle == handle || firstWord(capability.FoldName(r.ChildName)) == first
	}
}

// sameClass reports whether the class the caller named (name, accents and case aside, or id)
// is cl.
func sameClass(named string, cl capapi.ClassListOutputClassesItem) bool {
	return capability.FoldName(named) == capability.FoldName(cl.ClassName) ||
		strings.EqualFold(strings.TrimSpace(named), cl.ClassID.String())
}
