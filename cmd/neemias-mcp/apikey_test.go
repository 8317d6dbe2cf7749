package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/apikey"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// TestAPIKeyCommands: create prints the key once (and only a hash is stored), list shows it
// without its secret, revoke refuses it; a scope beyond the account's role is refused.
func TestAPIKeyCommands(t *testing.T) {
	st := storetest.NewSeeded(t, seed.Options{ChildrenPerChurch: 2, Months: 1})
	dbURL := st.Pool().Config().ConnString()
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		cmd := root()
		cmd.SetOut(&out)
		cmd.SetErr(io.Discard)
		cmd.SetArgs(append(append([]string{"apikey"}, args...), "--church", seed.DemoChurchSlug, "--database-url", dbURL))
		err := cmd.Execute()
		return out.String(), err
	}
	key, err := run("create", "--user", seed.DemoCadastroEmail, "--name", "n8n", "--scopes", "roster:read")
	key = strings.TrimSpace(key)
	if err != nil || !apikey.Is(key) {
		t.Fatalf("create: %q %v", key, err)
	}
	p, err := apikey.Verifier{Store: st}.Verify(t.Context(), key)
	if err != nil || p.UserID != seed.DemoCadastroID || p.Scopes.String() != "roster:read" {
		t.Fatalf("the created key does not verify as the account: %+v %v", p, err)
	}
	list, err := run("list")
	if err != nil || !strings.Contains(list, "n8n") || !strings.Contains(list, "active") || strings.Contains(list, key[20:]) {
		t.Errorf("list: %v\n%s", err, list)
	}
	if _, err := run("create", "--user", seed.DemoVoluntarioEmail, "--name", "x", "--scopes", "children:write"); err == nil || !strings.Contains(err.Error(), "cannot hold scope") {
		t.Errorf("a scope beyond the role: %v", err)
	}
	id := strings.Fields(strings.Split(list, "\n")[1])[0]
	if out, err := run("revoke", "--id", id); err != nil || !strings.Contains(out, "revoked") {
		t.Fatalf("revoke: %v %s", err, out)
	}
	if _, err := (apikey.Verifier{Store: st}).Verify(t.Context(), key); err == nil {
		t.Error("a revoked key still verifies")
	}
	if _, err := run("revoke", "--id", id); err == nil {
		t.Error("revoking twice succeeded")
	}
}
