package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neemias/neemias-mcp/internal/config"
	"github.com/neemias/neemias-mcp/internal/server"
	"github.com/neemias/neemias-mcp/internal/upstream"
)

// upstreamFlags are the runtime settings of the governed upstream MCP servers (issue 11):
// URLs, tools, credentials and the feature flag, never in the spec. Shared by every command
// that reaches upstreams.
type upstreamFlags struct {
	enabled                  string
	urls, tools, tokens, pii []string
	connectTimeout, timeout  time.Duration
}

// upstreamFlagNames are the flags of upstreamFlags: each is also the environment variable
// config.EnvName makes of it (--upstream ⇒ $NEEMIAS_UPSTREAM, --upstream-token-file ⇒
// $NEEMIAS_UPSTREAM_TOKEN_FILE), the list ones ';'-separated (their entries hold commas).
var upstreamFlagNames = []string{"upstreams", "upstream", "upstream-tools", "upstream-token-file", "upstream-pii",
	"upstream-connect-timeout", "upstream-timeout"}

func (f *upstreamFlags) add(fl *pflag.FlagSet) {
	// Every usage starts "upstream MCP servers": the --upstream* flags are this one feature
	// (the OpenID Connect login provider's are --login-provider-*).
	fl.StringVar(&f.enabled, "upstreams", "", "upstream MCP servers (governed client, issue 11): on or off (default off: no upstream tool, no connection)")
	fl.StringArrayVar(&f.urls, "upstream", nil, "upstream MCP server, id=URL: the exact canonical Streamable HTTP URL of an upstream the spec declares, https or http on loopback; repeatable")
	fl.StringArrayVar(&f.tools, "upstream-tools", nil, "upstream MCP server's tools, id=tool1,tool2: narrows the spec's list (never widens it, never all); repeatable")
	fl.StringArrayVar(&f.tokens, "upstream-token-file", nil, "upstream MCP server's credential, id=path: file holding its own static bearer token; default none; repeatable")
	fl.StringArrayVar(&f.pii, "upstream-pii", nil, "upstream MCP server's personal-data policy, id=request:MODE,response:MODE: may only tighten the spec's (redact to enforce); loosening it to redact is a spec change and a rebuild; repeatable")
	fl.DurationVar(&f.connectTimeout, "upstream-connect-timeout", upstream.DefaultConnectTimeout, "upstream MCP servers: TCP connect and TLS handshake timeout")
	fl.DurationVar(&f.timeout, "upstream-timeout", upstream.DefaultCallTimeout, "upstream MCP servers: timeout of one attempt of a call")
	for _, n := range []string{"upstream", "upstream-tools", "upstream-token-file", "upstream-pii"} {
		config.SetEnvSeparator(fl, n, ";")
	}
}

func (f *upstreamFlags) config() (upstream.Config, error) {
	on, err := upstream.ParseFlag(f.enabled)
	if err != nil {
		return upstream.Config{}, err
	}
	ups, err := upstream.ParseFlags(f.urls, f.tools, f.tokens, f.pii)
	if err != nil {
		return upstream.Config{}, err
	}
	for i := range ups {
		ups[i].ConnectTimeout, ups[i].CallTimeout = f.connectTimeout, f.timeout
	}
	return upstream.Config{Enabled: on, Upstreams: ups}, nil
}

func upstreamCmd() *cobra.Command {
	c := &cobra.Command{Use: "upstream", Short: "Governed upstream MCP servers"}
	var f upstreamFlags
	check := &cobra.Command{
		Use:   "check",
		Short: "Connect to each configured upstream and print its tools: which are exposed, which refused and why",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.config()
			if err != nil {
				return err
			}
			if !cfg.Enabled {
				return errors.New("upstreams are off: nothing to check (--upstreams on or NEEMIAS_UPSTREAMS=on)")
			}
			if len(cfg.Upstreams) == 0 {
				return errors.New("no upstream configured (--upstream id=URL)")
			}
			// What serve would offer: the spec's tools and policy of each configured upstream.
			if cfg, err = server.SpecUpstreams(cfg, logger()); err != nil {
				return err
			}
			cl, err := upstream.New(cfg, upstream.Options{})
			if err != nil {
				return err
			}
			defer cl.Close()
			reps, err := cl.Check(cmd.Context())
			if err != nil {
				return err
			}
			upstream.WriteReports(cmd.OutOrStdout(), reps)
			var bad []string
			for _, r := range reps {
				if r.Err != "" {
					bad = append(bad, r.Upstream+": unreachable")
				}
				for _, t := range r.Tools {
					if t.Refused == "not offered by the upstream" {
						bad = append(bad, fmt.Sprintf("%s: allowlisted tool %q not offered", r.Upstream, t.Name))
					}
				}
			}
			if len(bad) > 0 {
				return errors.New(strings.Join(bad, "; "))
			}
			return nil
		},
	}
	f.add(check.Flags())
	config.DocumentEnv(check.Flags())
	c.AddCommand(check)
	return c
}
