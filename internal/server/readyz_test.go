package server_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestReadyzBuiltIn: in built-in mode /readyz is the database only (external provider mode's
// provider state is asserted in TestExternalHydra).
func TestReadyzBuiltIn(t *testing.T) {
	a := newApp(t)
	status, body := readyz(t, a.base)
	var got map[string]string
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("/readyz body %q: %v", body, err)
	}
	if status != http.StatusOK || got["status"] != "ready" || got["database"] != "ok" || len(got) != 2 {
		t.Errorf("/readyz: %d %v", status, got)
	}
}
