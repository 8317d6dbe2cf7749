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
// guardian their own children's, a volunteer their classes'. The child's name is filled in; the
// generated Finalize removes it from callers without children:read. It is child-level data, so
// every call is audited with the ids of the children listed.
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
		out = &capapi.CheckinsByDateOutput{
			Date:     in.Date,
			Checkins: make([]capapi.CheckinsByDateOutputCheckinsItem, 0, len(rows)),
		}
		for _, r := range rows {
			name := r.ChildName
			out.Checkins = append(out.Checkins, capapi.CheckinsByDateOutputCheckinsItem{
				CheckinID:    r.CheckinID,
				ChildID:      r.ChildID,
				ChildName:    &name,
				ClassID:      r.ClassID,
				ClassName:    r.ClassName,
				CheckedInAt:  r.CheckedInAt,
				CheckedOutAt: r.CheckedOutAt,
			})
			st.add(r.ChildID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
