package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neemias/neemias-mcp/internal/config"
)

// hideSecretDefaults keeps secrets out of every command's --help (issue 25): a flag's default
// is printed there, and some defaults come from the environment ($DATABASE_URL, with its
// password, in user, identity link, migrate, seed and every other command that opens the
// database). A secret flag's default is not shown at all; any other default that is a URL
// with a password shows it masked. The values themselves are untouched.
func hideSecretDefaults(c *cobra.Command) {
	hide := func(f *pflag.Flag) {
		switch {
		case config.IsSecret(f):
			f.DefValue = ""
		case strings.Contains(f.DefValue, "://"):
			f.DefValue = config.MaskURLPassword(f.DefValue)
		}
	}
	c.Flags().VisitAll(hide)
	c.PersistentFlags().VisitAll(hide)
	for _, sub := range c.Commands() {
		hideSecretDefaults(sub)
	}
}
