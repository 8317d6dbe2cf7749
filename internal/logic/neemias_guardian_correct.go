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
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/rosterimport"
)

// capgen:capability neemias_guardian_correct

// GuardianCorrect implements tool "neemias_guardian_correct" (scope children:write).
//
// Replaces a guardian's name or phone on their own row, or their relationship on one link. A
// phone is read by the roster importer's own code (rosterimport.ParsePhone: Brazilian unless
// written with +, the area code checked, the ninth digit of an old mobile added) and stored in
// E.164, as an import stores it; a name is normalized as an import stores it. Identity is a
// person, not a phone: a guardian is the same person as another record when the phone is the
// same number and the names are one person's (rosterimport.SamePerson, the importer's rule),
// and a correction that makes them so is refused with the other record's id, to merge instead
// (neemias_guardian_merge). The audit entry names the fields that changed, never the values.
func (s *Service) GuardianCorrect(ctx context.Context, in *capapi.GuardianCorrectInput) (*capapi.GuardianCorrectOutput, error) {
	var out *capapi.GuardianCorrectOutput
	var church uuid.UUID
	c := newCall(capapi.CapGuardianCorrect, in, in.GuardianID)
	if in.ChildID != nil {
		c.targets = append(c.targets, *in.ChildID)
	}
	err := s.run(ctx, c, func(ctx context.Context, q *db.Queries, w who, st *txState) error {
		out, church = nil, w.ChurchID
		if in.Relationship != nil && in.ChildID == nil {
			return &errs.Invalid{Field: "child_id", Reason: "is required with relationship: a guardian is related to each child on its own"}
		}
		if in.Relationship == nil && in.ChildID != nil {
			return &errs.Invalid{Field: "relationship", Reason: "is missing: child_id only says whose relationship is corrected"}
		}
		if in.Name == nil && in.Phone == nil && in.Relationship == nil {
			return &errs.Invalid{Field: "guardian_id", Reason: "give at least one field to correct: name, phone, or relationship with child_id"}
		}
		cur, err := q.GetGuardianForCorrect(ctx, db.GetGuardianForCorrectParams{ChurchID: w.ChurchID, GuardianID: in.GuardianID})
		if err != nil {
			return notFound(err)
		}
		name, phone := cur.Name, cur.Phone
		if in.Name != nil {
			name = rosterimport.NormalizeName(*in.Name)
			if n := len([]rune(name)); n < 2 || n > 120 {
				return &errs.Invalid{Field: "name", Reason: "must have 2 to 120 characters besides spaces"}
			}
		}
		if in.Phone != nil {
			e164, _, reason := rosterimport.ParsePhone(*in.Phone, rosterimport.DefaultCountry)
			if reason != nil {
				return &errs.Invalid{Field: "phone", Reason: strings.TrimSuffix(reason.EN, " (--default-country changes the default)")}
			}
			phone = e164
		}
		changed := []string{}
		if name != cur.Name {
			changed = append(changed, "name")
		}
		if phone != cur.Phone {
			changed = append(changed, "phone")
		}
		if len(changed) > 0 {
			if err := refuseSamePerson(ctx, q, w, cur.ID.String(), in, name, phone); err != nil {
				return err
			}
		}
		var relationship bool
		if in.Relationship != nil {
			rel, err := q.GetGuardianLinkRelationship(ctx, db.GetGuardianLinkRelationshipParams{
				ChurchID: w.ChurchID, GuardianID: cur.ID, ChildID: *in.ChildID})
			if errors.Is(notFound(err), errs.ErrNotFound) {
				return &errs.Invalid{Field: "child_id", Reason: "is not a child this guardian is linked to"}
			}
			if err != nil {
				return err
			}
			if relationship = rel != *in.Relationship; relationship {
				changed = append(changed, "relationship")
			}
		}
		out = &capapi.GuardianCorrectOutput{GuardianID: cur.ID, Changed: changed, CorrectedAt: time.Now()}
		if len(changed) == 0 {
			st.action = "guardian_correct.unchanged"
			return nil
		}
		if name != cur.Name || phone != cur.Phone {
			at, err := q.CorrectGuardian(ctx, db.CorrectGuardianParams{ChurchID: w.ChurchID, GuardianID: cur.ID, Name: name, Phone: phone})
			if err != nil {
				return notFound(err)
			}
			out.CorrectedAt = at
		}
		if relationship {
			n, err := q.CorrectGuardianRelationship(ctx, db.CorrectGuardianRelationshipParams{
				ChurchID: w.ChurchID, GuardianID: cur.ID, ChildID: *in.ChildID, Relationship: *in.Relationship})
			if err != nil {
				return err
			}
			if n != 1 {
				return errs.ErrNotFound
			}
		}
		st.action = c.op + ":" + strings.Join(changed, ":")
		return nil
	})
	if err != nil {
		return nil, err
	}
	if (len(out.Changed) > 1 || len(out.Changed) == 1 && out.Changed[0] != "relationship") && s.PeopleChanged != nil {
		s.PeopleChanged(church) // committed: a corrected name or phone must be known to the PII scan now
	}
	return out, nil
}

// refuseSamePerson refuses a guardian's new name and phone when another guardian record of the
// church is the same person by the importer's rule: the same number (each stored phone read as
// the importer reads it, or else compared digit by digit) and names that are one person's.
func refuseSamePerson(ctx context.Context, q *db.Queries, w who, self string, in *capapi.GuardianCorrectInput, name, phone string) error {
	digits := onlyDigits(phone)
	if len(digits) < 8 {
		return nil
	}
	others, err := q.GuardiansWithPhoneEnding(ctx, db.GuardiansWithPhoneEndingParams{
		ChurchID: w.ChurchID, GuardianID: in.GuardianID, Tail: digits[len(digits)-8:]})
	if err != nil {
		return err
	}
	for _, o := range others {
		same := onlyDigits(o.Phone) == digits
		if e164, _, reason := rosterimport.ParsePhone(o.Phone, rosterimport.DefaultCountry); reason == nil {
			same = e164 == phone
		}
		if !same || !rosterimport.SamePerson(o.Name, name) {
			continue
		}
		if !w.Scopes.Has(scopes.ChildrenRead) {
			return &errs.Conflict{Reason: "another guardian record has this phone and the same name: they are one person; merge the two records with neemias_guardian_merge instead"}
		}
		return &errs.Conflict{Reason: fmt.Sprintf("guardian %s has this phone and the same name: they are one person; "+
			"merge the two records with neemias_guardian_merge (survivor_id %s, duplicate_id %s) instead of correcting this one", o.ID, o.ID, self)}
	}
	return nil
}

func onlyDigits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}
