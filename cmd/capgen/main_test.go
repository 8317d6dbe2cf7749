package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/capgen"
)

// TestBadSpecFailsLikeACompilerAndWritesNothing: a broken spec gives file:line:col errors
// relative to the repository, a non-zero exit, and leaves generated files alone.
func TestBadSpecFailsLikeACompilerAndWritesNothing(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "spec"), 0o755); err != nil {
		t.Fatal(err)
	}
	bad := "kind: NeemiasCapabilitySpec\nschemaVersion: 1\nserverr: {}\n"
	if err := os.WriteFile(filepath.Join(root, "spec", "capabilities.yaml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	// Generated files in gen/ and outside it, the manifest that names them included.
	var sentinels []string
	for _, p := range []string{"gen/capapi/names_gen.go", "server.json", "docs/scope-matrix.md", capgen.ManifestPath} {
		sentinel := filepath.Join(root, filepath.FromSlash(p))
		sentinels = append(sentinels, sentinel)
		if err := os.MkdirAll(filepath.Dir(sentinel), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(sentinel, []byte("keep"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, sub := range []string{"generate", "check", "validate", "scaffold"} {
		var stdout, stderr bytes.Buffer
		cmd := newRoot()
		cmd.SetOut(&stdout)
		cmd.SetErr(&stderr)
		cmd.SetArgs([]string{sub, "--root", root})
		if err := cmd.Execute(); err == nil {
			t.Fatalf("%s: want failure", sub)
		}
		if !strings.Contains(stderr.String(), `spec/capabilities.yaml:3:1: unknown key "serverr" in the spec (did you mean "server"?)`) {
			t.Errorf("%s: stderr lacks the compiler-style diagnostic:\n%s", sub, stderr.String())
		}
	}
	for _, sentinel := range sentinels {
		if b, _ := os.ReadFile(sentinel); string(b) != "keep" {
			t.Errorf("a broken spec must not touch generated files (%s changed)", sentinel)
		}
	}
}

// TestNextMigration: one above the highest migration, never a gap below it.
func TestNextMigration(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"00001_app_role.sql", "00090_spec_row_filters.sql", "00107_consent_revoked.sql", "00109_incident_register.sql", "README.md"} {
		p := filepath.Join(root, "queries", "schema", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("-- +goose Up\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"next-migration"}, "00110\n"},
		{[]string{"next-migration", "checkin_notes"}, "queries/schema/00110_checkin_notes.sql\n"},
	} {
		var stdout, stderr bytes.Buffer
		cmd := newRoot()
		cmd.SetOut(&stdout)
		cmd.SetErr(&stderr)
		cmd.SetArgs(append(tc.args, "--root", root))
		if err := cmd.Execute(); err != nil || stdout.String() != tc.want {
			t.Errorf("%v = %q, %v; want %q", tc.args, stdout.String(), err, tc.want)
		}
	}
	cmd := newRoot()
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	cmd.SetArgs([]string{"next-migration", "Checkin Notes", "--root", root})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "is not snake_case") {
		t.Errorf("a bad name: %v", err)
	}
}

func TestValidateAndInspectTheRealSpec(t *testing.T) {
	for _, args := range [][]string{{"validate"}, {"inspect", "--role", "RESPONSAVEL"}, {"check"}} {
		var stdout, stderr bytes.Buffer
		cmd := newRoot()
		cmd.SetOut(&stdout)
		cmd.SetErr(&stderr)
		cmd.SetArgs(append(args, "--root", "../.."))
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
	}
}
