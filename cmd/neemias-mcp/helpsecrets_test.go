package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestNoSecretInAnyHelp: with secrets in the environment ($DATABASE_URL with a password, the
// login provider's client secret), no command's --help prints them (issue 25: user, identity
// link, migrate, seed … printed $DATABASE_URL as their default).
func TestNoSecretInAnyHelp(t *testing.T) {
	const pw = "s3cr3t-pw-in-env"
	t.Setenv("DATABASE_URL", "postgres://neemias:"+pw+"@db.internal:5432/neemias")
	t.Setenv("NEEMIAS_DATABASE_URL", "postgres://neemias:"+pw+"@db.internal:5432/neemias")
	t.Setenv("NEEMIAS_LOGIN_PROVIDER_CLIENT_SECRET", pw)
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	walk(root(), nil)
	if len(paths) < 20 {
		t.Fatalf("only %d commands", len(paths))
	}
	for _, p := range paths {
		var out bytes.Buffer
		cmd := root()
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(append(append([]string(nil), p...), "--help"))
		if err := cmd.Execute(); err != nil {
			t.Errorf("%v --help: %v", p, err)
		}
		if strings.Contains(out.String(), pw) {
			t.Errorf("%q --help prints a secret:\n%s", strings.Join(p, " "), out.String())
		}
	}
	t.Logf("%d commands' help checked", len(paths))
}
