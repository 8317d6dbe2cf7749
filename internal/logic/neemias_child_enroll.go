package logic

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
)

// capgen:capability neemias_child_enroll

// maxEnrollAge is the oldest age, in completed years, a child may be enrolled at: classes take
// ages 0 to 18 (the schema's classes_min_age/max_age checks).
const maxEnrollAge = 18

// ChildEnroll implements tool "neemias_child_enroll" (scope children:write).
//
// The child, the guardian, their link and the consent record are written in one transaction:
// all or nothing. Without consent (consent.granted false) nothing is written. The child goes to
// the class given, or else to the class for their age today (none when no class fits). The
// output carries ids only: names and the phone are never echoed, in the output or in errors.
// Only the roles the spec grants children:write enroll: the pipeline checks the token's
// scope, row-level security the role (app_role_has_scope, generated from the spec).
func (s *Service) ChildEnroll(ctx context.Context, in *capapi.ChildEnrollInput) (*capapi.ChildEnrollOutput, error) {
	var out *capapi.ChildEnrollOutput
	var church uuid.UUID
	c := newCall(capapi.CapChildEnroll, in)
	if in.ClassID != nil {
		c.targets = []uuid.UUID{*in.ClassID}
	}
	err := s.run(ctx, c, func(ctx context.Context, q *db.Queries, w who, st *txState) error {
		out, church = nil, w.ChurchID
		today, err := s.churchToday(ctx, q, w.ChurchID)
		if err != nil {
			return err
		}
		name, guardianName, phone, err := validateEnrollment(in, today)
		if err != nil {
			return err
		}
		dup, err := refuseDuplicate(ctx, q, w, name, in.BirthDate, phone)
		if err != nil {
			return err
		}
		if dup != nil { // the same child and guardian, whose consent was revoked: consent again
			consent, err := q.InsertConsent(ctx, db.InsertConsentParams{
				ChurchID: w.ChurchID, GuardianID: dup.GuardianID, ChildID: dup.ID,
				TextVersion: in.Consent.TextVersion, LegalBasis: in.Consent.LegalBasis, GrantedBy: w.UserID,
			})
			if err != nil {
				return err
			}
			st.add(dup.ID, dup.GuardianID, consent.ID)
			st.action = "enroll.consent_again"
			out = &capapi.ChildEnrollOutput{ChildID: dup.ID, GuardianID: dup.GuardianID, ClassID: dup.ClassID, ConsentID: consent.ID, EnrolledAt: consent.GrantedAt}
			return nil
		}
		classID, placed, err := enrollClass(ctx, q, w, in, today)
		if err != nil {
			return err
		}
		allergies, err := healthText("allergies", in.Allergies)
		if err != nil {
			return err
		}
		notes, err := healthText("medical_notes", in.MedicalNotes)
		if err != nil {
			return err
		}
		p := db.InsertChildParams{ChurchID: w.ChurchID, Name: name, BirthDate: in.BirthDate.Time(), CreatedBy: w.UserID,
			Allergies: allergies, MedicalNotes: notes}
		if placed {
			p.ClassID = &classID
		}
		child, err := q.InsertChild(ctx, p)
		if err != nil {
			return err
		}
		st.add(child.ID)
		guardianID, err := q.InsertGuardian(ctx, db.InsertGuardianParams{
			ChurchID: w.ChurchID, Name: guardianName, Phone: phone,
		})
		if err != nil {
			return err
		}
		st.add(guardianID)
		if err := q.LinkGuardianChild(ctx, db.LinkGuardianChildParams{
			ChurchID: w.ChurchID, GuardianID: guardianID, ChildID: child.ID, Relationship: in.Guardian.Relationship,
		}); err != nil {
			return err
		}
		consent, err := q.InsertConsent(ctx, db.InsertConsentParams{
			ChurchID: w.ChurchID, GuardianID: guardianID, ChildID: child.ID,
			TextVersion: in.Consent.TextVersion, LegalBasis: in.Consent.LegalBasis, GrantedBy: w.UserID,
		})
		if err != nil {
			return err
		}
		st.add(consent.ID)
		out = &capapi.ChildEnrollOutput{
			ChildID:    child.ID,
			GuardianID: guardianID,
			ClassID:    child.ClassID,
			ConsentID:  consent.ID,
			EnrolledAt: child.CreatedAt,
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if s.PeopleChanged != nil { // committed: the new names must be known to the PII scan now
		s.PeopleChanged(church)
	}
	return out, nil
}

// refuseDuplicate refuses an enrollment identical to one the church has (same name, birth date
// and guardian phone): retried or repeated calls must not create a second child, guardian and
// consent. The conflict names the existing child's id only to a caller who may read children's
// records. The advisory lock makes two identical enrollments at once queue here. An identical
// child whose consent was revoked (neemias_consent_revoke) is returned instead: enrolling them
// again is the guardian consenting again, recorded on the same record.
func refuseDuplicate(ctx context.Context, q *db.Queries, w who, name string, born capability.Date, phone string) (*db.FindDuplicateChildRow, error) {
	if err := q.LockEnrollment(ctx, db.LockEnrollmentParams{ChurchID: w.ChurchID, Name: name, BirthDate: born.Time()}); err != nil {
		return nil, err
	}
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, phone)
	if len(digits) > 10 {
		digits = digits[len(digits)-10:]
	}
	dup, err := q.FindDuplicateChild(ctx, db.FindDuplicateChildParams{ChurchID: w.ChurchID, Name: name, BirthDate: born.Time(), PhoneTail: digits})
	if errors.Is(notFound(err), errs.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if dup.ConsentRevokedAt != nil {
		return &dup, nil
	}
	if w.Scopes.Has(scopes.ChildrenRead) {
		return nil, &errs.Conflict{Reason: fmt.Sprintf("this child is already enrolled (child_id %s, same name, birth date and guardian phone); use that record instead of enrolling again", dup.ID)}
	}
	return nil, &errs.Conflict{Reason: "this child is already enrolled (same name, birth date and guardian phone); nothing was written"}
}

// validateEnrollment checks what the input schema cannot, before anything is written, and
// returns the names and phone trimmed. Reasons never quote the values: they are personal data.
func validateEnrollment(in *capapi.ChildEnrollInput, today capability.Date) (name, guardianName, phone string, err error) {
	if !in.Consent.Granted {
		return "", "", "", &errs.Invalid{Field: "consent.granted", Reason: "must be true: a child is enrolled only with the guardian's recorded consent; ask the guardian first"}
	}
	if strings.TrimSpace(in.Consent.TextVersion) == "" {
		return "", "", "", &errs.Invalid{Field: "consent.text_version", Reason: "must name the version of the consent text the guardian accepted"}
	}
	name = strings.TrimSpace(in.Name)
	if n := len([]rune(name)); n < 2 || n > 120 {
		return "", "", "", &errs.Invalid{Field: "name", Reason: "must have 2 to 120 characters besides surrounding spaces"}
	}
	guardianName = strings.TrimSpace(in.Guardian.Name)
	if n := len([]rune(guardianName)); n < 2 || n > 120 {
		return "", "", "", &errs.Invalid{Field: "guardian.name", Reason: "must have 2 to 120 characters besides surrounding spaces"}
	}
	phone = strings.TrimSpace(in.Guardian.Phone)
	if countDigits(phone) < 8 { // the pattern alone accepts "(((((((("
		return "", "", "", &errs.Invalid{Field: "guardian.phone", Reason: "must have at least 8 digits"}
	}
	if in.BirthDate.After(today) {
		return "", "", "", &errs.Invalid{Field: "birth_date", Reason: fmt.Sprintf("is in the future (today is %s)", today)}
	}
	if ageOn(in.BirthDate, today) > maxEnrollAge {
		return "", "", "", &errs.Invalid{Field: "birth_date", Reason: fmt.Sprintf("gives an age over %d; only children and adolescents are enrolled", maxEnrollAge)}
	}
	return name, guardianName, phone, nil
}

// enrollClass is the class to place the child in: the one given, which must be a class of the
// caller's church, or else the narrowest class whose age range holds the child's age today;
// placed is false when none does.
func enrollClass(ctx context.Context, q *db.Queries, w who, in *capapi.ChildEnrollInput, today capability.Date) (id uuid.UUID, placed bool, err error) {
	if in.ClassID != nil {
		cl, err := q.GetClass(ctx, db.GetClassParams{ChurchID: w.ChurchID, ClassID: *in.ClassID, Role: w.Role, UserID: w.UserID})
		if err != nil {
			if errors.Is(notFound(err), errs.ErrNotFound) {
				return uuid.Nil, false, &errs.Invalid{Field: "class_id", Reason: "is not a class of your church; omit it to place the child by age"}
			}
			return uuid.Nil, false, err
		}
		return cl.ID, true, nil
	}
	cl, err := q.FindClassForAge(ctx, db.FindClassForAgeParams{ChurchID: w.ChurchID, OnDate: today.Time(), BirthDate: in.BirthDate.Time()})
	if err != nil {
		if errors.Is(notFound(err), errs.ErrNotFound) {
			return uuid.Nil, false, nil
		}
		return uuid.Nil, false, err
	}
	return cl.ID, true, nil
}

func countDigits(s string) int {
	n := 0
	for _, r := range s {
		if r >= '0' && r <= '9' {
			n++
		}
	}
	return n
}

// ageOn is the age in completed years on day of someone born on birth.
func ageOn(birth, day capability.Date) int {
	b, d := birth.Time(), day.Time()
	age := d.Year() - b.Year()
	if d.Month() < b.Month() || (d.Month() == b.Month() && d.Day() < b.Day()) {
		age--
	}
	return age
}
