package main

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/neemias/neemias-mcp/internal/config"
)

// serveFlags returns serve's flags (its own and the inherited --log-level).
func serveFlags(t *testing.T) *pflag.FlagSet {
	t.Helper()
	r := root()
	s, _, err := r.Find([]string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.AddFlagSet(s.Flags())
	fs.AddFlagSet(r.PersistentFlags())
	return fs
}

// TestServeHelpListsEverySetting: serve --help names every flag with its variable and its
// default.
func TestServeHelpListsEverySetting(t *testing.T) {
	var out bytes.Buffer
	cmd := root()
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"serve", "--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	n := 0
	serveFlags(t).VisitAll(func(f *pflag.Flag) {
		if f.Name == "help" || f.Deprecated != "" {
			if f.Deprecated != "" && regexp.MustCompile(`(?m)^\s+--`+regexp.QuoteMeta(f.Name)+`\b`).MatchString(help) {
				t.Errorf("serve --help lists the deprecated --%s", f.Name)
			}
			return
		}
		n++
		if !strings.Contains(help, "--"+f.Name+" ") {
			t.Errorf("serve --help lacks --%s", f.Name)
		}
		if f.Name != "log-level" && !strings.Contains(help, "[$"+config.EnvName(f.Name)+"]") {
			t.Errorf("serve --help lacks $%s", config.EnvName(f.Name))
		}
	})
	for _, want := range []string{`(default "127.0.0.1:8080")`, "(default 60)", "--database-url-file", "--login-provider-client-secret-file", "--otlp-endpoint", "--mcp-host"} {
		if !strings.Contains(help, want) {
			t.Errorf("serve --help lacks %s", want)
		}
	}
	if n < 30 {
		t.Errorf("only %d settings", n)
	}
}

// TestServeRefusesBadSettings: a bad setting from the environment or a flag stops serve before
// anything starts, with an error naming the setting.
func TestServeRefusesBadSettings(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"NEEMIAS_RATE_BURST": "0"}, nil, "--rate-burst ($NEEMIAS_RATE_BURST) must be at least 1"},
		{map[string]string{"NEEMIAS_LOG_LEVEL": "chatty"}, nil, "--log-level ($NEEMIAS_LOG_LEVEL)"},
		{map[string]string{"NEEMIAS_ADDR": "nowhere"}, nil, "--addr ($NEEMIAS_ADDR) must be host:port"},
		{nil, []string{"--api-host", "api.example"}, "--mcp-host ($NEEMIAS_MCP_HOST) must be set too"},
		{map[string]string{"NEEMIAS_METRICS": "maybe"}, nil, `$NEEMIAS_METRICS: invalid value "maybe" for --metrics`},
	} {
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		cmd := root()
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		cmd.SetArgs(append([]string{"serve"}, tc.args...))
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: %v, want %q", tc.env, tc.args, err, tc.want)
		}
		for k := range tc.env {
			t.Setenv(k, "")
		}
	}
}

// TestTokenLifetimeBounded: development tokens cannot be minted for more than 12 hours (the
// verifier refuses longer ones too: internal/server TestDevTokens).
func TestTokenLifetimeBounded(t *testing.T) {
	for _, ttl := range []string{"13h", "0s", "-1h"} {
		cmd := root()
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		cmd.SetArgs([]string{"token", "--ttl", ttl})
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--ttl must be between 1s and 12h") {
			t.Errorf("token --ttl %s: %v", ttl, err)
		}
	}
}
