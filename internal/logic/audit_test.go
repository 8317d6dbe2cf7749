package logic_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/store"
)

// TestAuditTrail: every access to child-level data, allowed or denied, and every change leaves
// one entry with who (user, client), which capability, which ids and the outcome; aggregate
// reads leave none; nothing personal is in any entry.
func TestAuditTrail(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	missing := uuid.New()
	type entry struct {
		user, client, capability, action, outcome string
		targets                                   []uuid.UUID
	}
	step := func(role string, c church, id string, args map[string]any) {
		t.Helper()
		_, _ = e.invoke(c.as(role), id, args)
	}
	adminA, volA := a.users[store.RoleAdmin].String(), a.users[store.RoleVoluntario].String()
	cadA := a.users[store.RoleCadastro].String()
	ck := mustInvoke[capapi.CheckinRegisterOutput](e, a.as(store.RoleAdmin), capapi.CapCheckinRegister, map[string]any{"child_id": a.k3})
	steps := []struct {
		do   func()
		want []entry
	}{
		{func() {}, []entry{{adminA, "test-client-admin", capapi.CapCheckinRegister, "checkin", "allowed", []uuid.UUID{a.k3, ck.CheckinID}}}},
		{func() { step(store.RoleAdmin, a, capapi.CapRosterChild, map[string]any{"id": a.k1}) },
			[]entry{{adminA, "test-client-admin", capapi.CapRosterChild, "read", "allowed", []uuid.UUID{a.k1, a.g1, a.g2}}}},
		{func() { step(store.RoleCadastro, a, capapi.CapRosterChild, map[string]any{"id": e.b.k1}) },
			[]entry{{cadA, "test-client-cadastro", capapi.CapRosterChild, "read.not_found", "denied", []uuid.UUID{e.b.k1}}}},
		{func() { step(store.RoleCadastro, a, capapi.CapRosterChild, map[string]any{"id": missing}) },
			[]entry{{cadA, "test-client-cadastro", capapi.CapRosterChild, "read.not_found", "denied", []uuid.UUID{missing}}}},
		{func() {
			step(store.RoleVoluntario, a, capapi.CapCheckinsByDate, map[string]any{"date": a.day.String()})
		},
			[]entry{{volA, "test-client-voluntario", capapi.CapCheckinsByDate, "read", "allowed", []uuid.UUID{a.k1, a.k3}}}},
		{func() { step(store.RoleVoluntario, a, capapi.CapCheckinRegister, map[string]any{"child_id": a.k2}) },
			[]entry{{volA, "test-client-voluntario", capapi.CapCheckinRegister, "checkin.not_found", "denied", []uuid.UUID{a.k2}}}},
		{func() { step(store.RoleAdmin, a, capapi.CapCheckinRegister, map[string]any{"child_id": a.k3}) },
			[]entry{{adminA, "test-client-admin", capapi.CapCheckinRegister, "checkin.repeat", "allowed", []uuid.UUID{a.k3, ck.CheckinID}}}},
		{func() {
			step(store.RoleAdmin, a, capapi.CapCheckoutRegister, map[string]any{"checkin_id": ck.CheckinID, "pickup_code": *ck.PickupCode, "picked_up_by": "Responsável Dois"})
		}, []entry{{adminA, "test-client-admin", capapi.CapCheckoutRegister, "checkout", "allowed", []uuid.UUID{ck.CheckinID, a.k3}}}},
		{func() {
			m := enrollArgs("2022-01-01")
			m["consent"].(map[string]any)["granted"] = false
			step(store.RoleAdmin, a, capapi.CapChildEnroll, m)
		}, []entry{{adminA, "test-client-admin", capapi.CapChildEnroll, "enroll.invalid", "error", nil}}},
		// Aggregates: not audited.
		{func() {
			step(store.RoleAdmin, a, capapi.CapRosterChildren, map[string]any{})
			step(store.RoleAdmin, a, capapi.CapAttendanceSummary, map[string]any{})
		}, nil},
		// Refused by the dispatcher (scope): the protocol layer records it with AuditDenied.
		{func() {
			args := json.RawMessage(`{"id":"` + a.k4.String() + `","name":"` + childSentinel + `"}`)
			_, err := e.invoke(a.as(store.RoleResponsavel), capapi.CapRosterChildren, map[string]any{})
			if err := e.svc.AuditDenied(a.as(store.RoleResponsavel), capapi.CapRosterChild, args, err); err != nil {
				t.Fatal(err)
			}
		}, []entry{{a.users[store.RoleResponsavel].String(), "test-client-responsavel", capapi.CapRosterChild, "read.forbidden", "denied", []uuid.UUID{a.k4}}}},
		{func() {
			if err := e.svc.AuditDenied(a.as(store.RoleCadastro), capapi.CapCheckinRegister, json.RawMessage(`{"child_id":"x"}`), nil); err != nil {
				t.Fatal(err)
			}
		}, []entry{{a.users[store.RoleCadastro].String(), "test-client-cadastro", capapi.CapCheckinRegister, "checkin.forbidden", "denied", nil}}},
		{func() {
			if err := e.svc.AuditDenied(context.Background(), capapi.CapChildEnroll, nil, &errs.Forbidden{}); err != nil {
				t.Fatal(err)
			}
		}, []entry{{"", "", capapi.CapChildEnroll, "enroll.forbidden", "denied", nil}}},
	}
	seen := 0
	for i, s := range steps {
		s.do()
		rows := e.audit()
		var got []entry
		for _, r := range rows[seen:] {
			en := entry{capability: r.Capability, action: r.Action, outcome: r.Outcome, targets: r.Targets}
			if r.UserID != nil {
				en.user = r.UserID.String()
			}
			if r.ClientID != nil {
				en.client = *r.ClientID
			}
			if len(en.targets) == 0 {
				en.targets = nil
			}
			if r.ChurchID != nil && *r.ChurchID != a.id {
				t.Errorf("step %d: entry in church %s", i, r.ChurchID)
			}
			got = append(got, en)
		}
		seen = len(rows)
		if d := cmp.Diff(s.want, got, cmp.AllowUnexported(entry{}), cmp.Transformer("sort", func(ids []uuid.UUID) []string {
			out := make([]string, len(ids))
			for i, id := range ids {
				out[i] = id.String()
			}
			slices.Sort(out)
			return out
		})); d != "" {
			t.Errorf("step %d: audit entries (-want +got)\n%s", i, d)
		}
	}
	// Nothing personal in the log, in any column.
	err := e.st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		var dump string
		if err := tx.QueryRow(ctx, `SELECT coalesce(string_agg(a::text, E'\n'), '') FROM audit_log a`).Scan(&dump); err != nil {
			return err
		}
		for _, f := range canaryFragments {
			if strings.Contains(dump, f) {
				t.Errorf("audit log holds %q", f)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAuditIsAppendOnlyForTheApp: the entries the service writes cannot be changed by the
// application role (the schema's guarantee, checked from here as a caller would hit it).
func TestAuditIsAppendOnlyForTheApp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mustInvoke[capapi.RosterChildOutput](e, e.a.as(store.RoleAdmin), capapi.CapRosterChild, map[string]any{"id": e.a.k1})
	c := store.Caller{ChurchID: e.a.id, UserID: e.a.users[store.RoleAdmin], Role: store.RoleAdmin}
	err := e.st.InTx(context.Background(), c, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM audit_log`)
		return err
	})
	if err == nil {
		t.Fatal("the application role deleted audit entries")
	}
	if n := len(e.audit()); n != 1 {
		t.Fatalf("%d entries, want 1", n)
	}
}

// TestInvokeAuditsScopeRefusalsOnce: the pipeline with Service.OnRefused as its hook, the
// entry point of the protocol layers, records a scope refusal (made before any handler)
// exactly once, and adds nothing to what the handlers audit themselves.
func TestInvokeAuditsScopeRefusalsOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	resp, cad := a.as(store.RoleResponsavel), a.as(store.RoleCadastro)
	raw := json.RawMessage(`{"id":"` + e.b.k1.String() + `"}`)

	// Refused by scope: RESPONSAVEL has no roster:read.
	_, err := e.call(resp, capapi.CapRosterChildren, json.RawMessage(`{}`))
	var f *errs.Forbidden
	if !errors.As(err, &f) {
		t.Fatalf("err = %v, want *errs.Forbidden", err)
	}
	// Allowed by scope, refused by the row filter (another church's child): the handler
	// audits it, once.
	_, err = e.call(cad, capapi.CapRosterChild, raw)
	wantNotFound(t, err)
	// Allowed.
	if _, err := e.call(cad, capapi.CapRosterChild, json.RawMessage(`{"id":"`+a.k1.String()+`"}`)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range e.audit() {
		got = append(got, r.Capability+" "+r.Action+" "+r.Outcome)
	}
	want := []string{
		"roster_children read.forbidden denied",
		"roster_child read.not_found denied",
		"roster_child read allowed",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("audit (-want +got)\n%s", d)
	}
}
