package logic

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/rosterimport"
)

// capgen:capability neemias_child_correct

// ChildCorrect implements tool "neemias_child_correct" (scope children:write).
//
// A correction replaces values on the child's own row (one UPDATE of the locked row): it never
// writes a second child, so whatever refers to the child (check-ins, guardians, consents, the
// pick-up list) stays with it. A name is normalized as the roster import stores names
// (rosterimport.NormalizeName), so a correction and the next import agree on the spelling. The
// audit entry names the fields that changed (child_correct:name:birth_date), never their values,
// and neither do errors. A correction that would make the child the same as another child of
// the family (same name and birth date, a guardian in common) is refused: that is a duplicate
// record, which neemias_child_merge resolves without losing either record's history.
func (s *Service) ChildCorrect(ctx context.Context, in *capapi.ChildCorrectInput) (*capapi.ChildCorrectOutput, error) {
	var out *capapi.ChildCorrectOutput
	var church uuid.UUID
	c := newCall(capapi.CapChildCorrect, in, in.ChildID)
	err := s.run(ctx, c, func(ctx context.Context, q *db.Queries, w who, st *txState) error {
		out, church = nil, w.ChurchID
		if in.Name == nil && in.BirthDate == nil && in.ClassID == nil && in.Allergies == nil && in.MedicalNotes == nil {
			return &errs.Invalid{Field: "child_id", Reason: "give at least one field to correct: name, birth_date, class_id, allergies or medical_notes"}
		}
		cur, err := q.GetChildForCorrect(ctx, db.GetChildForCorrectParams{ChurchID: w.ChurchID, ChildID: in.ChildID})
		if err != nil {
			return notFound(err)
		}
		next := db.CorrectChildParams{ChurchID: w.ChurchID, ChildID: cur.ID, Name: cur.Name, BirthDate: cur.BirthDate,
			ClassID: cur.ClassID, Allergies: cur.Allergies, MedicalNotes: cur.MedicalNotes}
		if in.Name != nil {
			name := rosterimport.NormalizeName(*in.Name)
			if n := len([]rune(name)); n < 2 || n > 120 {
				return &errs.Invalid{Field: "name", Reason: "must have 2 to 120 characters besides spaces"}
			}
			next.Name = name
		}
		if in.BirthDate != nil {
			today, err := s.churchToday(ctx, q, w.ChurchID)
			if err != nil {
				return err
			}
			if in.BirthDate.After(today) {
				return &errs.Invalid{Field: "birth_date", Reason: fmt.Sprintf("is in the future (today is %s)", today)}
			}
			if ageOn(*in.BirthDate, today) > maxEnrollAge {
				return &errs.Invalid{Field: "birth_date", Reason: fmt.Sprintf("gives an age over %d; only children and adolescents are enrolled", maxEnrollAge)}
			}
			next.BirthDate = in.BirthDate.Time()
		}
		if in.ClassID != nil {
			cl, err := q.GetClass(ctx, db.GetClassParams{ChurchID: w.ChurchID, ClassID: *in.ClassID, Role: w.Role, UserID: w.UserID})
			if errors.Is(notFound(err), errs.ErrNotFound) {
				return &errs.Invalid{Field: "class_id", Reason: "is not an active class of your church"}
			}
			if err != nil {
				return err
			}
			next.ClassID = &cl.ID
		}
		if in.Allergies != nil {
			if next.Allergies, err = healthText("allergies", in.Allergies); err != nil {
				return err
			}
		}
		if in.MedicalNotes != nil {
			if next.MedicalNotes, err = healthText("medical_notes", in.MedicalNotes); err != nil {
				return err
			}
		}
		changed := childChanges(cur, next)
		out = &capapi.ChildCorrectOutput{ChildID: cur.ID, ChildHandle: cur.Handle, Changed: changed}
		if len(changed) == 0 {
			st.action = "child_correct.unchanged"
			out.CorrectedAt = time.Now()
			return nil
		}
		if in.Name != nil || in.BirthDate != nil {
			other, err := q.FindSameChildOfFamily(ctx, db.FindSameChildOfFamilyParams{
				ChurchID: w.ChurchID, ChildID: cur.ID, Name: next.Name, BirthDate: next.BirthDate})
			if err == nil {
				if !w.Scopes.Has(scopes.ChildrenRead) {
					return &errs.Conflict{Reason: "the corrected record would be the same child as another enrolled record (same name, birth date and a guardian in common); merge the two records with neemias_child_merge instead"}
				}
				return &errs.Conflict{Reason: fmt.Sprintf("the corrected record would be the same child as %s (same name, birth date and a guardian in common); "+
					"merge the two records with neemias_child_merge (survivor_id %s, duplicate_id %s) instead", other, other, cur.ID)}
			}
			if err = notFound(err); !errors.Is(err, errs.ErrNotFound) {
				return err
			}
		}
		at, err := q.CorrectChild(ctx, next)
		if err != nil {
			return notFound(err)
		}
		out.CorrectedAt = at
		st.action = c.op + ":" + strings.Join(changed, ":")
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out.Changed) > 0 && s.PeopleChanged != nil { // committed: a corrected name must be known to the PII scan now
		s.PeopleChanged(church)
	}
	return out, nil
}

// childChanges names the fields whose value next changes, in the spec's order.
func childChanges(cur db.GetChildForCorrectRow, next db.CorrectChildParams) []string {
	changed := []string{}
	if next.Name != cur.Name {
		changed = append(changed, "name")
	}
	if capability.DateOf(next.BirthDate).String() != capability.DateOf(cur.BirthDate).String() {
		changed = append(changed, "birth_date")
	}
	if !sameUUID(next.ClassID, cur.ClassID) {
		changed = append(changed, "class_id")
	}
	if !sameText(next.Allergies, cur.Allergies) {
		changed = append(changed, "allergies")
	}
	if !sameText(next.MedicalNotes, cur.MedicalNotes) {
		changed = append(changed, "medical_notes")
	}
	return changed
}

func sameUUID(a, b *uuid.UUID) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func sameText(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
