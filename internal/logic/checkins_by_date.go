package logic

import (
	"context"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
)

// capgen:capability checkins_by_date

// defaultCheckinsLimit is the page size of a day's check-ins when limit is absent: a page
// stays within a model's budget of 8,000 tokens (docs/tool-output.md).
const defaultCheckinsLimit = 200

// CheckinsByDate implements resource "neemias://checkins/{date}{?limit,offset}" (scope checkins:read).
//
// The check-ins of one service day that the caller may see: staff all of their church, a
// guardian their own children's, a volunteer their classes', grouped by class (the rows come
// ordered by class name). Each names the child by handle and label, not by id: the label is
// the full name here, and the generated Finalize turns it into the spec's short_name for
// callers without children:read, over each class's list (as the class list does). A long day
// comes in pages of whole classes (classPage) with the day's totals; the audit names the
// children of the page. It is child-level data, so every call is audited with the ids of the children listed.
func (s *Service) CheckinsByDate(ctx context.Context, in *capapi.CheckinsByDateInput) (*capapi.CheckinsByDateOutput, error) {
	var out *capapi.CheckinsByDateOutput
	c := newCall(capapi.CapCheckinsByDate, in)
	err := s.run(ctx, c, func(ctx context.Context, q *db.Queries, w who, st *txState) error {
		today, zone, err := s.churchClock(ctx, q, w.ChurchID)
		if err != nil {
			return err
		}
		rows, err := q.CheckinsByDate(ctx, db.CheckinsByDateParams{
			ChurchID: w.ChurchID, Role: w.Role, UserID: w.UserID, Date: in.Date.Time(),
		})
		if err != nil {
			return err
		}
		out = &capapi.CheckinsByDateOutput{Date: in.Date, Today: today, TimeZone: zone, Classes: []capapi.CheckinsByDateOutputClassesItem{}}
		var ids [][]uuid.UUID    // the children of each class, for the audit of the page
		for _, r := range rows { // ordered by class name, then check-in time
			if n := len(out.Classes); n == 0 || out.Classes[n-1].ClassName != r.ClassName {
				out.Classes = append(out.Classes, capapi.CheckinsByDateOutputClassesItem{ClassName: r.ClassName})
				ids = append(ids, nil)
			}
			last := len(out.Classes) - 1
			out.Classes[last].Checkins = append(out.Classes[last].Checkins, capapi.CheckinsByDateOutputClassesItemCheckinsItem{
				ChildHandle:  r.ChildHandle,
				ChildLabel:   r.ChildName,
				CheckedInAt:  r.CheckedInAt,
				CheckedOutAt: r.CheckedOutAt,
			})
			ids[last] = append(ids[last], r.ChildID)
		}
		out.Total, out.TotalClasses = int64(len(rows)), int64(len(out.Classes))
		sizes := make([]int, len(out.Classes))
		for i, cl := range out.Classes {
			sizes[i] = len(cl.Checkins)
		}
		first, end, err := classPage(sizes, in.Limit, in.Offset, defaultCheckinsLimit)
		if err != nil {
			return err
		}
		out.Classes = out.Classes[first:end]
		for _, page := range ids[first:end] {
			st.add(page...)
		}
		if end < len(sizes) {
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
