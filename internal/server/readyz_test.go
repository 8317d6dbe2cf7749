package server_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestReadyz: /readyz is 200 only when the database answers, the schema is at the newest
// embedded migration and the signing key is loaded; otherwise 503 naming what is missing.
// /healthz stays liveness. (External provider mode's provider state: TestExternalHydra.)
func TestReadyz(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		breakIt string // SQL run before asking
		status  int
		want    map[string]string
	}{
		{"ready", "", http.StatusOK, map[string]string{"status": "ready", "database": "ok", "migrations": "ok", "signing_keys": "ok"}},
		{"migrations behind", `DELETE FROM goose_db_version WHERE version_id = (SELECT max(version_id) FROM goose_db_version)`, http.StatusServiceUnavailable,
			map[string]string{"status": "unavailable", "database": "ok", "signing_keys": "ok"}},
		{"no signing key", `DELETE FROM oauth_signing_keys`, http.StatusServiceUnavailable,
			map[string]string{"status": "unavailable", "database": "ok", "migrations": "ok", "signing_keys": "unavailable: the signing key in use is not among the published keys"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := newApp(t)
			if tc.breakIt != "" {
				a.exec(t, tc.breakIt)
			}
			status, body := readyz(t, a.base)
			var got map[string]string
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatalf("/readyz body %q: %v", body, err)
			}
			if status != tc.status {
				t.Errorf("/readyz status %d, want %d (%v)", status, tc.status, got)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("/readyz %s = %q, want %q", k, got[k], v)
				}
			}
			if tc.name == "migrations behind" && got["migrations"] == "ok" {
				t.Errorf("/readyz migrations = ok with a migration missing")
			}
			resp, err := http.Get(a.base + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("/healthz = %d: liveness must not depend on readiness", resp.StatusCode)
			}
		})
	}
}
