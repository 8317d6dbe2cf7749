package logic

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/errs"
)

// capgen:capability neemias_guardian_merge

// GuardianMerge implements tool "neemias_guardian_merge" (scope children:write).
//
// One person recorded as two guardians (an old phone, a second enrollment) becomes one record,
// in one transaction: both rows locked in id order, the duplicate's children linked to the
// survivor (a child of both keeps the survivor's link and relationship), then
// app_merge_guardian_rows (00106) moves the consents they gave, the restrictions that name
// them, the pick-ups they made and their login account, and the duplicate row is removed; the
// audit entry names both ids. Two login accounts are refused: one account is one guardian, and
// which one the person keeps is an operator's decision (neemias-mcp user disable). A guardian of
// another church is not found.
func (s *Service) GuardianMerge(ctx context.Context, in *capapi.GuardianMergeInput) (*capapi.GuardianMergeOutput, error) {
	var out *capapi.GuardianMergeOutput
	var church uuid.UUID
	c := newCall(capapi.CapGuardianMerge, in, in.SurvivorID, in.DuplicateID)
	err := s.run(ctx, c, func(ctx context.Context, q *db.Queries, w who, st *txState) error {
		out, church = nil, w.ChurchID
		if in.SurvivorID == in.DuplicateID {
			return &errs.Invalid{Field: "duplicate_id", Reason: "is the survivor itself; give the id of the other record of the guardian"}
		}
		rows, err := q.GetGuardiansForMerge(ctx, db.GetGuardiansForMergeParams{ChurchID: w.ChurchID, SurvivorID: in.SurvivorID, DuplicateID: in.DuplicateID})
		if err != nil {
			return err
		}
		if len(rows) != 2 {
			return errs.ErrNotFound
		}
		if rows[0].HasAccount && rows[1].HasAccount {
			return &errs.Conflict{Reason: "both guardian records have a login account, and one account is one guardian; " +
				"have the operator disable the account the person no longer uses (neemias-mcp user disable), then merge"}
		}
		linked, err := q.LinkGuardianChildrenToSurvivor(ctx, db.LinkGuardianChildrenToSurvivorParams{ChurchID: w.ChurchID, SurvivorID: in.SurvivorID, DuplicateID: in.DuplicateID})
		if err != nil {
			return err
		}
		for _, child := range linked {
			st.add(child)
		}
		if _, err := q.UnlinkGuardianChildren(ctx, db.UnlinkGuardianChildrenParams{ChurchID: w.ChurchID, GuardianID: in.DuplicateID}); err != nil {
			return err
		}
		moved, err := q.MergeGuardianRows(ctx, db.MergeGuardianRowsParams{SurvivorID: in.SurvivorID, DuplicateID: in.DuplicateID})
		if err != nil {
			return err
		}
		n, err := q.DeleteGuardian(ctx, db.DeleteGuardianParams{ChurchID: w.ChurchID, GuardianID: in.DuplicateID})
		if err != nil {
			return err
		}
		if n != 1 {
			return errs.ErrNotFound
		}
		out = &capapi.GuardianMergeOutput{SurvivorID: in.SurvivorID, DuplicateID: in.DuplicateID, ChildrenLinked: int64(len(linked)), MergedAt: time.Now()}
		for _, m := range moved {
			switch m.Kind {
			case "consent":
				out.ConsentsMoved++
			case "pickup":
				out.PickupEntriesMoved++
			case "checkin":
				out.CheckinsMoved++
			case "account": // the account's user id, which now sees the survivor's children
				out.AccountMoved = true
				st.add(m.ID)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if s.PeopleChanged != nil { // committed: the duplicate's name and phone are gone
		s.PeopleChanged(church)
	}
	return out, nil
}
