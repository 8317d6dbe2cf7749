package main

import (
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/spf13/cobra"

	"github.com/neemias/neemias-mcp/internal/config"
	"github.com/neemias/neemias-mcp/internal/oauth/external"
	"github.com/neemias/neemias-mcp/internal/server"
)

// externalFlags are serve's knobs of external provider mode (server.ExternalAuth): with
// --oauth-issuer the server is a pure resource server of that OpenID Connect provider.
type externalFlags struct {
	issuer, audience, caFile                          string
	scopeClaim, churchClaim, roleClaim, clientIDClaim string
	roleMap, requiredClaims                           []string
	requireATJWT                                      bool
	introURL, introClientID, introSecretFile          string
	introCacheTTL                                     time.Duration
	acceptMissingAud                                  []string
	metadataProxy                                     bool
	algorithms, scopeGrants, challengeScopes          []string
	scopesFromRole                                    bool
	scopeGrantClaim, clientID                         string
}

func (f *externalFlags) add(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVar(&f.issuer, "oauth-issuer", os.Getenv("NEEMIAS_OAUTH_ISSUER"), "external provider mode: the OpenID Connect provider's issuer URL (https); no built-in authorization server runs and only its access tokens are accepted ($NEEMIAS_OAUTH_ISSUER)")
	fl.StringVar(&f.audience, "oauth-audience", os.Getenv("NEEMIAS_OAUTH_AUDIENCE"), "aud the provider puts in tokens for this server (default: the MCP URL, <public URL>/mcp) ($NEEMIAS_OAUTH_AUDIENCE)")
	fl.StringVar(&f.caFile, "oauth-ca-file", os.Getenv("NEEMIAS_OAUTH_CA_FILE"), "PEM file of the CA certificates trusted for the provider, instead of the system's ($NEEMIAS_OAUTH_CA_FILE)")
	fl.StringVar(&f.scopeClaim, "oauth-scope-claim", os.Getenv("NEEMIAS_OAUTH_SCOPE_CLAIM"), `claim holding the granted scopes, a string or an array; a dotted name walks nested objects (default "scope", then "scp") ($NEEMIAS_OAUTH_SCOPE_CLAIM)`)
	fl.StringVar(&f.churchClaim, "oauth-church-claim", os.Getenv("NEEMIAS_OAUTH_CHURCH_CLAIM"), "claim holding the church id; it must agree with the linked user's church (default: the linked user's church only) ($NEEMIAS_OAUTH_CHURCH_CLAIM)")
	fl.StringVar(&f.roleClaim, "oauth-role-claim", os.Getenv("NEEMIAS_OAUTH_ROLE_CLAIM"), "claim holding the provider's roles or groups, mapped by --oauth-role-map (default: the linked user's role) ($NEEMIAS_OAUTH_ROLE_CLAIM)")
	fl.StringSliceVar(&f.roleMap, "oauth-role-map", envList("NEEMIAS_OAUTH_ROLE_MAP"), "PROVIDER_VALUE=ROLE pairs (ADMIN, CADASTRO, VOLUNTARIO, RESPONSAVEL) for --oauth-role-claim; repeatable or comma-separated ($NEEMIAS_OAUTH_ROLE_MAP)")
	fl.StringVar(&f.clientIDClaim, "oauth-client-id-claim", os.Getenv("NEEMIAS_OAUTH_CLIENT_ID_CLAIM"), `claim naming the OAuth client, for the audit log (default "client_id", then "azp") ($NEEMIAS_OAUTH_CLIENT_ID_CLAIM)`)
	fl.BoolVar(&f.requireATJWT, "oauth-require-at-jwt", os.Getenv("NEEMIAS_OAUTH_REQUIRE_AT_JWT") == "true", "accept only tokens of JOSE type at+jwt (RFC 9068) ($NEEMIAS_OAUTH_REQUIRE_AT_JWT=true)")
	fl.StringVar(&f.introURL, "oauth-introspection-url", os.Getenv("NEEMIAS_OAUTH_INTROSPECTION_URL"), "RFC 7662 introspection endpoint for the provider's opaque (non-JWT) access tokens; https, or http on loopback; without it only JWT access tokens are accepted ($NEEMIAS_OAUTH_INTROSPECTION_URL)")
	fl.StringVar(&f.introClientID, "oauth-introspection-client-id", os.Getenv("NEEMIAS_OAUTH_INTROSPECTION_CLIENT_ID"), "client id this server authenticates to the introspection endpoint with (HTTP Basic) ($NEEMIAS_OAUTH_INTROSPECTION_CLIENT_ID)")
	fl.StringVar(&f.introSecretFile, "oauth-introspection-secret-file", os.Getenv("NEEMIAS_OAUTH_INTROSPECTION_SECRET_FILE"), "file holding that client's secret (surrounding whitespace trimmed); empty: no secret ($NEEMIAS_OAUTH_INTROSPECTION_SECRET_FILE)")
	fl.DurationVar(&f.introCacheTTL, "oauth-introspection-cache-ttl", envDuration("NEEMIAS_OAUTH_INTROSPECTION_CACHE_TTL"), "how long an active introspection answer is reused, never past the token's exp: the delay within which a revocation is seen (default 30s, at most 5m) ($NEEMIAS_OAUTH_INTROSPECTION_CACHE_TTL)")
	fl.StringSliceVar(&f.acceptMissingAud, "oauth-accept-missing-aud", envList("NEEMIAS_OAUTH_ACCEPT_MISSING_AUD"), "client ids (client_id or azp) whose tokens are accepted WITHOUT an aud claim, each acceptance logged and audited; a risk, see docs/external-provider.md; default none ($NEEMIAS_OAUTH_ACCEPT_MISSING_AUD)")
	fl.BoolVar(&f.metadataProxy, "oauth-metadata-proxy", os.Getenv("NEEMIAS_OAUTH_METADATA_PROXY") == "true", `serve the provider's metadata at /.well-known/oauth-authorization-server on this origin with "none" added to token_endpoint_auth_methods_supported, and name this origin as the authorization server (for providers that do not advertise public clients, like Keycloak) ($NEEMIAS_OAUTH_METADATA_PROXY=true)`)
	fl.StringSliceVar(&f.algorithms, "oauth-algorithms", envList("NEEMIAS_OAUTH_ALGORITHMS"), "JWS algorithms accepted in the provider's tokens (default every asymmetric one: RS256/384/512, PS256/384/512, ES256/384/512, EdDSA; never HMAC or none) ($NEEMIAS_OAUTH_ALGORITHMS)")
	fl.BoolVar(&f.scopesFromRole, "oauth-scopes-from-role", os.Getenv("NEEMIAS_OAUTH_SCOPES_FROM_ROLE") == "true", "a RISK, off by default: a token carrying none of this server's scopes (Dex, Google, plain OIDC) gets its role's non-sensitive scopes, and sensitive ones only by --oauth-scope-grant; no consent page, no step-up; logged at start-up; see docs/external-provider.md ($NEEMIAS_OAUTH_SCOPES_FROM_ROLE=true)")
	fl.StringSliceVar(&f.scopeGrants, "oauth-scope-grant", envList("NEEMIAS_OAUTH_SCOPE_GRANTS"), "GROUP=SCOPE pairs: with --oauth-scopes-from-role, a token whose --oauth-scope-grant-claim holds GROUP also gets SCOPE (the only way to a sensitive scope there), still within the role's scopes; repeatable ($NEEMIAS_OAUTH_SCOPE_GRANTS)")
	fl.StringVar(&f.scopeGrantClaim, "oauth-scope-grant-claim", os.Getenv("NEEMIAS_OAUTH_SCOPE_GRANT_CLAIM"), `claim holding the groups --oauth-scope-grant maps (default "groups") ($NEEMIAS_OAUTH_SCOPE_GRANT_CLAIM)`)
	fl.StringSliceVar(&f.challengeScopes, "oauth-challenge-scopes", envList("NEEMIAS_OAUTH_CHALLENGE_SCOPES"), "scopes clients are told to ask the provider for, in the 401 challenge and the protected-resource metadata's scopes_supported (default: this server's scopes); for Dex e.g. openid,groups,audience:server:client_id:neemias-mcp ($NEEMIAS_OAUTH_CHALLENGE_SCOPES)")
	fl.StringVar(&f.clientID, "oauth-client-id", os.Getenv("NEEMIAS_OAUTH_CLIENT_ID"), "the client id pre-registered at a provider without client registration (Dex, Entra, Google), published as client_id in the protected-resource metadata for clients to use ($NEEMIAS_OAUTH_CLIENT_ID)")
	fl.StringSliceVar(&f.requiredClaims, "oauth-required-claim", envList("NEEMIAS_OAUTH_REQUIRED_CLAIMS"), "NAME=VALUE string claims every token must carry, e.g. token_use=access; repeatable ($NEEMIAS_OAUTH_REQUIRED_CLAIMS)")
}

