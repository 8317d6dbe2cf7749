package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestReadyzNotReadyOnAStandby: a server whose database refuses writes (a standby: what a
// proxy may still route to during a failover, or a demoted primary) is not ready, although
// the database answers and the schema is current; it is ready again once writes are accepted.
func TestReadyzNotReadyOnAStandby(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	setReadOnly := func(on bool) {
		verb := "SET default_transaction_read_only = on"
		if !on {
			verb = "RESET default_transaction_read_only"
		}
		// BEGIN READ WRITE: the reset itself runs in a database that is read-only by default.
		a.exec(t, `BEGIN READ WRITE; DO $$ BEGIN EXECUTE format('ALTER DATABASE %I `+verb+`', current_database()); END $$; COMMIT`)
		a.st.Pool().Reset() // new sessions read the database's setting
	}
	setReadOnly(true)
	status, body := readyz(t, a.base)
	var got map[string]string
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("/readyz body %q: %v", body, err)
	}
	if status != http.StatusServiceUnavailable || !strings.HasPrefix(got["database"], "read-only") || got["migrations"] != "ok" {
		t.Errorf("/readyz on a read-only database: %d %v; want 503 with database read-only", status, got)
	}
	setReadOnly(false)
	if status, body := readyz(t, a.base); status != http.StatusOK {
		t.Errorf("/readyz once writes are accepted: %d %s", status, body)
	}
}
