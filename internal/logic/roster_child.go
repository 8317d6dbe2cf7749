package logic

import (
	"context"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
)

// capgen:capability roster_child

// RosterChild implements resource "neemias://roster/children/{id}" (scope children:read).
//
// A child outside the caller's church, not linked to a guardian caller, or outside a volunteer's
// classes is errs.ErrNotFound, exactly like an id that does not exist. The guardian phone is
// filled in; the generated Finalize removes it from callers without guardians:read. Every call
// is audited, the refused ones too (denied, read.not_found).
func (s *Service) RosterChild(ctx context.Context, in *capapi.RosterChildInput) (*capapi.RosterChildOutput, error) {
	var out *capapi.RosterChildOutput
	c := newCall(capapi.CapRosterChild, in, in.ID)
	err := s.run(ctx, c, func(ctx context.Context, q *db.Queries, w who, st *txState) error {
		rows, err := q.RosterChild(ctx, db.RosterChildParams{
			ChurchID: w.ChurchID, Role: w.Role, UserID: w.UserID, ID: in.ID,
		})
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return errs.ErrNotFound
		}
		first := rows[0]
		out = &capapi.RosterChildOutput{
			ChildID:   first.ChildID,
			Name:      first.ChildName,
			BirthDate: capability.DateOf(first.BirthDate),
			ClassID:   first.ClassID,
			ClassName: first.ClassName,
			Guardians: make([]capapi.RosterChildOutputGuardiansItem, 0, len(rows)),
		}
		for _, r := range rows {
			phone := r.GuardianPhone
			out.Guardians = append(out.Guardians, capapi.RosterChildOutputGuardiansItem{
				GuardianID:   r.GuardianID,
				Name:         r.GuardianName,
				Relationship: r.Relationship,
				Phone:        &phone,
			})
			st.add(r.GuardianID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
