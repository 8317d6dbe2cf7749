package logic

import (
	"context"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
)

// capgen:capability checkins_by_date

// CheckinsByDate implements resource "neemias://checkins/{date}" (scope checkins:read).
//
// The check-ins of one service day that the caller may see: staff all of their church, a
// guardian their own children's, a volunteer their classes', grouped by class (the rows come
// ordered by class name). Each names the child by handle and label, not by id: the label is
// the full name here, and the generated Finalize turns it into the spec's short_name for
// callers without children:read, over each class's list (as the class list does). It is child-level data, so every call is audited with the ids of the children listed.
func (s *Service) CheckinsByDate(ctx context.Context, in *capapi.CheckinsByDateInput) (*capapi.CheckinsByDateOutput, error) {
	var out *capapi.CheckinsByDateOutput
	c := newCall(capapi.CapCheckinsByDate, in)
	err := s.run(ctx, c, func(ctx context.Context, q *db.Queries, w who, st *txState) error {
		rows, err := q.CheckinsByDate(ctx, db.CheckinsByDateParams{
			ChurchID: w.ChurchID, Role: w.Role, UserID: w.UserID, Date: in.Date.Time(),
		})
		if err != nil {
			return err
		}
		out = &capapi.CheckinsByDateOutput{Date: in.Date, Classes: []capapi.CheckinsByDateOutputClassesItem{}}
		for _, r := range rows { // ordered by class name, then check-in time
			if n := len(out.Classes); n == 0 || out.Classes[n-1].ClassName != r.ClassName {
				out.Classes = append(out.Classes, capapi.CheckinsByDateOutputClassesItem{ClassName: r.ClassName})
			}
			cl := &out.Classes[len(out.Classes)-1]
			cl.Checkins = append(cl.Checkins, capapi.CheckinsByDateOutputClassesItemCheckinsItem{
				ChildHandle:  r.ChildHandle,
				ChildLabel:   r.ChildName,
				CheckedInAt:  r.CheckedInAt,
				CheckedOutAt: r.CheckedOutAt,
			})
			out.Total++
			st.add(r.ChildID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
