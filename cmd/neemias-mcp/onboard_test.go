package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/neemias/neemias-mcp/internal/config"
	"github.com/neemias/neemias-mcp/internal/freeport"
	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// run executes one neemias-mcp command in-process and returns its standard output and error.
func run(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd := root()
	cmd.SetOut(&out)
	cmd.SetErr(io.Discard)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

// TestOnboardingWalkthrough performs docs/onboarding.md on an empty database: create the
// church, its accounts (the ADMIN's and the volunteer's with set-password links, the
// volunteer's replaced by user reset-password, the secretary's password set from standard
// input), classes and assignments, import the sample roster (dry run first), then serve: the
// ADMIN opens the link and chooses a password, an agent logs in with it (OAuth) and reads the
// roster it imported. No set-password code reaches the server's log.
func TestOnboardingWalkthrough(t *testing.T) {
	dbURL := storetest.NewEmptyDatabase(t)
	db := []string{"--database-url", dbURL}
	must := func(stdin string, args ...string) string {
		t.Helper()
		out, err := run(t, stdin, append(args, db...)...)
		if err != nil {
			t.Fatalf("neemias-mcp %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	// The server's address, known first: the links are printed under its public URL.
	addr, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + addr
	var cliOut strings.Builder // everything the commands print, to check the codes appear once
	link := func(out string) (string, string) {
		t.Helper()
		cliOut.WriteString(out)
		m := regexp.MustCompile(`(?m)^  (\S+/set-password\?code=(\S+))\n^code, if the link gets cut: (\S+)$`).FindStringSubmatch(out)
		if m == nil || m[2] != m[3] || !strings.HasPrefix(m[1], base+"/set-password?code=") || !strings.Contains(out, "shown only now") {
			t.Fatalf("no set-password link in:\n%s", out)
		}
		return m[1], m[2]
	}

	must("", "church", "create", "--name", "Igreja Batista Central", "--slug", "central", "--time-zone", "America/Sao_Paulo")
	adminLink, adminCode := link(must("", "user", "add", "--church", "central", "--email", "pastora@central.example", "--role", "ADMIN", "--name", "Pastora", "--public-url", base))
	must("", "user", "add", "--church", "central", "--email", "secretaria@central.example", "--role", "CADASTRO", "--local-login=false")
	oldLink, oldCode := link(must("", "user", "add", "--church", "central", "--email", "tio.joao@central.example", "--role", "VOLUNTARIO", "--public-url", base))
	newLink, newCode := link(must("", "user", "reset-password", "--church", "central", "--email", "tio.joao@central.example", "--public-url", base+"/", "--expires-in", "24h"))
	must("uma senha bem longa\n", "user", "set-password", "--church", "central", "--email", "secretaria@central.example")
	for _, c := range [][]string{{"Berçário", "0", "2"}, {"Maternal", "3", "5"}, {"Primários", "6", "8"}, {"Juniores", "9", "11"}} {
		must("", "class", "add", "--church", "central", "--name", c[0], "--min-age", c[1], "--max-age", c[2])
	}
	if out := must("", "volunteer", "assign", "--church", "central", "--email", "tio.joao@central.example", "--class", "Primários"); !strings.Contains(out, "now serves") {
		t.Errorf("assign: %s", out)
	}
	if out := must("", "volunteer", "assign", "--church", "central", "--email", "tio.joao@central.example", "--class", "Primários"); !strings.Contains(out, "already") {
		t.Errorf("assign again: %s", out)
	}
	users := must("", "user", "list", "--church", "central")
	cliOut.WriteString(users)
	inADay := time.Now().UTC().Add(24 * time.Hour).Format("2006-01-02")
	for _, want := range []string{`pastora@central\.example\s+ADMIN\s+Pastora\s+no, link until \d{4}-\d\d-\d\d \d\d:\d\d UTC\s+enabled`,
		`secretaria@central\.example\s+CADASTRO\s+secretaria\s+set\s+enabled`,
		`tio\.joao@central\.example\s+VOLUNTARIO\s+tio\.joao\s+no, link until ` + inADay + ` \d\d:\d\d UTC\s+enabled`} {
		if !regexp.MustCompile(want).MatchString(users) {
			t.Errorf("user list lacks %s:\n%s", want, users)
		}
	}
	if out := must("", "class", "list", "--church", "central"); !strings.Contains(out, "Primários") || !strings.Contains(out, "6-8") {
		t.Errorf("class list:\n%s", out)
	}

	sample := filepath.Join("..", "..", "docs", "examples", "roster-sample.csv")
	dry := must("", "import", "roster", sample, "--church", "central", "--dry-run")
	if !strings.Contains(dry, "nothing was written") || !strings.Contains(dry, "linha/line 10:") {
		t.Errorf("dry run report:\n%s", dry)
	}
	childrenPerClass := regexp.MustCompile(`(?m)\s(\d+)\s+active\s`)
	placed := func() (n int) {
		for _, m := range childrenPerClass.FindAllStringSubmatch(must("", "class", "list", "--church", "central"), -1) {
			c, _ := strconv.Atoi(m[1])
			n += c
		}
		return n
	}
	if n := placed(); n != 0 {
		t.Errorf("the dry run placed %d children", n)
	}
	reportFile := filepath.Join(t.TempDir(), "relatorio.txt")
	summary := must("", "import", "roster", sample, "--church", "central", "--report", reportFile)
	report, err := os.ReadFile(reportFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(summary, "9 rows imported, 1 refused") || !strings.Contains(string(report), "crianças / children") {
		t.Errorf("summary %q, report:\n%s", summary, report)
	}
	// The sample's children outgrow the classes as the years pass: those no class fits are
	// reported, and neither placed nor counted by the roster.
	unplaced := 0
	if m := regexp.MustCompile(`not placed in a class\s+(\d+)`).FindStringSubmatch(string(report)); m != nil {
		unplaced, _ = strconv.Atoi(m[1])
	}
	if n := placed(); n != 8-unplaced || unplaced > 2 {
		t.Errorf("%d children placed in classes and %d not, want the 8 imported", n, unplaced)
	}
	if fi, err := os.Stat(reportFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("report file mode: %v %v", fi.Mode(), err)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"user", "add", "--church", "central", "--email", "x@central.example", "--role", "PASTOR"}, "use one of ADMIN, CADASTRO, VOLUNTARIO, RESPONSAVEL"},
		{[]string{"user", "add", "--church", "central", "--email", "x@central.example"}, `required flag(s) "role" not set`},
		{[]string{"volunteer", "assign", "--church", "central", "--email", "secretaria@central.example", "--class", "Primários"}, "only VOLUNTARIO accounts"},
		{[]string{"volunteer", "assign", "--church", "central", "--email", "tio.joao@central.example", "--class", "Adolescentes"}, `no class named "Adolescentes"`},
		{[]string{"import", "roster", "nao-existe.csv", "--church", "central"}, "opening the roster file"},
		{[]string{"import", "roster", "testdata-none.csv", "--church", "outra"}, "opening the roster file"},
		{[]string{"user", "set-password", "--church", "central", "--email", "pastora@central.example"}, "no password on standard input"},
		{[]string{"user", "add", "--church", "central", "--email", "x@central.example", "--role", "ADMIN", "--public-url", "mcp.central.example"}, "--public-url"},
		{[]string{"user", "add", "--church", "central", "--email", "x@central.example", "--role", "ADMIN", "--expires-in", "1000h"}, "--expires-in 1000h0m0s: a set-password link lives from 5m0s to 720h0m0s"},
		{[]string{"user", "reset-password", "--church", "central", "--email", "nobody@central.example"}, `has no account with email "nobody@central.example"`},
		{[]string{"user", "reset-password", "--church", "central", "--email", "tio.joao@central.example", "--expires-in", "1m"}, "--expires-in"},
	} {
		if out, err := run(t, "", append(tc.args, db...)...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v (%s), want %q", tc.args, err, out, tc.want)
		}
	}
	messy := filepath.Join("..", "..", "internal", "rosterimport", "testdata", "messy-windows1252.csv")
	if out, err := run(t, "", append([]string{"import", "roster", messy, "--church", "central", "--strict"}, db...)...); err == nil ||
		!strings.Contains(err.Error(), "8 rows refused and --strict is set") || !strings.Contains(out, "refused, nothing was written") {
		t.Errorf("strict import: %v\n%s", err, out)
	}

	// Serve (its log captured), the ADMIN opens the link, and an agent logs in as the ADMIN.
	logFile, err := os.Create(filepath.Join(t.TempDir(), "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = logFile // logger() writes to os.Stderr; this test is not parallel
	t.Cleanup(func() { os.Stderr = stderr; logFile.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	serve := root()
	serve.SetOut(io.Discard)
	serve.SetErr(io.Discard)
	serve.SetArgs(append([]string{"serve", "--addr", addr}, db...))
	done := make(chan error, 1)
	go func() { done <- serve.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("serve did not stop")
		}
	})
	for deadline := time.Now().Add(60 * time.Second); ; {
		resp, err := http.Get(base + "/.well-known/oauth-protected-resource/mcp")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not come up: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	setPassword := func(link, password string) oauthtest.Page {
		t.Helper()
		b := oauthtest.NewBrowser(t)
		form := b.Get(link)
		if form.Status != http.StatusOK {
			return form
		}
		return b.PostForm(base+"/set-password", url.Values{"csrf": {oauthtest.Hidden(form.Body, "csrf")}, "code": {oauthtest.Hidden(form.Body, "code")},
			"password": {password}, "password2": {password}})
	}
	if p := setPassword(adminLink, "a senha da pastora"); p.Status != http.StatusOK || !strings.Contains(p.Body, "set-password-done") {
		t.Fatalf("the ADMIN's link: %d %s", p.Status, oauthtest.Snippet(p.Body))
	}
	if p := setPassword(adminLink, "outra senha qualquer"); p.Status != http.StatusBadRequest {
		t.Errorf("the ADMIN's link a second time: %d", p.Status)
	}
	if p := setPassword(oldLink, "a senha do tio joao"); p.Status != http.StatusBadRequest {
		t.Errorf("the link replaced by reset-password: %d", p.Status)
	}
	if p := setPassword(newLink, "a senha do tio joao"); p.Status != http.StatusOK {
		t.Errorf("the reset-password link: %d %s", p.Status, oauthtest.Snippet(p.Body))
	}
	users = must("", "user", "list", "--church", "central")
	if !regexp.MustCompile(`pastora@central\.example\s+ADMIN\s+Pastora\s+set\s+enabled`).MatchString(users) ||
		!regexp.MustCompile(`tio\.joao@central\.example\s+VOLUNTARIO\s+tio\.joao\s+set\s+enabled`).MatchString(users) {
		t.Errorf("after the link, user list:\n%s", users)
	}
	client := oauthtest.RegisterPublic(t, base, "http://127.0.0.1:3000/cb")
	verifier, challenge := oauthtest.NewPKCE()
	f := oauthtest.NewBrowser(t).Authorize(oauthtest.Request{
		ClientID: client.ID, RedirectURI: client.RedirectURI, Scope: "roster:read attendance:read", State: "s", Challenge: challenge, Resource: base + "/mcp",
	}, oauthtest.Bases{Authorize: base, Login: base, Consent: base}, "pastora@central.example", "a senha da pastora", "approve")
	tok := oauthtest.Exchange(t, base, client, f.Callback.Query().Get("code"), verifier)
	if tok.Status != http.StatusOK {
		t.Fatalf("token: %+v", tok)
	}
	status, _, body := oauthtest.ReadRoster(t, base, tok.AccessToken)
	if total := fmt.Sprintf(`"total_children":%d`, 8-unplaced); status != http.StatusOK || !strings.Contains(strings.ReplaceAll(body, `\"`, `"`), total) {
		t.Errorf("the ADMIN's roster: %d %s", status, oauthtest.Snippet(body))
	}
	status, _, body = oauthtest.MCP(t, base, tok.AccessToken, "resources/read", map[string]any{"uri": "neemias://attendance/summary?from=2026-06-01&to=2026-06-30"})
	if status != http.StatusOK || strings.Contains(body, `"error"`) {
		t.Errorf("June's attendance: %d %s", status, oauthtest.Snippet(body))
	}

	// Disabling the account ends the agent's access.
	must("", "user", "add", "--church", "central", "--email", "pastor2@central.example", "--role", "ADMIN")
	if out := must("", "user", "disable", "--church", "central", "--email", "pastora@central.example"); !strings.Contains(out, "grants are revoked") {
		t.Errorf("disable: %s", out)
	}
	// Another process disabled it: the server sees it within --token-check-cache (1s).
	deadline := time.Now().Add(config.DefaultTokenCheckCache + 2*time.Second)
	for {
		status, _, _ := oauthtest.ReadRoster(t, base, tok.AccessToken)
		if status == http.StatusUnauthorized {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("a disabled ADMIN's token still reads the roster after --token-check-cache: %d", status)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Each code was printed once (in its link and on its own line, by the command that issued
	// it), and none is in the server's log.
	serverLog, err := os.ReadFile(logFile.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(serverLog), "a password was set with a one-time link") {
		t.Errorf("the server's log lacks the set-password lines:\n%s", serverLog)
	}
	for _, code := range []string{adminCode, oldCode, newCode} {
		if n := strings.Count(cliOut.String(), code); n != 2 {
			t.Errorf("a code appears %d times in the commands' output, want 2 (link and code line)", n)
		}
		if strings.Contains(string(serverLog), code) {
			t.Error("a set-password code is in the server's log")
		}
	}
}

// TestImportRosterConsentText: consent-text add and list; an import that imports no row
// (a Google Form's "Sim" rows without --consent-version) exits non-zero; with the
// registered version it imports; an unregistered one is refused.
func TestImportRosterConsentText(t *testing.T) {
	db := []string{"--database-url", storetest.NewEmptyDatabase(t)}
	must := func(args ...string) string {
		t.Helper()
		out, err := run(t, "", append(args, db...)...)
		if err != nil {
			t.Fatalf("neemias-mcp %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	must("church", "create", "--name", "Igreja Formulário", "--slug", "form")
	form := filepath.Join("..", "..", "internal", "rosterimport", "testdata", "google-form.csv")
	if out, err := run(t, "", append([]string{"import", "roster", form, "--church", "form"}, db...)...); err == nil ||
		!strings.Contains(err.Error(), "no row was imported (4 refused)") || !strings.Contains(out, "--consent-version") {
		t.Errorf("an import of nothing: %v\n%s", err, out)
	}
	if _, err := run(t, "", append([]string{"import", "roster", form, "--church", "form", "--consent-version", "termo-2025-01"}, db...)...); err == nil ||
		!strings.Contains(err.Error(), "consent-text add") {
		t.Errorf("an unregistered --consent-version: %v", err)
	}
	if out := must("consent-text", "add", "--church", "form", "--version", "termo-2025-01", "--title", "Termo LGPD 2025"); !strings.Contains(out, "registered consent text termo-2025-01") {
		t.Errorf("consent-text add: %s", out)
	}
	if _, err := run(t, "", append([]string{"consent-text", "add", "--church", "form", "--version", "termo-2025-01", "--title", "Outro"}, db...)...); err == nil ||
		!strings.Contains(err.Error(), "already") {
		t.Errorf("the same version twice: %v", err)
	}
	if _, err := run(t, "", append([]string{"consent-text", "add", "--church", "form", "--version", "termo 2025", "--title", "Outro"}, db...)...); err == nil ||
		!strings.Contains(err.Error(), "--version") {
		t.Errorf("a version with a space: %v", err)
	}
	if out := must("consent-text", "list", "--church", "form"); !strings.Contains(out, "termo-2025-01") || !strings.Contains(out, "Termo LGPD 2025") {
		t.Errorf("consent-text list:\n%s", out)
	}
	if out := must("import", "roster", form, "--church", "form", "--consent-version", "termo-2025-01"); !strings.Contains(out, "importadas / imported: 3; recusadas / refused: 1") {
		t.Errorf("import with --consent-version:\n%s", out)
	}
}
