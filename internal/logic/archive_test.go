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

// TestChildArchive: a child who left goes out of child search, the roster counts and check-in,
// keeps their history, and archiving again changes nothing; a child in class today is refused
// until picked up; a volunteer or a guardian cannot archive; another church's child is not
// found.
//
//	fixture: k2 (in c2, checked in a week ago), k1 (checked in today by the test), k4 (no class)
func TestChildArchive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	admin, cadastro := a.as(store.RoleAdmin), a.as(store.RoleCadastro)
	before := mustInvoke[capapi.RosterChildrenOutput](e, admin, capapi.CapRosterChildren, map[string]any{})
	k2Name := e.childName(a.k2)

	got := mustInvoke[capapi.ChildArchiveOutput](e, cadastro, capapi.CapChildArchive, map[string]any{"child_id": a.k2.String()})
	if got.ChildID != a.k2 || got.AlreadyArchived || got.ArchivedAt.IsZero() || got.ChildHandle != a.handles[a.k2] {
		t.Fatalf("archive: %+v", got)
	}
	if au := e.lastAudit(); au.Capability != capapi.CapChildArchive || au.Action != "archive" || !slices.Equal(au.Targets, []uuid.UUID{a.k2}) {
		t.Errorf("audit %+v", au)
	}
	again := mustInvoke[capapi.ChildArchiveOutput](e, admin, capapi.CapChildArchive, map[string]any{"child_id": a.k2.String()})
	if !again.AlreadyArchived || !again.ArchivedAt.Equal(got.ArchivedAt) {
		t.Errorf("archive again: %+v, want the first archival %v", again, got.ArchivedAt)
	}
	if au := e.lastAudit(); au.Action != "archive.repeat" {
		t.Errorf("repeat audited as %q", au.Action)
	}

	// Out of the roster, search and check-in; the history stays.
	after := mustInvoke[capapi.RosterChildrenOutput](e, admin, capapi.CapRosterChildren, map[string]any{})
	if after.TotalChildren != before.TotalChildren-1 {
		t.Errorf("roster: %d children after archiving, %d before", after.TotalChildren, before.TotalChildren)
	}
	found := mustInvoke[capapi.ChildFindOutput](e, admin, capapi.CapChildFind, map[string]any{"name": k2Name})
	for _, c := range found.Children {
		if c.ChildID == a.k2 {
			t.Errorf("child search still finds the archived child")
		}
	}
	_, err := e.invoke(admin, capapi.CapCheckinRegister, map[string]any{"child_id": a.k2.String()})
	wantNotFound(t, err)
	day := mustInvoke[capapi.CheckinsByDateOutput](e, admin, capapi.CapCheckinsByDate, map[string]any{"date": a.day.String()})
	if rows, _ := checkinsOf(day); !slices.ContainsFunc(rows, func(r capapi.CheckinsByDateOutputClassesItemCheckinsItem) bool {
		return r.ChildHandle == a.handles[a.k2]
	}) {
		t.Errorf("the archived child's check-in left the day's history")
	}

	// Refused or not found, writing nothing.
	mustInvoke[capapi.CheckinRegisterOutput](e, admin, capapi.CapCheckinRegister, map[string]any{"child_id": a.k1.String()}) // in class today
	n := len(e.audit())
	_, err = e.invoke(admin, capapi.CapChildArchive, map[string]any{"child_id": a.k1.String()})
	var c *errs.Conflict
	if !errors.As(err, &c) || c.Reason != "the child is checked in today and not picked up yet; check them out first, then archive" {
		t.Errorf("archiving a child in class: %v", err)
	}
	_, err = e.invoke(admin, capapi.CapChildArchive, map[string]any{"child_id": e.b.k4.String()})
	wantNotFound(t, err)
	for _, role := range []string{store.RoleVoluntario, store.RoleResponsavel} {
		_, err := e.invoke(a.as(role), capapi.CapChildArchive, map[string]any{"child_id": a.k4.String()})
		var f *errs.Forbidden
		if !errors.As(err, &f) {
			t.Errorf("%s archives: %v", role, err)
		}
	}
	if e.archived(a.k1) || e.archived(e.b.k4) || e.archived(a.k4) {
		t.Error("a refused archive wrote")
	}
	// A refusal is audited (archive.conflict / forbidden), never as an archive.
	for _, au := range e.audit()[n:] {
		if au.Action == "archive" {
			t.Errorf("a refused call audited as an archive: %+v", au)
		}
	}
}

// childName is the name of the child id, read past row-level security.
func (e *env) childName(id uuid.UUID) string {
	e.t.Helper()
	var name string
	e.sys(func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT name FROM children WHERE id = $1`, id).Scan(&name)
	})
	return name
}

// archived reports whether the child id is archived.
func (e *env) archived(id uuid.UUID) bool {
	e.t.Helper()
	var at *string
	e.sys(func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT archived_at::text FROM children WHERE id = $1`, id).Scan(&at)
	})
	return at != nil
}

func (e *env) sys(fn func(ctx context.Context, tx pgx.Tx) error) {
	e.t.Helper()
	if err := e.st.InSystemTx(context.Background(), fn); err != nil {
		e.t.Fatal(err)
	}
}
