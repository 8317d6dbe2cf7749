package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
	"github.com/neemias/neemias-mcp/internal/subject"
)

// TestSubjectCommands: subject export writes JSON and HTML (file mode 0600), erase --dry-run
// and retention --dry-run print ids or counts and no name, and bad flags are refused.
func TestSubjectCommands(t *testing.T) {
	st := storetest.NewSeeded(t, seed.Options{ChildrenPerChurch: 4, Months: 1})
	dbURL := st.Pool().Config().ConnString()
	var guardian uuid.UUID
	var name string
	if err := st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT id, name FROM guardians WHERE user_id = $1`, seed.DemoResponsavelID).Scan(&guardian, &name)
	}); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		t.Helper()
		var out bytes.Buffer
		cmd := root()
		cmd.SetOut(&out)
		cmd.SetErr(io.Discard)
		cmd.SetArgs(append(append([]string{"subject"}, args...), "--church", seed.DemoChurchSlug, "--database-url", dbURL))
		err := cmd.Execute()
		return out.String(), err
	}
	out, err := run("export", "--guardian", guardian.String())
	var r subject.Report
	if err != nil || json.Unmarshal([]byte(out), &r) != nil || r.Guardian.Name != name || len(r.Children) == 0 {
		t.Fatalf("export json: %v, %d children", err, len(r.Children))
	}
	file := filepath.Join(t.TempDir(), "pedido.html")
	if _, err := run("export", "--guardian", guardian.String(), "--format", "html", "--output", file); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("output file: %v, %v", fi, err)
	}
	if b, _ := os.ReadFile(file); !strings.Contains(string(b), "<!DOCTYPE html>") {
		t.Error("not an HTML page")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"erase", "--guardian", guardian.String(), "--dry-run"}, "dry run: nothing changed"},
		{[]string{"retention", "--inactive-for", "24m", "--dry-run"}, "0 guardians would be erased"},
	} {
		out, err := run(tc.args...)
		if err != nil || !strings.Contains(out, tc.want) || strings.Contains(out, name) {
			t.Errorf("%v: %v\n%s", tc.args, err, out)
		}
	}
	for _, args := range [][]string{
		{"export", "--guardian", "Maria"},
		{"export", "--guardian", guardian.String(), "--format", "pdf"},
		{"erase", "--guardian", uuid.NewString()},
		{"retention", "--inactive-for", "24"},
	} {
		if _, err := run(args...); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	var still string
	if err := st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT name FROM guardians WHERE id = $1`, guardian).Scan(&still)
	}); err != nil || still != name {
		t.Error("a dry run erased the guardian")
	}
}
