package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// TestIdentityLinkGuards (issue 25): identity link refuses an issuer the server does not
// trust, and moving a link to another user without --force; list shows the links, unlink
// removes one; dex-subject computes the sub Dex gives an account.
func TestIdentityLinkGuards(t *testing.T) {
	for _, name := range issuerEnv {
		t.Setenv(name, "")
	}
	dbURL := storetest.NewEmptyDatabase(t)
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		cmd := root()
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(append(args, "--database-url", dbURL))
		err := cmd.Execute()
		return out.String(), err
	}
	if _, err := run("seed", "--months", "0"); err != nil {
		t.Fatal(err)
	}
	const idp = "https://sso.igreja.example/realms/igreja"
	link := func(email, subject string, extra ...string) (string, error) {
		return run(append([]string{"identity", "link", "--email", email, "--issuer", idp, "--subject", subject}, extra...)...)
	}
	if _, err := link(seed.DemoVoluntarioEmail, "abc"); err == nil || !strings.Contains(err.Error(), "no trusted provider") {
		t.Errorf("no trusted issuer configured: %v", err)
	}
	t.Setenv("NEEMIAS_OAUTH_ISSUER", idp)
	for _, iss := range []string{"https://sso.igreja.example/realms/outra", "sso.igreja.example", "http://sso.igreja.example/realms/igreja"} {
		if _, err := run("identity", "link", "--email", seed.DemoVoluntarioEmail, "--issuer", iss, "--subject", "abc"); err == nil {
			t.Errorf("issuer %s accepted", iss)
		}
	}
	if out, err := link(seed.DemoVoluntarioEmail, "abc"); err != nil || !strings.Contains(out, "linked") {
		t.Fatalf("link: %v %s", err, out)
	}
	if out, err := run("identity", "link", "--email", seed.DemoVoluntarioEmail, "--issuer", idp+"/", "--subject", "abc"); err != nil || !strings.Contains(out, "already linked") {
		t.Errorf("the same link again (issuer with a trailing slash): %v %s", err, out)
	}
	_, err := link(seed.DemoAdminEmail, "abc")
	if err == nil || !strings.Contains(err.Error(), "--force") || !strings.Contains(err.Error(), seed.DemoVoluntarioID.String()) {
		t.Errorf("moving the link without --force: %v", err)
	}
	if out, err := link(seed.DemoAdminEmail, "abc", "--force"); err != nil || !strings.Contains(out, "moved") {
		t.Errorf("moving with --force: %v %s", err, out)
	}
	if _, err := link(seed.DemoCadastroEmail, "def"); err != nil {
		t.Fatal(err)
	}
	out, err := run("identity", "list")
	if err != nil || !strings.Contains(out, "2 linked accounts") || !strings.Contains(out, seed.DemoAdminID.String()) || strings.Contains(out, seed.DemoVoluntarioID.String()) {
		t.Errorf("list: %v\n%s", err, out)
	}
	if out, err := run("identity", "list", "--email", seed.DemoCadastroEmail); err != nil || !strings.Contains(out, "1 linked accounts") || !strings.Contains(out, "def") {
		t.Errorf("list --email: %v\n%s", err, out)
	}
	if out, err := run("identity", "unlink", "--issuer", idp, "--subject", "abc"); err != nil || !strings.Contains(out, seed.DemoAdminID.String()) {
		t.Errorf("unlink: %v %s", err, out)
	}
	if _, err := run("identity", "unlink", "--issuer", idp, "--subject", "abc"); err == nil {
		t.Error("unlinking twice succeeded")
	}
	if out, _ := run("identity", "list"); !strings.Contains(out, "1 linked accounts") {
		t.Errorf("after unlink:\n%s", out)
	}
	// Dex's sub for the local connector's user 08a8684b-…: its protobuf, base64url.
	const dexSub = "CiQwOGE4Njg0Yi1kYjg4LTRiNzMtOTBhOS0zY2QxNjYxZjU0NjYSBWxvY2Fs"
	if got := encodeDexSubject("08a8684b-db88-4b73-90a9-3cd1661f5466", "local"); got != dexSub {
		t.Errorf("Dex subject %s, want %s", got, dexSub)
	}
	if u, c, err := decodeDexSubject(dexSub); err != nil || u != "08a8684b-db88-4b73-90a9-3cd1661f5466" || c != "local" {
		t.Errorf("decoded %q %q %v", u, c, err)
	}
	if _, _, err := decodeDexSubject("not-a-dex-subject"); err == nil {
		t.Error("garbage decoded")
	}
}
