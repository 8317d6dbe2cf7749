package logic

import (
	"context"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/errs"
)

// capgen:capability neemias_guardian_unlink

// GuardianUnlink implements tool "neemias_guardian_unlink" (scope children:write).
//
// Removes one guardian-child link: a link recorded by mistake (a roster row that joined a
// stranger to a family) or no longer true. The link is what puts a guardian on the child's
// pick-up list and lets a guardian's account see the child, so both end with it; the
// guardian's record and consent records stay (consent is evidence, revoked only by its own
// tool). A child always keeps a guardian: unlinking the last one is refused, and the child row
// is locked so two unlinks at once cannot both pass that check. Unlinking what is not linked
// changes nothing (guardian_unlink.repeat).
func (s *Service) GuardianUnlink(ctx context.Context, in *capapi.GuardianUnlinkInput) (*capapi.GuardianUnlinkOutput, error) {
	var out *capapi.GuardianUnlinkOutput
	c := newCall(capapi.CapGuardianUnlink, in, in.ChildID)
	err := s.run(ctx, c, func(ctx context.Context, q *db.Queries, w who, st *txState) error {
		link, err := q.GetGuardianLinkForUnlink(ctx, db.GetGuardianLinkForUnlinkParams{
			ChurchID: w.ChurchID, ChildID: in.ChildID, GuardianID: in.GuardianID,
		})
		if err != nil {
			return notFound(err)
		}
		st.add(link.ChildID)
		out = &capapi.GuardianUnlinkOutput{ChildID: link.ChildID, GuardianID: link.GuardianID, GuardiansLeft: link.Guardians}
		if !link.Linked {
			st.action = "guardian_unlink.repeat"
			out.AlreadyUnlinked = true
			return nil
		}
		if link.Guardians <= 1 {
			return &errs.Conflict{Reason: "this is the child's only guardian; link the right guardian first, then unlink this one"}
		}
		n, err := q.UnlinkGuardian(ctx, db.UnlinkGuardianParams{ChurchID: w.ChurchID, ChildID: link.ChildID, GuardianID: link.GuardianID})
		if err != nil {
			return err
		}
		if n != 1 {
			return errs.ErrNotFound
		}
		out.GuardiansLeft--
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
