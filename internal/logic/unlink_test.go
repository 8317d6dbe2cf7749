package logic_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/store"
)

// TestGuardianUnlink: a wrong link goes, and with it the guardian's place on the child's
// pick-up list and their account's sight of the child; the guardian's record and consents
// stay; unlinking twice changes nothing; the last guardian stays; another church's guardian is
// not found; a volunteer cannot unlink.
//
//	fixture: k1 (guardians g1 mother, g2 father), k2 (g1 only; g1 is the RESPONSAVEL's record)
func TestGuardianUnlink(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	cadastro, admin, resp := a.as(store.RoleCadastro), a.as(store.RoleAdmin), a.as(store.RoleResponsavel)
	unlink := func(ctx context.Context, child, guardian uuid.UUID) (*capapi.GuardianUnlinkOutput, error) {
		out, err := e.invoke(ctx, capapi.CapGuardianUnlink, map[string]any{"child_id": child.String(), "guardian_id": guardian.String()})
		if err != nil {
			return nil, err
		}
		return out.(*capapi.GuardianUnlinkOutput), nil
	}
	g2Name := e.guardianName(a.g2)
	onList := func(child string, name string) bool {
		list := mustInvoke[capapi.PickupAdultsOutput](e, admin, capapi.CapPickupAdults, map[string]any{"child": child})
		return slices.ContainsFunc(list.Authorized, func(x capapi.PickupAdultsOutputAuthorizedItem) bool { return x.Name == name })
	}
	if !onList(a.k1Handle, g2Name) {
		t.Fatal("the father is not on k1's pick-up list before the unlink")
	}
	consents := e.count(`SELECT count(*) FROM consent_records WHERE guardian_id = $1`, a.g2)

	got, err := unlink(cadastro, a.k1, a.g2)
	if err != nil || got.AlreadyUnlinked || got.GuardiansLeft != 1 {
		t.Fatalf("unlink: %+v, %v", got, err)
	}
	if au := e.lastAudit(); au.Action != "guardian_unlink" || !slices.Equal(au.Targets, []uuid.UUID{a.k1}) {
		t.Errorf("audit %+v", au)
	}
	if onList(a.k1Handle, g2Name) {
		t.Error("the unlinked father is still on k1's pick-up list")
	}
	if n := e.count(`SELECT count(*) FROM consent_records WHERE guardian_id = $1`, a.g2); n != consents || e.count(`SELECT count(*) FROM guardians WHERE id = $1`, a.g2) != 1 {
		t.Errorf("the guardian's record or consents changed: %d consents, were %d", n, consents)
	}
	again, err := unlink(admin, a.k1, a.g2)
	if err != nil || !again.AlreadyUnlinked || again.GuardiansLeft != 1 {
		t.Errorf("unlink again: %+v, %v", again, err)
	}
	if au := e.lastAudit(); au.Action != "guardian_unlink.repeat" {
		t.Errorf("repeat audited as %q", au.Action)
	}

	// The last guardian stays.
	_, err = unlink(admin, a.k1, a.g1)
	var c *errs.Conflict
	if !errors.As(err, &c) || c.Reason != "this is the child's only guardian; link the right guardian first, then unlink this one" {
		t.Errorf("unlinking the last guardian: %v", err)
	}
	// The guardian's account stops seeing a child once unlinked.
	e.addGuardian(a, "Tia Outra Zzlink", "+55 11 95555-1234", a.k2, "other")
	before := mustInvoke[capapi.CheckinsByDateOutput](e, resp, capapi.CapCheckinsByDate, map[string]any{"date": a.day.String()})
	if rows, _ := checkinsOf(before); !slices.ContainsFunc(rows, func(r capapi.CheckinsByDateOutputClassesItemCheckinsItem) bool {
		return r.ChildHandle == a.handles[a.k2]
	}) {
		t.Fatal("the guardian does not see k2's check-in before the unlink")
	}
	if _, err := unlink(admin, a.k2, a.g1); err != nil {
		t.Fatal(err)
	}
	after := mustInvoke[capapi.CheckinsByDateOutput](e, resp, capapi.CapCheckinsByDate, map[string]any{"date": a.day.String()})
	if rows, _ := checkinsOf(after); slices.ContainsFunc(rows, func(r capapi.CheckinsByDateOutputClassesItemCheckinsItem) bool {
		return r.ChildHandle == a.handles[a.k2]
	}) {
		t.Error("the unlinked guardian's account still sees k2")
	}

	// Not found across churches; refused to a volunteer.
	_, err = unlink(admin, a.k3, e.b.g2)
	wantNotFound(t, err)
	_, err = unlink(a.as(store.RoleVoluntario), a.k3, a.g2)
	var f *errs.Forbidden
	if !errors.As(err, &f) {
		t.Errorf("a volunteer unlinks: %v", err)
	}
	if e.count(`SELECT count(*) FROM guardian_children WHERE child_id = $1 AND guardian_id = $2`, a.k3, a.g2) != 1 {
		t.Error("a refused unlink removed the link")
	}
}

// guardianName is the name of the guardian id, read past row-level security.
func (e *env) guardianName(id uuid.UUID) string {
	e.t.Helper()
	var name string
	e.sys(func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT name FROM guardians WHERE id = $1`, id).Scan(&name)
	})
	return name
}
