package upstream_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/internal/pii"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
	"github.com/neemias/neemias-mcp/internal/upstream"
)

func TestEntry(t *testing.T) {
	for _, tc := range []struct {
		ev                      upstream.Event
		capability, action, out string
	}{
		{upstream.Event{Upstream: "docs", Tool: "search", Outcome: upstream.OutcomeAllowed}, "upstream:docs/search", "call", "allowed"},
		{upstream.Event{Upstream: "docs", Tool: "search", Outcome: upstream.OutcomeAllowed, Redacted: true, Direction: upstream.DirResponse}, "upstream:docs/search", "call.redacted.response", "allowed"},
		{upstream.Event{Upstream: "x", Tool: "y", Outcome: upstream.OutcomeRefused, Reason: upstream.ReasonNotAllowlisted}, "upstream:x/y", "call.not_allowlisted", "denied"},
		{upstream.Event{Upstream: "docs", Tool: "search", Outcome: upstream.OutcomeRefused, Reason: upstream.ReasonPIIDetected,
			Direction: upstream.DirRequest, Findings: []pii.Finding{{Detector: pii.DetectorCPF, Path: "$.arguments.q"}}}, "upstream:docs/search", "call.pii_detected.request.cpf", "denied"},
		{upstream.Event{Upstream: "docs", Tool: "search", Outcome: upstream.OutcomeFailed}, "upstream:docs/search", "call.failed", "error"},
	} {
		e := upstream.Entry(tc.ev)
		if e.Capability != tc.capability || e.Action != tc.action || string(e.Outcome) != tc.out {
			t.Errorf("Entry(%+v) = %+v", tc.ev, e)
		}
		if err := e.Validate(); err != nil {
			t.Errorf("Entry(%+v) invalid: %v", tc.ev, err)
		}
	}
}

// TestDBAuditor runs governed calls against the go-sdk upstream and reads the audit rows back
// from the real PostgreSQL.
func TestDBAuditor(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PostgreSQL")
	}
	st := storetest.New(t)
	ctx := context.Background()
	churchID, user := uuid.New(), uuid.New()
	if err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO churches (id, name, slug) VALUES ($1, 'Igreja', 'upstream-audit')`, churchID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO users (id, church_id, email, display_name, role) VALUES ($2, $1, 'a@x.test', 'A', 'ADMIN')`, churchID, user); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO children (church_id, name, birth_date) VALUES ($1, 'Lorena Quintela Amaral', '2020-02-20')`, churchID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	u := newGoUpstream(t)
	u.fail503["register"] = 1
	c, err := upstream.New(upstream.Config{Enabled: true, Upstreams: []upstream.Upstream{{ID: "go", URL: u.URL, Tools: allTools}}},
		upstream.Options{Auditor: upstream.DBAuditor{Store: st}, Known: pii.NewLoader(st, pii.LoaderOptions{}).ForChurch})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	who := upstream.Caller{ChurchID: churchID, UserID: user, Role: store.RoleAdmin, ClientID: "claude", CorrelationID: "req-1"}
	_, _ = c.CallTool(ctx, who, "go", "lookup", nil)
	_, _ = c.CallTool(ctx, who, "go", "hidden", nil)
	_, _ = c.CallTool(ctx, who, "go", "echo", map[string]any{"cpf": validCPF})
	_, _ = c.CallTool(ctx, who, "go", "register", nil)
	// The church's own child, from the database: refused before sending.
	if _, err := c.CallTool(ctx, who, "go", "echo", map[string]any{"q": "a Lorena Quintela Amaral chegou"}); err == nil ||
		!strings.Contains(err.Error(), "known_name at $.arguments.q") {
		t.Fatalf("a child of the church reached the upstream: %v", err)
	}
	if u.received("Lorena") {
		t.Fatal("the child's name reached the upstream")
	}

	type row struct{ Church, User, Client, Capability, Action, Outcome string }
	var got []row
	if err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT church_id::text, user_id::text, client_id, capability, action, outcome
			FROM audit_log WHERE church_id = $1 ORDER BY at, id`, churchID)
		if err != nil {
			return err
		}
		var r row
		_, err = pgx.ForEachRow(rows, []any{&r.Church, &r.User, &r.Client, &r.Capability, &r.Action, &r.Outcome}, func() error {
			got = append(got, r)
			return nil
		})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ch, us := churchID.String(), user.String()
	want := []row{
		{ch, us, "claude", "upstream:go/lookup", "call", "allowed"},
		{ch, us, "claude", "upstream:go/hidden", "call.not_allowlisted", "denied"},
		{ch, us, "claude", "upstream:go/echo", "call.pii_detected.request.cpf", "denied"},
		{ch, us, "claude", "upstream:go/register", "call.failed", "error"},
		{ch, us, "claude", "upstream:go/echo", "call.pii_detected.request.known_name", "denied"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("audit rows (-want +got):\n%s", diff)
	}
}

func TestUnauditedResultIsWithheld(t *testing.T) {
	u := newGoUpstream(t)
	c, err := upstream.New(upstream.Config{Enabled: true, Upstreams: []upstream.Upstream{{ID: "go", URL: u.URL, Tools: allTools}}},
		upstream.Options{Auditor: upstream.AuditorFunc(func(context.Context, upstream.Event) error { return errors.New("db down") })})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(context.Background(), caller(), "go", "lookup", nil)
	if res != nil || err == nil || !strings.Contains(err.Error(), "could not be audited") {
		t.Fatalf("res = %v, err = %v", res, err)
	}
}
