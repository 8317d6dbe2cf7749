package logic

import (
	"context"
	"errors"
	"strings"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/errs"
)

// capgen:capability pickup_adults

// PickupAdults implements resource "neemias://children/{child}/pickup-adults" (scope pickups:read).
//
// The child's pick-up list (PickupAdults: the guardians not under a restriction, then the live
// entries; a guardian caller never gets restrictions, by the spec's row filter
// guardian_sees_no_restrictions in the query and in RLS). The phone is filled in and removed
// by the generated Finalize without guardians:read. A child with nobody on the list is an
// empty list; a child the caller may not see is errs.ErrNotFound.
func (s *Service) PickupAdults(ctx context.Context, in *capapi.PickupAdultsInput) (*capapi.PickupAdultsOutput, error) {
	var out *capapi.PickupAdultsOutput
	c := newCall(capapi.CapPickupAdults, in)
	err := s.run(ctx, c, func(ctx context.Context, q *db.Queries, w who, st *txState) error {
		handle, id := childRef(in.Child)
		rows, err := q.PickupAdults(ctx, db.PickupAdultsParams{
			ChurchID: w.ChurchID, UserID: w.UserID, Role: w.Role, Handle: handle, ChildID: id,
		})
		if err != nil {
			return err
		}
		out = &capapi.PickupAdultsOutput{
			Authorized:    []capapi.PickupAdultsOutputAuthorizedItem{},
			NotAuthorized: []capapi.PickupAdultsOutputNotAuthorizedItem{},
		}
		if len(rows) == 0 {
			child, err := q.PickupChild(ctx, db.PickupChildParams{
				ChurchID: w.ChurchID, UserID: w.UserID, Role: w.Role, Handle: handle, ChildID: id,
			})
			if err != nil {
				return notFound(err)
			}
			out.ChildHandle, out.ChildLabel = child.Handle, child.Name
			st.add(child.ID)
			return nil
		}
		out.ChildHandle, out.ChildLabel = rows[0].Handle, rows[0].ChildName
		st.add(rows[0].ChildID)
		for _, r := range rows {
			if !r.Authorized {
				out.NotAuthorized = append(out.NotAuthorized, capapi.PickupAdultsOutputNotAuthorizedItem{
					AdultID: r.AdultID, Name: r.AdultName, Note: r.Note,
				})
				continue
			}
			item := capapi.PickupAdultsOutputAuthorizedItem{
				AdultID: r.AdultID, Name: r.AdultName, Relationship: r.Relationship, Kind: r.Kind,
			}
			if r.Phone != "" {
				phone := r.Phone
				item.Phone = &phone
			}
			out.Authorized = append(out.Authorized, item)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// childRef reads a child reference: a uuid is an id, anything else a handle (normalized).
func childRef(s string) (handle string, id *uuid.UUID) {
	if u, err := uuid.Parse(strings.TrimSpace(s)); err == nil {
		return "", &u
	}
	return normalizeHandle(s), nil
}

// pickupChild is the child a pick-up list change names, or errs.ErrNotFound.
func pickupChild(ctx context.Context, q *db.Queries, w who, ref string) (db.PickupChildRow, error) {
	handle, id := childRef(ref)
	child, err := q.PickupChild(ctx, db.PickupChildParams{
		ChurchID: w.ChurchID, UserID: w.UserID, Role: w.Role, Handle: handle, ChildID: id,
	})
	if err != nil {
		if errors.Is(notFound(err), errs.ErrNotFound) {
			return db.PickupChildRow{}, &errs.Invalid{Field: "child", Reason: "names no child you may change the list of; give the handle from the class list"}
		}
		return db.PickupChildRow{}, err
	}
	return child, nil
}
