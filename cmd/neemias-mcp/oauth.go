package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/tokens"
)

// authServerFlags are serve's knobs of the built-in authorization server.
type authServerFlags struct {
	accessTTL        time.Duration
	noRegistration   bool
	providerIssuer   string
	providerClientID string
	providerSecret   string
	providerName     string
	providerOnly     bool
	registrationsPH  float64
	extraResources   []string
	sessionIdle      time.Duration
	sessionMax       time.Duration
}

func (f *authServerFlags) add(c *cobra.Command) {
	c.Flags().DurationVar(&f.accessTTL, "access-token-ttl", oauth.MaxAccessTokenTTL, "lifetime of issued access tokens (at most 10m)")
	c.Flags().BoolVar(&f.noRegistration, "disable-registration", false, "turn off Dynamic Client Registration (/register); clients then use Client ID Metadata Documents")
	c.Flags().Float64Var(&f.registrationsPH, "registrations-per-hour", 20, "dynamic client registrations allowed per client address and hour")
	c.Flags().StringSliceVar(&f.extraResources, "extra-resource", nil, "MCP URL of another Neemias server that uses this one as its identity provider (its --oauth-issuer is this server's public URL): clients may ask tokens for it with resource=URL (repeatable)")
	// Login through the church's own OpenID Connect provider. These were --upstream-issuer,
	// --upstream-client-id, … until issue 26: serve --help listed them beside the governed
	// upstream MCP servers' --upstream flags, an unrelated feature. The old names stay for
	// one release (config.Deprecate, after MarkSecret in serveCmd).
	c.Flags().StringVar(&f.providerIssuer, "login-provider-issuer", "", "issuer URL of the church's OpenID Connect provider, to offer login through it on the built-in authorization server's login page (not --oauth-issuer, which hands authorization to a provider altogether)")
	c.Flags().StringVar(&f.providerClientID, "login-provider-client-id", "", "this server's client id at that provider; redirect URI <public URL>/login/callback")
	c.Flags().StringVar(&f.providerSecret, "login-provider-client-secret", "", "its client secret (a secret: prefer --login-provider-client-secret-file)")
	c.Flags().StringVar(&f.providerName, "login-provider-name", "", "label of the provider's login button")
	c.Flags().BoolVar(&f.providerOnly, "login-provider-only", false, "log in only through the --login-provider-issuer provider: local passwords are refused and the login page offers only the provider; without the provider's client secret /authorize answers 503")
	c.Flags().DurationVar(&f.sessionIdle, "login-session-idle", oauth.DefaultLoginSessionIdle, "a browser's login session at the authorization server ends after this long unused (a step-up then asks for the password again); 0 turns login sessions off")
	c.Flags().DurationVar(&f.sessionMax, "login-session-max", oauth.DefaultLoginSessionMax, "a login session ends this long after the login, however much it is used")
}

// loginProviderRenames are the login provider's flags' names before issue 26, each with its
// current name: deprecated, kept for one release.
var loginProviderRenames = [][2]string{
	{"upstream-issuer", "login-provider-issuer"},
	{"upstream-client-id", "login-provider-client-id"},
	{"upstream-client-secret", "login-provider-client-secret"},
	{"upstream-client-secret-file", "login-provider-client-secret-file"},
	{"upstream-name", "login-provider-name"},
	{"upstream-only", "login-provider-only"},
}

func (f *authServerFlags) options() oauth.Options {
	o := oauth.Options{AccessTokenTTL: f.accessTTL, DisableRegistration: f.noRegistration, RegistrationPerHour: f.registrationsPH, ExtraResources: f.extraResources,
		LoginSessionIdle: f.sessionIdle, LoginSessionMax: f.sessionMax}
	if f.sessionIdle <= 0 {
		o.LoginSessionIdle = -1 // off
	}
	if f.providerIssuer != "" {
		o.Upstream = &oauth.Upstream{Issuer: f.providerIssuer, ClientID: f.providerClientID, ClientSecret: f.providerSecret, Name: f.providerName, Only: f.providerOnly}
	}
	return o
}

// keysCmd rotates the signing key of the tokens.
func keysCmd() *cobra.Command {
	var (
		dbf       dbFlags
		verifyFor time.Duration
	)
	c := &cobra.Command{Use: "keys", Short: "Manage the token signing keys and the pick-up codes' key"}
	rotate := &cobra.Command{
		Use:   "rotate",
		Short: "Make a new signing key and pick-up code key active; the old signing key keeps verifying for --verify-for, old pick-up codes until check-out",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if verifyFor < oauth.MaxAccessTokenTTL {
				return fmt.Errorf("--verify-for must be at least %s, the longest access-token lifetime", oauth.MaxAccessTokenTTL)
			}
			st, closeDB, err := openStore(cmd.Context(), &dbf)
			if err != nil {
				return err
			}
			defer closeDB()
			k, err := (&tokens.KeyStore{Pool: st.Pool()}).Rotate(cmd.Context(), verifyFor)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "active signing key %s; the previous key verifies for %s more\n", k.ID, verifyFor)
			return nil
		},
	}
	dbf.add(rotate)
	rotate.Flags().DurationVar(&verifyFor, "verify-for", 24*time.Hour, "how long the previous key keeps verifying (cover the longest-lived token, dev tokens included)")
	c.AddCommand(rotate)
	return c
}
