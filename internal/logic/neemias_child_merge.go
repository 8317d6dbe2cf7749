package logic

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
)

// capgen:capability neemias_child_merge

// ChildMerge implements tool "neemias_child_merge" (scope children:write).
//
// One child enrolled twice becomes one record, in one transaction: both rows are locked (in id
// order), the duplicate's guardian links are added to the survivor's (a guardian of both keeps
// the survivor's link), its check-ins, pick-up entries and consent records are moved by
// app_merge_child_rows (00106: the application role cannot rewrite those references itself),
// and the duplicate row, which nothing refers to any more, is removed. The audit entry names
// both ids: it is the pointer from the removed record to the one that stays. A child of another
// church is not found, like any record the caller may not see. Refused before anything is
// written: the same record twice, an archived survivor, a check-in of each on one day (then
// they are two children, and the date is said, never a name), and an adult allowed to take one
// child home and refused for the other (the merge cannot tell which is true).
func (s *Service) ChildMerge(ctx context.Context, in *capapi.ChildMergeInput) (*capapi.ChildMergeOutput, error) {
	var out *capapi.ChildMergeOutput
	var church uuid.UUID
	c := newCall(capapi.CapChildMerge, in, in.SurvivorID, in.DuplicateID)
	err := s.run(ctx, c, func(ctx context.Context, q *db.Queries, w who, st *txState) error {
		out, church = nil, w.ChurchID
		if in.SurvivorID == in.DuplicateID {
			return &errs.Invalid{Field: "duplicate_id", Reason: "is the survivor itself; give the id of the other record of the child"}
		}
		rows, err := q.GetChildrenForMerge(ctx, db.GetChildrenForMergeParams{ChurchID: w.ChurchID, SurvivorID: in.SurvivorID, DuplicateID: in.DuplicateID})
		if err != nil {
			return err
		}
		if len(rows) != 2 {
			return errs.ErrNotFound
		}
		survivor := rows[0]
		if survivor.ID != in.SurvivorID {
			survivor = rows[1]
		}
		if survivor.ArchivedAt != nil {
			return &errs.Conflict{Reason: "the survivor is archived; make the record that stays enrolled the survivor (or merge first, then archive)"}
		}
		day, err := q.SharedCheckinDate(ctx, db.SharedCheckinDateParams{ChurchID: w.ChurchID, SurvivorID: in.SurvivorID, DuplicateID: in.DuplicateID})
		if err == nil {
			return &errs.Conflict{Reason: fmt.Sprintf("both records were checked in on %s: a child checks in once a day, so they are two children; nothing was merged", capability.DateOf(day))}
		}
		if err = notFound(err); !errors.Is(err, errs.ErrNotFound) {
			return err
		}
		disagree, err := q.PickupListsDisagree(ctx, db.PickupListsDisagreeParams{ChurchID: w.ChurchID, SurvivorID: in.SurvivorID, DuplicateID: in.DuplicateID})
		if err != nil {
			return err
		}
		if disagree {
			return &errs.Conflict{Reason: "an adult is allowed to take one record's child home and refused on the other's pick-up list; remove the wrong entry first (neemias_pickup_adult_remove), then merge"}
		}
		linked, err := q.LinkChildGuardiansToSurvivor(ctx, db.LinkChildGuardiansToSurvivorParams{ChurchID: w.ChurchID, SurvivorID: in.SurvivorID, DuplicateID: in.DuplicateID})
		if err != nil {
			return err
		}
		if _, err := q.UnlinkChildGuardians(ctx, db.UnlinkChildGuardiansParams{ChurchID: w.ChurchID, ChildID: in.DuplicateID}); err != nil {
			return err
		}
		moved, err := q.MergeChildRows(ctx, db.MergeChildRowsParams{SurvivorID: in.SurvivorID, DuplicateID: in.DuplicateID})
		if err != nil {
			return err
		}
		n, err := q.DeleteChild(ctx, db.DeleteChildParams{ChurchID: w.ChurchID, ChildID: in.DuplicateID})
		if err != nil {
			return err
		}
		if n != 1 {
			return errs.ErrNotFound
		}
		out = &capapi.ChildMergeOutput{SurvivorID: survivor.ID, SurvivorHandle: survivor.Handle, DuplicateID: in.DuplicateID,
			GuardiansLinked: int64(len(linked)), MergedAt: time.Now()}
		for _, m := range moved {
			switch m.Kind {
			case "checkin":
				out.CheckinsMoved++
			case "consent":
				out.ConsentsMoved++
			case "pickup":
				out.PickupEntriesMoved++
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if s.PeopleChanged != nil { // committed: the duplicate's name is gone
		s.PeopleChanged(church)
	}
	return out, nil
}
