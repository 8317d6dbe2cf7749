package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/neemias/neemias-mcp/internal/freeport"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
	"github.com/neemias/neemias-mcp/internal/testsupport"
)

// mainArgsEnv makes the test binary act as the server binary: the cross-process test runs
// copies of itself with the command line in this variable (fields separated by \x1f).
const mainArgsEnv = "NEEMIAS_MCP_TEST_MAIN_ARGS"

func TestMain(m *testing.M) {
	if args := os.Getenv(mainArgsEnv); args != "" {
		cmd := root()
		cmd.SetArgs(strings.Split(args, "\x1f"))
		if err := cmd.Execute(); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestOAuthAcrossProcesses: three `neemias-mcp serve` OS processes on one database, as
// replicas: the authorization request starts at the second, the login is at the third, the
// consent (the code is issued) at the first; the code is redeemed at the second and the
// refresh token used at the third; /mcp accepts the tokens at the first. A replay of the code
// at the first revokes the tokens everywhere.
func TestOAuthAcrossProcesses(t *testing.T) {
	dbURL := storetest.NewDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := seed.Run(ctx, storetest.Pool(t, dbURL), seed.Options{ChildrenPerChurch: 20, Months: 1}); err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 3)
	public := "http://" + ports[0]
	var bases []string
	for _, p := range ports {
		startServe(t, "serve", "--addr", p, "--public-url", public, "--database-url", dbURL)
		bases = append(bases, "http://"+p)
	}
	one, two, three := bases[0], bases[1], bases[2]

	c := oauthtest.RegisterPublic(t, one, "http://127.0.0.1:3000/cb")
	verifier, challenge := oauthtest.NewPKCE()
	f := oauthtest.NewBrowser(t).Authorize(oauthtest.Request{
		ClientID: c.ID, RedirectURI: c.RedirectURI, Scope: "roster:read", State: "p", Challenge: challenge,
	}, oauthtest.Bases{Authorize: two, Login: three, Consent: one}, seed.DemoAdminEmail, seed.DemoPassword, "approve")
	code := f.Callback.Query().Get("code")
	if code == "" || f.Callback.Query().Get("iss") != public {
		t.Fatalf("callback %s", f.Final.Location)
	}
	tok := oauthtest.Exchange(t, two, c, code, verifier)
	if tok.Status != http.StatusOK {
		t.Fatalf("redeem at the second process: %+v", tok)
	}
	ref := oauthtest.Refresh(t, three, c, tok.RefreshToken, nil)
	if ref.Status != http.StatusOK {
		t.Fatalf("refresh at the third process: %+v", ref)
	}
	if status, _, body := oauthtest.ReadRoster(t, one, ref.AccessToken); status != http.StatusOK || !strings.Contains(body, "total_children") {
		t.Fatalf("/mcp at the first process: %d %s", status, oauthtest.Snippet(body))
	}
	if r := oauthtest.Exchange(t, one, c, code, verifier); r.Error != "invalid_grant" {
		t.Fatalf("replay at the first process: %+v", r)
	}
	for _, b := range bases {
		if status, _, _ := oauthtest.ReadRoster(t, b, ref.AccessToken); status != http.StatusUnauthorized {
			t.Errorf("/mcp at %s after the replay: %d, want 401", b, status)
		}
	}
}

// startServe runs the server as a child process and waits until it answers /healthz; the
// process is interrupted when the test ends.
func startServe(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), mainArgsEnv+"="+strings.Join(append(args, "--drain", "0s"), "\x1f"))
	var out testsupport.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("server %v output:\n%s", args, out.String())
		}
	})
	addr := args[2]
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server %v did not come up:\n%s", args, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// freePorts returns n loopback addresses that were free a moment ago.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	out, err := freeport.Addrs(n)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestIdentityAndKeysCommands(t *testing.T) {
	t.Setenv("NEEMIAS_OAUTH_ISSUER", "https://idp.example") // the provider the server trusts
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
	out, err := run("identity", "link", "--email", seed.DemoVoluntarioEmail, "--issuer", "https://idp.example", "--subject", "abc-123")
	if err != nil || !strings.Contains(out, seed.DemoVoluntarioID.String()) || !strings.Contains(out, "VOLUNTARIO") {
		t.Fatalf("identity link: %v %s", err, out)
	}
	if _, err := run("identity", "link", "--email", "nobody@x.example", "--issuer", "https://idp.example", "--subject", "x"); err == nil {
		t.Error("linking an unknown email succeeded")
	}
	if _, err := run("keys", "rotate", "--verify-for", "1m"); err == nil {
		t.Error("a rotation shorter than the access-token lifetime was accepted")
	}
	out, err = run("keys", "rotate")
	if err != nil || !strings.Contains(out, "active signing key") {
		t.Fatalf("keys rotate: %v %s", err, out)
	}
}
