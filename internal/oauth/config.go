package oauth

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/neemias/neemias-mcp/internal/ratelimit"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/tokens"
)

// Limits that are not configurable: the protocol's own.
const (
	// CodeTTL is how long an authorization code may be redeemed (OAuth 2.1 recommends at most
	// 10 minutes; 60 seconds is plenty for a client that is waiting for it).
	CodeTTL = 60 * time.Second
	// AuthRequestTTL is how long a person has for login and consent.
	AuthRequestTTL = 10 * time.Minute
	// MaxAccessTokenTTL bounds Options.AccessTokenTTL: an access token cannot be recalled once
	// issued (only its grant can), so it must not live long.
	MaxAccessTokenTTL = 10 * time.Minute
	// MaxLoginFailures is how many wrong passwords one authorization request tolerates.
	MaxLoginFailures = 5
	// IDTokenTTL is the lifetime of ID tokens (issued when a client asks for openid).
	IDTokenTTL = 10 * time.Minute
)

// Options are the operator's knobs (server.Config.AuthServer; flags of `neemias-mcp serve`).
// The zero value is a working configuration.
type Options struct {
	// AccessTokenTTL is the access tokens' lifetime: default and maximum 10 minutes.
	AccessTokenTTL time.Duration
	// RefreshTokenTTL is how long an unused refresh token stays valid (default 14 days);
	// GrantTTL the absolute lifetime of a grant, after which the person logs in again
	// (default 30 days).
	RefreshTokenTTL time.Duration
	GrantTTL        time.Duration
	// DisableRegistration turns Dynamic Client Registration off (MCP 2026-07-28 deprecates it
	// in favour of Client ID Metadata Documents); /register then answers 404 and the metadata
	// does not advertise it.
	DisableRegistration bool
	// RegistrationPerHour and RegistrationBurst limit registrations per client IP address
	// (defaults 20/hour, burst 20). Like every limit here, shared by the replicas when
	// Config.Limits is (ratelimit.Postgres).
	RegistrationPerHour float64
	RegistrationBurst   int
	// LoginPerMinute and LoginBurst limit password attempts per client IP address (defaults
	// 30/minute, burst 30), on top of MaxLoginFailures per authorization request.
	LoginPerMinute float64
	LoginBurst     int
	// AuthorizePerMinute and AuthorizeBurst limit authorization requests per client IP address
	// (defaults 30/minute, burst 30): each stores a pending request for AuthRequestTTL.
	AuthorizePerMinute float64
	AuthorizeBurst     int
	// TokenPerMinute and TokenBurst limit token requests per client IP address (defaults
	// 120/minute, burst 60).
	TokenPerMinute float64
	TokenBurst     int
	// ClientMetadata resolves client_ids that are https URLs (Client ID Metadata Documents).
	// Nil turns the feature off: such client_ids are unknown clients.
	ClientMetadata ClientMetadataFetcher
	// Upstream, when set, offers login through the church's OpenID Connect provider besides
	// local accounts.
	Upstream *Upstream
	// ExtraResources are the MCP endpoints of other Neemias servers that run in external
	// provider mode with this server as their identity provider (server.ExternalAuth). A
	// `resource` parameter naming one of them (in any equivalent form) gets an access token
	// whose aud is that resource, exactly as listed here; the scopes are still capped by the
	// person's role at this server, and the consent page names the resource. Without a
	// `resource` parameter the token is for this server's own MCP endpoint, as always. Any
	// other resource stays invalid_target.
	ExtraResources []string
	// LoginSessionIdle and LoginSessionMax bound the login session a browser gets after a
	// login (session.go): it ends after LoginSessionIdle without use (default 30 minutes) and
	// LoginSessionMax after the login (default 8 hours), at /logout, and when the account's
	// password or role changes or it is disabled. A negative LoginSessionIdle turns sessions
	// off: every authorization request asks for the password.
	LoginSessionIdle time.Duration
	LoginSessionMax  time.Duration
}

// Upstream is an OpenID Connect provider people may log in with. Its accounts map to local
// users through the oauth_upstream_identities table (issuer and subject, never email); an
// account that is not linked logs in nowhere. Link one with `neemias-mcp identity link`.
type Upstream struct {
	// Issuer is the provider's issuer URL (discovery runs on first use).
	Issuer string
	// ClientID and ClientSecret are this server's registration at the provider, whose
	// redirect URI is <public URL>/login/callback.
	ClientID     string
	ClientSecret string
	// Name labels the login button, e.g. "Google Workspace da igreja" (default "provedor da
	// igreja").
	Name string
	// Only makes the provider the only way in: the login page offers no password form and
	// local password logins are refused (403). It needs ClientSecret: without one,
	// /authorize answers 503 rather than fall back to local logins.
	Only bool
	// Scopes requested upstream (default openid).
	Scopes []string
	// HTTPClient talks to the provider (default: a client with a 10-second timeout).
	HTTPClient *http.Client
}

