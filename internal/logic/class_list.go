package logic

import (
	"context"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/capability"
)

// capgen:capability class_list

// ClassList implements resource "neemias://checkin/classes{?date,class,child}" (scope checkins:read).
//
// Every class the caller may see (ClassListClasses, with its enrolled count), and one row per
// child the caller may see (ClassListChildren: row filters in SQL and RLS) in the class of
// that day's check-in or else their own, which the headcounts are counted from. The
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
		classes, err := q.ClassListClasses(ctx, db.ClassListClassesParams{ChurchID: w.ChurchID, UserID: w.UserID, Role: w.Role})
		if err != nil {
			return err
		}
		rows, err := q.ClassListChildren(ctx, db.ClassListChildrenParams{
			ChurchID: w.ChurchID, UserID: w.UserID, Role: w.Role, ServiceDate: day.Time(),
		})
		if err != nil {
			return err
		}
		out = &capapi.ClassListOutput{Date: day, Today: today, TimeZone: zone, Classes: []capapi.ClassListOutputClassesItem{}}
		// The classes in the query's order; a class only a check-in brought in (a guardian's
		// child checked in to another room) after them.
		index := map[uuid.UUID]int{}
		add := func(cl db.ClassListClassesRow) {
			index[cl.ClassID] = len(out.Classes)
			out.Classes = append(out.Classes, capapi.ClassListOutputClassesItem{
				ClassID: cl.ClassID, ClassName: cl.ClassName, Enrolled: cl.Enrolled, Volunteers: cl.Volunteers,
				SoftCapacity: limit(cl.SoftCapacity), FirmCapacity: limit(cl.FirmCapacity), ChildrenPerVolunteer: limit(cl.ChildrenPerVolunteer),
				Children: []capapi.ClassListOutputClassesItemChildrenItem{},
			})
		}
		for _, cl := range classes {
			add(cl)
		}
		keep := childFilter(in.Child, rows)
		ids := make([][]uuid.UUID, len(out.Classes)) // the listed children's ids, per class, for the audit
		for _, row := range rows {
			i, ok := index[row.ClassID]
			if !ok {
				add(db.ClassListClassesRow{ClassID: row.ClassID, ClassName: row.ClassName})
				i = index[row.ClassID]
				ids = append(ids, nil)
			}
			cl := &out.Classes[i]
			if row.CheckinID != nil {
				cl.CheckedIn++
				if row.CheckedOutAt == nil {
					cl.Headcount++
				}
			}
			if keep(row) {
				cl.Children = append(cl.Children, classListItem(row))
				ids[i] = append(ids[i], row.ChildID)
			}
		}
		var kept []capapi.ClassListOutputClassesItem
		var keptIDs [][]uuid.UUID
		for i, cl := range out.Classes {
			if in.Class != nil && !namesClass(*in.Class, cl.ClassID, cl.ClassName) || in.Child != nil && len(cl.Children) == 0 {
				continue
			}
			kept = append(kept, cl)
			keptIDs = append(keptIDs, ids[i])
			out.TotalChildren += int64(len(cl.Children))
		}
		out.TotalClasses = int64(len(kept))
		sizes := make([]int, len(kept))
		for i, cl := range kept {
			sizes[i] = len(cl.Children)
		}
		first, end, err := classPage(sizes, in.Limit, in.Offset, defaultClassListLimit)
		if err != nil {
			return err
		}
		out.Classes = append([]capapi.ClassListOutputClassesItem{}, kept[first:end]...)
		for _, page := range keptIDs[first:end] {
			st.add(page...)
		}
		if end < len(kept) {
			next := int64(end)
			out.NextOffset = &next
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// defaultClassListLimit is the class list's page size in children when limit is absent: what
// a 200-child Sunday's first page holds within a model's budget (docs/tool-output.md).
const defaultClassListLimit = 120

// limit is a class limit as the output holds it (absent when none).
func limit(v *int32) *int64 {
	if v == nil {
		return nil
	}
	n := int64(*v)
	return &n
}

func classListItem(r db.ClassListChildrenRow) capapi.ClassListOutputClassesItemChildrenItem {
	item := capapi.ClassListOutputClassesItemChildrenItem{
		Handle: r.Handle, Label: r.ChildName, Status: "not_here",
		CheckinID: r.CheckinID, CheckedInAt: r.CheckedInAt, PickedUpAt: r.CheckedOutAt,
		Allergies: r.Allergies, MedicalNotes: r.MedicalNotes, // left out by Finalize without health:read
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

// childFilter keeps the rows of a first name, or of the first name of the child a handle
// names (so its label comes out as in the whole list: short names differ only among children
// of one first name); every row when child is absent.
func childFilter(child *string, rows []db.ClassListChildrenRow) func(db.ClassListChildrenRow) bool {
	if child == nil {
		return func(db.ClassListChildrenRow) bool { return true }
	}
	first := firstWord(capability.FoldName(*child))
	if handle := normalizeHandle(*child); len(handle) == 6 {
		for _, r := range rows {
			if r.Handle == handle {
				first = firstWord(capability.FoldName(r.ChildName))
				break
			}
		}
	}
	return func(r db.ClassListChildrenRow) bool {
		return firstWord(capability.FoldName(r.ChildName)) == first
	}
}
