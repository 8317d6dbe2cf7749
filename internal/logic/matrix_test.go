package logic_test

import (
	"context"
	"errors"
	"testing"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/store"
)

// enrollArgs is a valid enrollment of a 4-year-old with the canary's names and phone.
func enrollArgs(birth string) map[string]any {
	return map[string]any{
		"name":       enrollChildName,
		"birth_date": birth,
		"guardian":   map[string]any{"name": enrollGuardName, "phone": enrollPhone, "relationship": "mother"},
		"consent":    map[string]any{"granted": true, "text_version": "2026-01", "legal_basis": "consent"},
	}
}

// TestEveryCapabilityForEveryRole pins the scope matrix of the spec as the pipeline enforces
// it with each role's scopes (gen/scopes.RoleScopes), for every capability of the registry:
// allowed calls succeed, the others are *errs.Forbidden naming the capability, and the handler
// never runs for them (the audit log records only allowed calls of the capabilities the spec
// audits, capability.Audit.Always).
//
// The roles share one fixture, except for an allowed call of a tool that is not idempotent:
// its example may be a fixed value (the same adult added to the same list), which a second
// role's call would rightly refuse as a duplicate, so each such call gets a fixture of its own.
func TestEveryCapabilityForEveryRole(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	wantEntries := 0
	for _, c := range capapi.Capabilities() {
		for _, role := range scopes.Roles() {
			rs, _ := scopes.RoleScopes(role)
			ok := rs.Has(c.Scope)
			t.Run(c.ID+"/"+role, func(t *testing.T) {
				if ok && !c.IsRead() && c.Annotations.Idempotent != nil && !*c.Annotations.Idempotent {
					own := newEnv(t)
					out, err := own.invoke(own.a.as(role), c.ID, argsFor(t, own, c.ID))
					if err != nil || out == nil {
						t.Fatalf("allowed call failed: %v", err)
					}
					want := 0
					if c.Audit.Always {
						want = 1
					}
					if got := len(own.audit()); got != want {
						t.Errorf("audit log has %d entries, want %d", got, want)
					}
					return
				}
				out, err := e.invoke(a.as(role), c.ID, argsFor(t, e, c.ID))
				if ok {
					if err != nil || out == nil {
						t.Fatalf("allowed call failed: %v", err)
					}
					if c.Audit.Always {
						wantEntries++
					}
					return
				}
				var f *errs.Forbidden
				if !errors.As(err, &f) || f.Capability != c.ID {
					t.Fatalf("err = %v, want *errs.Forbidden for %s", err, c.ID)
				}
			})
		}
	}
	if got := len(e.audit()); got != wantEntries {
		t.Errorf("audit log has %d entries, want %d (one per allowed audited call)", got, wantEntries)
	}
}

// TestNoPrincipalIsUnauthenticated: without a verified caller on the context, every capability
// fails closed with errs.ErrUnauthenticated, even with every scope granted to the dispatcher.
func TestNoPrincipalIsUnauthenticated(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	all, _ := scopesOf(store.RoleAdmin)
	audited := 0
	for _, c := range capapi.Capabilities() {
		if c.Audit.Always {
			audited++
		}
		t.Run(c.ID, func(t *testing.T) {
			_, err := invokeWith(e, ctx, c.ID, argsFor(t, e, c.ID), all)
			if !errors.Is(err, errs.ErrUnauthenticated) {
				t.Fatalf("err = %v, want %v", err, errs.ErrUnauthenticated)
			}
		})
	}
	if _, err := e.svc.Complete(ctx, capapi.CapAttendanceSummary, "class_id", ""); !errors.Is(err, errs.ErrUnauthenticated) {
		t.Errorf("Complete: err = %v, want %v", err, errs.ErrUnauthenticated)
	}
	if n := e.count(`SELECT count(*) FROM checkins WHERE service_date = $1`, todaySP().Time()); n != 0 {
		t.Errorf("%d check-ins written without a caller", n)
	}
	// The refused child-data calls are audited as anonymous.
	n := 0
	for _, r := range e.audit() {
		if r.ChurchID != nil || r.UserID != nil || r.Outcome != "denied" {
			t.Errorf("entry %+v, want anonymous and denied", r)
		}
		n++
	}
	if n != audited {
		t.Errorf("%d anonymous audit entries, want %d (the audited capabilities)", n, audited)
	}
}
