package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	sentinel := filepath.Join(root, "gen", "capapi", "names_gen.go")
	if err := os.MkdirAll(filepath.Dir(sentinel), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sentinel, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
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
	if b, _ := os.ReadFile(sentinel); string(b) != "keep" {
		t.Error("a broken spec must not touch generated files")
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