func envDuration(name string) time.Duration {
	d, _ := time.ParseDuration(os.Getenv(name)) // a malformed value is caught as the flag's default below
	return d
}

func envList(name string) []string {
	v := os.Getenv(name)
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// config is the external mode the flags ask for; nil (built-in mode) without --oauth-issuer.
func (f *externalFlags) config() (*server.ExternalAuth, error) {
	if f.issuer == "" {
		if f.audience != "" || f.caFile != "" || f.scopeClaim != "" || f.churchClaim != "" || f.roleClaim != "" ||
			f.clientIDClaim != "" || len(f.roleMap) > 0 || len(f.requiredClaims) > 0 || f.requireATJWT ||
			f.introURL != "" || f.introClientID != "" || f.introSecretFile != "" || f.introCacheTTL != 0 ||
			len(f.acceptMissingAud) > 0 || f.metadataProxy || len(f.algorithms) > 0 || f.scopesFromRole || len(f.scopeGrants) > 0 ||
			f.scopeGrantClaim != "" || len(f.challengeScopes) > 0 || f.clientID != "" {
			return nil, errors.New("the --oauth-* settings are for external provider mode; set --oauth-issuer too")
		}
		return nil, nil
	}
	x := &server.ExternalAuth{
		Issuer: f.issuer, Audience: f.audience, RequireAccessTokenType: f.requireATJWT,
		AcceptMissingAudience: f.acceptMissingAud, MetadataProxy: f.metadataProxy,
		Claims:         external.ClaimMapping{Scope: f.scopeClaim, Church: f.churchClaim, Role: f.roleClaim, ClientID: f.clientIDClaim, ScopeGrantClaim: f.scopeGrantClaim},
		ScopesFromRole: f.scopesFromRole, ChallengeScopes: f.challengeScopes, ClientID: f.clientID,
	}
	for _, a := range f.algorithms {
		x.Algorithms = append(x.Algorithms, jose.SignatureAlgorithm(strings.TrimSpace(a)))
	}
	if (len(f.scopeGrants) > 0 || f.scopeGrantClaim != "") && !f.scopesFromRole {
		return nil, errors.New("--oauth-scope-grant and --oauth-scope-grant-claim go with --oauth-scopes-from-role")
	}
	for _, e := range f.scopeGrants {
		g, sc, ok := strings.Cut(strings.TrimSpace(e), "=")
		if !ok || g == "" || sc == "" {
			return nil, fmt.Errorf("--oauth-scope-grant: %q is not GROUP=SCOPE", e)
		}
		if x.Claims.ScopeGrants == nil {
			x.Claims.ScopeGrants = map[string][]string{}
		}
		x.Claims.ScopeGrants[g] = append(x.Claims.ScopeGrants[g], sc)
	}
	var err error
	if x.Claims.Roles, err = pairs("--oauth-role-map", f.roleMap); err != nil {
		return nil, err
	}
	if x.RequiredClaims, err = pairs("--oauth-required-claim", f.requiredClaims); err != nil {
		return nil, err
	}
	if (x.Claims.Role == "") != (len(x.Claims.Roles) == 0) {
		return nil, errors.New("--oauth-role-claim and --oauth-role-map go together")
	}
	if f.introURL != "" {
		if f.introClientID == "" {
			return nil, errors.New("--oauth-introspection-url needs --oauth-introspection-client-id (and usually --oauth-introspection-secret-file)")
		}
		x.Introspection = &external.Introspection{Endpoint: f.introURL, ClientID: f.introClientID, CacheTTL: f.introCacheTTL}
		if f.introSecretFile != "" {
			b, err := os.ReadFile(f.introSecretFile)
			if err != nil {
				return nil, fmt.Errorf("--oauth-introspection-secret-file: %w", err)
			}
			if x.Introspection.ClientSecret = strings.TrimSpace(string(b)); x.Introspection.ClientSecret == "" {
				return nil, fmt.Errorf("--oauth-introspection-secret-file: %s is empty", f.introSecretFile)
			}
		}
	} else if f.introClientID != "" || f.introSecretFile != "" || f.introCacheTTL != 0 {
		return nil, errors.New("the --oauth-introspection-* settings need --oauth-introspection-url")
	}
	if f.caFile != "" {
		pem, err := os.ReadFile(f.caFile)
		if err != nil {
			return nil, fmt.Errorf("--oauth-ca-file: %w", err)
		}
		x.RootCAs = x509.NewCertPool()
		if !x.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--oauth-ca-file: no PEM certificate in %s", f.caFile)
		}
	}
	return x, nil
}

