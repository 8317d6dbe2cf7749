package logic

import (
	"context"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/errs"
)

// capgen:capability neemias_pickup_adult_remove

// PickupAdultRemove implements tool "neemias_pickup_adult_remove" (scope pickups:write).
//
// Takes an entry off a child's pick-up list; the row stays, with who removed it and when (a
// safeguarding record). A guardian may remove the trusted adults of their own children, not a
// restriction (which they cannot even see: it is errs.ErrNotFound to them, as anything the
// caller may not see). Removing an entry removed already returns the earlier removal.
func (s *Service) PickupAdultRemove(ctx context.Context, in *capapi.PickupAdultRemoveInput) (*capapi.PickupAdultRemoveOutput, error) {
	var out *capapi.PickupAdultRemoveOutput
	c := newCall(capapi.CapPickupAdultRemove, in, in.AdultID)
	err := s.run(ctx, c, func(ctx context.Context, q *db.Queries, w who, st *txState) error {
		entry, err := q.GetPickupAdultForRemoval(ctx, db.GetPickupAdultForRemovalParams{
			ChurchID: w.ChurchID, AdultID: in.AdultID, UserID: w.UserID, Role: w.Role,
		})
		if err != nil {
			return notFound(err)
		}
		st.add(entry.ChildID)
		if !entry.Authorized && !w.staff() {
			return errs.ErrNotFound
		}
		if entry.RemovedAt != nil {
			st.action = "pickup_adult_remove.repeat"
			out = &capapi.PickupAdultRemoveOutput{AdultID: entry.ID, RemovedAt: *entry.RemovedAt}
			return nil
		}
		row, err := q.RemovePickupAdult(ctx, db.RemovePickupAdultParams{RemovedBy: w.UserID, ChurchID: w.ChurchID, AdultID: entry.ID})
		if err != nil {
			return notFound(err)
		}
		if row.RemovedAt == nil {
			return errs.ErrNotFound
		}
		out = &capapi.PickupAdultRemoveOutput{AdultID: row.ID, RemovedAt: *row.RemovedAt}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