// Config assembles the authorization server (internal/server fills it).
type Config struct {
	// Issuer is the public base URL, exactly as published in the metadata and the tokens'
	// `iss`; never derived from request headers.
	Issuer string
	// Resource is the canonical URL of the protected MCP endpoint: the audience of tokens
	// requested without a `resource` parameter. ResourceAliases are the other URLs this
	// server's MCP endpoint answers at, each with protected-resource metadata of its own (the
	// /sse and /mcp/ aliases; in a loopback deployment, the same paths under the other
	// loopback host names): each is accepted as the `resource` parameter (in any equivalent
	// form, RFC 8707) and a token for it carries it, as listed, as its audience. The resource
	// server accepts every one of them as an audience.
	Resource        string
	ResourceAliases []string
	Store           *store.Store
	Keys            *tokens.KeyStore
	Logger          *slog.Logger
	// Limits keeps the per-address rate limits' buckets (nil: this process's memory;
	// internal/server passes the store shared by the replicas, ratelimit.Postgres).
	Limits ratelimit.Store
	// OnRevoke, if set, is called after this process commits the revocation of a grant (RFC
	// 7009 revocation, a replayed code, a reused refresh token, a refresh of a disabled
	// account; user is then that account's id, else empty): the resource server forgets its
	// cached verdicts of those tokens (tokens.CheckCache.Forget).
	OnRevoke func(grant, user string)
	Options
}

func (o Options) withDefaults() Options {
	if o.AccessTokenTTL <= 0 || o.AccessTokenTTL > MaxAccessTokenTTL {
		o.AccessTokenTTL = MaxAccessTokenTTL
	}
	if o.RefreshTokenTTL <= 0 {
		o.RefreshTokenTTL = 14 * 24 * time.Hour
	}
	if o.GrantTTL <= 0 {
		o.GrantTTL = 30 * 24 * time.Hour
	}
	if o.RegistrationPerHour <= 0 {
		o.RegistrationPerHour = 20
	}
	if o.RegistrationBurst <= 0 {
		o.RegistrationBurst = 20
	}
	if o.LoginPerMinute <= 0 {
		o.LoginPerMinute = 30
	}
	if o.LoginBurst <= 0 {
		o.LoginBurst = 30
	}
	if o.AuthorizePerMinute <= 0 {
		o.AuthorizePerMinute = 30
	}
	if o.AuthorizeBurst <= 0 {
		o.AuthorizeBurst = 30
	}
	if o.TokenPerMinute <= 0 {
		o.TokenPerMinute = 120
	}
	if o.TokenBurst <= 0 {
		o.TokenBurst = 60
	}
	if o.LoginSessionIdle == 0 {
		o.LoginSessionIdle = DefaultLoginSessionIdle
	}
	if o.LoginSessionMax <= 0 {
		o.LoginSessionMax = DefaultLoginSessionMax
	}
	if o.LoginSessionIdle > o.LoginSessionMax {
		o.LoginSessionIdle = o.LoginSessionMax
	}
	return o
}

// ClientMetadata is a client's registration as published in its Client ID Metadata Document
// (the RFC 7591 members this server uses).
type ClientMetadata struct {
	ClientID                string
	ClientName              string
	RedirectURIs            []string
	GrantTypes              []string
	ResponseTypes           []string
	TokenEndpointAuthMethod string
	ClientURI               string
	LogoURI                 string
}

// ClientMetadataFetcher fetches and validates the metadata document of an https client_id
// (internal/oauth/cimd, with its SSRF defences and caching). The authorization server calls it
// only for a client_id that passed its own URL checks, and validates the result again.
type ClientMetadataFetcher interface {
	Fetch(ctx context.Context, clientID string) (*ClientMetadata, error)
}

// ClientMetadataFetcherFunc adapts a function to ClientMetadataFetcher.
type ClientMetadataFetcherFunc func(ctx context.Context, clientID string) (*ClientMetadata, error)

// Fetch calls f.
func (f ClientMetadataFetcherFunc) Fetch(ctx context.Context, clientID string) (*ClientMetadata, error) {
	return f(ctx, clientID)
}

func (c Config) validate() error {
	switch {
	case c.Issuer == "" || c.Resource == "":
		return errors.New("oauth: issuer and resource are required")
	case c.Store == nil || c.Keys == nil:
		return errors.New("oauth: store and key store are required")
	case c.Upstream != nil && (c.Upstream.Issuer == "" || c.Upstream.ClientID == ""):
		return errors.New("oauth: the upstream provider needs an issuer and a client id")
	}
	return nil
}
