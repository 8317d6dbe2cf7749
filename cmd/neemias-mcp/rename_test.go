package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestLoginProviderRenamed: the OpenID Connect login provider's settings were --upstream-*
// until issue 26 (serve --help listed them beside the upstream MCP servers' --upstream
// flags); the old flags and variables still work for one release, each with a warning on
// standard error naming its new name.
func TestLoginProviderRenamed(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		err  string // serve stops here, before touching the database
		warn string
	}{
		{name: "old flag", args: []string{"--oauth-issuer", "https://idp.example", "--upstream-issuer", "https://up.example"},
			err:  "--login-provider-issuer configures the built-in authorization server",
			warn: "Flag --upstream-issuer has been deprecated, use --login-provider-issuer ($NEEMIAS_LOGIN_PROVIDER_ISSUER) instead"},
		{name: "old variable", args: []string{"--oauth-issuer", "https://idp.example"}, env: map[string]string{"NEEMIAS_UPSTREAM_ISSUER": "https://up.example"},
			err:  "--login-provider-issuer configures the built-in authorization server",
			warn: "$NEEMIAS_UPSTREAM_ISSUER is deprecated: use $NEEMIAS_LOGIN_PROVIDER_ISSUER (--login-provider-issuer) instead"},
		{name: "old bool variable", env: map[string]string{"NEEMIAS_UPSTREAM_ONLY": "true"},
			err:  "--login-provider-only makes the --login-provider-issuer provider the only login",
			warn: "$NEEMIAS_UPSTREAM_ONLY is deprecated"},
		{name: "new names, no warning", args: []string{"--login-provider-only"}, err: "set --login-provider-issuer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"NEEMIAS_UPSTREAM_ISSUER", "NEEMIAS_UPSTREAM_ONLY", "NEEMIAS_LOGIN_PROVIDER_ISSUER", "NEEMIAS_LOGIN_PROVIDER_ONLY", "NEEMIAS_OAUTH_ISSUER"} {
				t.Setenv(k, tc.env[k])
			}
			cmd := root()
			var stdout, stderr bytes.Buffer
			cmd.SetOut(&stdout)
			cmd.SetErr(&stderr)
			cmd.SetArgs(append([]string{"serve", "--database-url", "postgres://unused.invalid/x"}, tc.args...))
			err := cmd.Execute()
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
			// cobra writes pflag's flag deprecation to the command's output, which is standard
			// error unless a test sets it; ours goes to standard error.
			got := stdout.String() + stderr.String()
			if tc.warn == "" && strings.Contains(got, "deprecated") || !strings.Contains(got, tc.warn) {
				t.Errorf("warnings %q, want %q", got, tc.warn)
			}
		})
	}
}
