package logic_test

import (
	"context"
	"testing"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/store"
)

// TestNoReadWithoutItsAuditRow: the audit row of a child-data read is written in the read's own
// transaction, so when the connection dies after the query but before the commit, the caller
// gets an error and no data. The test kills the backend from inside the audit INSERT (a
// trigger that terminates its own session), the latest moment before the commit.
func TestNoReadWithoutItsAuditRow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	_, err := e.st.Pool().Exec(ctx, `
		CREATE FUNCTION test_kill_session() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
		BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NEW; END $$;
		CREATE TRIGGER test_kill_session BEFORE INSERT ON audit_log
			FOR EACH ROW WHEN (NEW.capability IN ('roster_child', 'checkins_by_date')) EXECUTE FUNCTION test_kill_session();`)
	if err != nil {
		t.Fatalf("installing the trigger: %v", err)
	}
	for _, tc := range []struct {
		id   string
		args any
	}{
		{capapi.CapRosterChild, map[string]any{"id": e.a.k1}},
		{capapi.CapCheckinsByDate, map[string]any{"date": e.a.day.String()}},
	} {
		out, err := e.invoke(e.a.as(store.RoleAdmin), tc.id, tc.args)
		if err == nil || out != nil {
			t.Errorf("%s: got %v, %v; want an error and no output when the audit row cannot commit", tc.id, out, err)
		}
	}
	// The trigger works on a connection of the pool: the reads above really did reach it.
	if n := e.count(`SELECT count(*) FROM audit_log WHERE capability IN ('roster_child', 'checkins_by_date') AND outcome = 'allowed'`); n != 0 {
		t.Errorf("%d allowed audit rows committed although the session died", n)
	}
}