// pairs parses KEY=VALUE entries.
func pairs(flag string, list []string) (map[string]string, error) {
	if len(list) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, e := range list {
		k, v, ok := strings.Cut(strings.TrimSpace(e), "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("%s: %q is not NAME=VALUE", flag, e)
		}
		m[k] = v
	}
	return m, nil
}

// builtInOnly are serve's flags of the built-in authorization server, which external
// provider mode does not run: setting one with --oauth-issuer is a mistake worth stopping on.
var builtInOnly = []string{"access-token-ttl", "disable-registration", "registrations-per-hour", "login-provider-issuer",
	"login-provider-client-id", "login-provider-client-secret", "login-provider-name", "login-provider-only", "extra-resource"}

func checkModes(c *cobra.Command, x *server.ExternalAuth, as *authServerFlags) error {
	if as.providerOnly && as.providerIssuer == "" {
		return errors.New("--login-provider-only makes the --login-provider-issuer provider the only login; set --login-provider-issuer (and its client id and secret) too")
	}
	if x == nil {
		return nil
	}
	for _, name := range builtInOnly {
		if config.Changed(c.Flags(), name) {
			return fmt.Errorf("--%s configures the built-in authorization server, which external provider mode (--oauth-issuer) does not run", name)
		}
	}
	if as.providerIssuer != "" {
		return fmt.Errorf("%s configures the built-in authorization server, which external provider mode (--oauth-issuer) does not run", config.Setting("login-provider-issuer"))
	}
	return nil
}
