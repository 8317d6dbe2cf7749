package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neemias/neemias-mcp/internal/incident"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// TestIncidentCommands: the runbook's commands as an operator types them: record a stolen
// volunteer session (by email) and a leaked dump, list, show, update, write the subjects to a
// private file; bad input is refused with what to do.
func TestIncidentCommands(t *testing.T) {
	st := storetest.NewSeeded(t, seed.Options{ChildrenPerChurch: 4, Months: 1})
	dbURL := st.Pool().Config().ConnString()
	run := func(args ...string) (string, error) {
		t.Helper()
		var out bytes.Buffer
		cmd := root()
		cmd.SetOut(&out)
		cmd.SetErr(io.Discard)
		cmd.SetArgs(append(append([]string{"incident"}, args...), "--database-url", dbURL))
		err := cmd.Execute()
		return out.String(), err
	}
	// No entry of the volunteer yet: nothing to record from the audit log.
	from := time.Now().Add(-time.Hour).Format(time.RFC3339)
	if _, err := run("record", "--by", "Encarregada", "--church", seed.DemoChurchSlug, "--actor-user", seed.DemoVoluntarioEmail,
		"--from", from, "--detected", time.Now().Format(time.RFC3339), "--summary", "Volunteer's phone stolen"); err == nil ||
		!strings.Contains(err.Error(), "no allowed entry") {
		t.Errorf("an actor without entries: %v", err)
	}
	out, err := run("record", "--by", "TI", "--church", seed.DemoChurchSlug, "--whole-church", "--json",
		"--detected", time.Now().Add(-time.Hour).Format(time.RFC3339), "--summary", "Backup shared through a public link")
	var in incident.Incident
	if err != nil || json.Unmarshal([]byte(out), &in) != nil || in.Children() == 0 {
		t.Fatalf("record: %v\n%s", err, out)
	}
	id := in.ID.String()

	out, err = run("list")
	if err != nil || !strings.Contains(out, id) || !strings.Contains(out, "Backup shared") {
		t.Errorf("list: %v\n%s", err, out)
	}
	out, err = run("show", id)
	if err != nil || !strings.Contains(out, "Notification deadline") || !strings.Contains(out, "IX. Controller") {
		t.Errorf("show: %v\n%s", err, out)
	}
	out, err = run("update", id, "--anpd-notified", time.Now().Format(time.RFC3339), "--measures", "Link revoked")
	if err != nil || !strings.Contains(out, "ANPD notified") || !strings.Contains(out, "Link revoked") {
		t.Errorf("update: %v\n%s", err, out)
	}
	file := filepath.Join(t.TempDir(), "titulares.csv")
	if _, err := run("subjects", id, "--output", file); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("subjects file: %v, %v", fi, err)
	}
	if b, _ := os.ReadFile(file); strings.Count(string(b), "\n") != in.Guardians()+1 {
		t.Errorf("subjects file has %d lines, want %d guardians and a header", strings.Count(string(b), "\n"), in.Guardians())
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"record", "--by", "TI", "--summary", "Something happened", "--detected", "yesterday", "--whole-church", "--church", "demo"}, "--detected must be YYYY-MM-DD or RFC 3339"},
		{[]string{"record", "--by", "TI", "--summary", "Something happened", "--detected", "2026-11-01", "--church", "nowhere", "--whole-church"}, "nowhere"},
		{[]string{"record", "--summary", "Something happened", "--detected", "2026-11-01"}, `"by" not set`},
		{[]string{"show", "12"}, "is a UUID"},
		{[]string{"update", id}, "nothing to record"},
		{[]string{"subjects", id}, `"output" not set`},
	} {
		if _, err := run(tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}
