package logic

import (
	"context"
	"strings"
	"unicode"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/pii"
	"github.com/neemias/neemias-mcp/internal/store"
)

// capgen:capability neemias_pickup_adult_add

// PickupAdultAdd implements tool "neemias_pickup_adult_add" (scope pickups:write).
//
// Who may add what: ADMIN and CADASTRO add trusted adults and restrictions (an adult who must
// not take the child, such as a custody order: the church checks the document, so a guardian
// cannot record one); a RESPONSAVEL adds trusted adults for their own children only. The
// role rule is here and again in the table's RLS policy (authorized OR staff). A restriction
// needs a note; a note or a name that holds a phone number or a document number (CPF) is
// refused, since the note is shown to volunteers and the phone has a field of its own. A name
// already on the list, or a guardian's for an authorized entry, is a conflict.
func (s *Service) PickupAdultAdd(ctx context.Context, in *capapi.PickupAdultAddInput) (*capapi.PickupAdultAddOutput, error) {
	authorized := in.Authorized == nil || *in.Authorized
	note := ""
	if in.Note != nil {
		note = strings.TrimSpace(*in.Note)
	}
	if err := checkPickupEntry(in.Name, note, authorized); err != nil {
		return nil, err
	}
	var out *capapi.PickupAdultAddOutput
	c := newCall(capapi.CapPickupAdultAdd, in)
	err := s.run(ctx, c, func(ctx context.Context, q *db.Queries, w who, st *txState) error {
		if !authorized && !w.staff() {
			return &errs.Invalid{Field: "authorized", Reason: "only staff (ADMIN, CADASTRO) record an adult who must not take a child home; ask the church office, which checks the document"}
		}
		child, err := pickupChild(ctx, q, w, in.Child)
		if err != nil {
			return err
		}
		st.add(child.ID)
		if authorized {
			dup, err := q.GuardianNamed(ctx, db.GuardianNamedParams{ChurchID: w.ChurchID, ChildID: child.ID, Name: in.Name})
			if err != nil {
				return err
			}
			if dup {
				return &errs.Conflict{Reason: "that adult is already on the list as one of the child's guardians"}
			}
		}
		var notePtr *string
		if note != "" {
			notePtr = &note
		}
		row, err := q.InsertPickupAdult(ctx, db.InsertPickupAdultParams{
			ChurchID: w.ChurchID, ChildID: child.ID, UserID: w.UserID, Role: w.Role, CreatedBy: w.UserID,
			Name: in.Name, Relationship: in.Relationship, Phone: in.Phone, Authorized: authorized, Note: notePtr,
		})
		if err != nil {
			if store.IsUniqueViolation(err, "pickup_adults_child_name_key") {
				return &errs.Conflict{Reason: "an adult of that name is already on the child's list; remove the entry first to change it"}
			}
			return notFound(err)
		}
		st.add(row.ID)
		out = &capapi.PickupAdultAddOutput{AdultID: row.ID, ChildHandle: child.Handle, Authorized: row.Authorized, AddedAt: row.CreatedAt}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkPickupEntry refuses an entry whose name or note carries what belongs elsewhere or
// nowhere: digits in a name, a phone or a document number in a note, a restriction without a
// note.
func checkPickupEntry(name, note string, authorized bool) error {
	if strings.IndexFunc(name, unicode.IsDigit) >= 0 {
		return &errs.Invalid{Field: "name", Reason: "holds digits; give the adult's name only (a phone goes in phone)"}
	}
	if !authorized && note == "" {
		return &errs.Invalid{Field: "note", Reason: "is required for an adult who must not take the child home: say what the volunteer must do (call the coordinator, court order on file)"}
	}
	if note == "" {
		return nil
	}
	if pii.HoldsNumbers(note) {
		return &errs.Invalid{Field: "note", Reason: "looks like it holds a phone or document number (CPF, RG); write what the volunteer must do without personal numbers (an adult's phone goes in phone)"}
	}
	return nil
}
