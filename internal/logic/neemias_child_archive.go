package logic

import (
	"context"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/errs"
)

// capgen:capability neemias_child_archive

// ChildArchive implements tool "neemias_child_archive" (scope children:write).
//
// A child who left goes out of everything that lists the church's children now (the roster
// counts, the class list, child search, check-in: their queries all skip archived_at), and
// nothing else changes: check-ins, consents and pick-up lists are history the church keeps
// (and the LGPD export reports). A child still in class today is refused, so that nobody is
// archived between check-in and pick-up and their release is never lost. Archiving twice
// returns the first archival, audited as archive.repeat.
func (s *Service) ChildArchive(ctx context.Context, in *capapi.ChildArchiveInput) (*capapi.ChildArchiveOutput, error) {
	var out *capapi.ChildArchiveOutput
	c := newCall(capapi.CapChildArchive, in, in.ChildID)
	err := s.run(ctx, c, func(ctx context.Context, q *db.Queries, w who, st *txState) error {
		today, _, err := s.churchClock(ctx, q, w.ChurchID)
		if err != nil {
			return err
		}
		child, err := q.GetChildForArchive(ctx, db.GetChildForArchiveParams{ChurchID: w.ChurchID, ChildID: in.ChildID, Today: today.Time()})
		if err != nil {
			return notFound(err)
		}
		st.add(child.ID)
		if child.ArchivedAt != nil {
			st.action = "archive.repeat"
			out = &capapi.ChildArchiveOutput{ChildID: child.ID, ChildHandle: child.Handle, ArchivedAt: *child.ArchivedAt, AlreadyArchived: true}
			return nil
		}
		if child.InClass {
			return &errs.Conflict{Reason: "the child is checked in today and not picked up yet; check them out first, then archive"}
		}
		at, err := q.ArchiveChild(ctx, db.ArchiveChildParams{ChurchID: w.ChurchID, ChildID: child.ID})
		if err != nil {
			return notFound(err)
		}
		if at == nil {
			return errs.ErrNotFound
		}
		out = &capapi.ChildArchiveOutput{ChildID: child.ID, ChildHandle: child.Handle, ArchivedAt: *at}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
