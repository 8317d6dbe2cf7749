package logic

import (
	"context"
	"errors"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/errs"
)

// capgen:capability neemias_consent_revoke

// ConsentRevoke implements tool "neemias_consent_revoke" (scope children:write).
//
// Revocation is a new fact on the consent records (revoked_at), never a delete: they stay as
// evidence. Whether the child is listed follows from them in one place, the trigger of 00107,
// which sets children.consent_revoked_at when no consent of theirs is left in force and clears
// it when a new one is recorded (an enrollment of the same child and guardian, or the roster
// import); the roster counts, the class list, child search and check-in test it beside
// archived_at. A child checked in today stays on that day's class list, so they still go home.
// Revoking what is not in force changes nothing (consent_revoke.repeat).
func (s *Service) ConsentRevoke(ctx context.Context, in *capapi.ConsentRevokeInput) (*capapi.ConsentRevokeOutput, error) {
	var out *capapi.ConsentRevokeOutput
	c := newCall(capapi.CapConsentRevoke, in, in.ChildID)
	if in.GuardianID != nil {
		c.targets = append(c.targets, *in.GuardianID)
	}
	err := s.run(ctx, c, func(ctx context.Context, q *db.Queries, w who, st *txState) error {
		out = nil
		child, err := q.GetChildForConsentRevoke(ctx, db.GetChildForConsentRevokeParams{ChurchID: w.ChurchID, ChildID: in.ChildID})
		if err != nil {
			return notFound(err)
		}
		if in.GuardianID != nil {
			own, err := q.CountConsents(ctx, db.CountConsentsParams{ChurchID: w.ChurchID, ChildID: child.ID, GuardianID: in.GuardianID})
			if err != nil {
				return err
			}
			if own.Total == 0 {
				return &errs.Invalid{Field: "guardian_id", Reason: "gave no consent for this child; omit it to revoke every guardian's"}
			}
		}
		revoked, err := q.RevokeConsents(ctx, db.RevokeConsentsParams{ChurchID: w.ChurchID, ChildID: child.ID, GuardianID: in.GuardianID})
		if err != nil {
			return err
		}
		all, err := q.CountConsents(ctx, db.CountConsentsParams{ChurchID: w.ChurchID, ChildID: child.ID})
		if err != nil {
			return err
		}
		out = &capapi.ConsentRevokeOutput{ChildID: child.ID, ChildHandle: child.Handle, ConsentsRevoked: int64(len(revoked)),
			ConsentsLeft: all.InForce, Listed: all.InForce > 0 || all.Total == 0}
		for _, r := range revoked {
			st.add(r.ID)
			out.RevokedAt = r.RevokedAt
		}
		if len(revoked) == 0 {
			st.action = "consent_revoke.repeat"
			at, err := q.LastConsentRevocation(ctx, db.LastConsentRevocationParams{ChurchID: w.ChurchID, ChildID: child.ID, GuardianID: in.GuardianID})
			if err = notFound(err); err != nil && !errors.Is(err, errs.ErrNotFound) {
				return err
			}
			out.RevokedAt = at
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
