package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/oauth/cimd"
)

// errUnknownClient reports a client_id that names no client: not registered, or a metadata
// document that could not be fetched or is invalid. OAuth invalid_client; /authorize shows an
// error page and never redirects.
var errUnknownClient = errors.New("unknown client")

// Client is a registered client or one described by its metadata document. It implements
// op.Client for the library's request validation.
type Client struct {
	ID        string
	Name      string
	Redirects []string
	// Grants are the grant types the client may use (authorization_code, refresh_token).
	Grants []string
	// Method is the token endpoint authentication method: none, client_secret_basic or
	// client_secret_post.
	Method     string
	secretHash []byte
	// FromMetadataDocument is true for a Client ID Metadata Document client (client_id is an
	// https URL); false for a registered one.
	FromMetadataDocument bool
	ClientURI            string
	LogoURI              string
}

var registeredIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{16,64}$`)

// lookupClient finds the client client_id names. It wraps errUnknownClient when there is
// none; other errors are infrastructure failures.
func (a *AS) lookupClient(ctx context.Context, clientID string) (*Client, error) {
	if len(clientID) >= 7 && (strings.EqualFold(clientID[:7], "http://") || len(clientID) >= 8 && strings.EqualFold(clientID[:8], "https://")) {
		return a.metadataClient(ctx, clientID)
	}
	if !registeredIDPattern.MatchString(clientID) {
		return nil, fmt.Errorf("%w: malformed client_id", errUnknownClient)
	}
	row, err := a.q.GetOAuthClient(ctx, clientID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: not registered", errUnknownClient)
	}
	if err != nil {
		return nil, fmt.Errorf("loading client: %w", err)
	}
	return &Client{
		ID: row.ClientID, Name: row.ClientName, Redirects: row.RedirectUris, Grants: row.GrantTypes,
		Method: row.TokenEndpointAuthMethod, secretHash: row.ClientSecretHash,
		ClientURI: deref(row.ClientUri), LogoURI: deref(row.LogoUri),
	}, nil
}

// metadataClient resolves a Client ID Metadata Document client. The URL is checked before
// anything is fetched (https, a path, no userinfo, fragment, query or dot segments), and the
// fetched document is validated again here whatever the fetcher checked: its client_id must
// equal the URL byte for byte, its redirect URIs must be acceptable, and it may not claim a
// shared secret (a public document cannot hold one).
func (a *AS) metadataClient(ctx context.Context, clientID string) (*Client, error) {
	if a.cfg.ClientMetadata == nil {
		return nil, fmt.Errorf("%w: client metadata documents are not enabled", errUnknownClient)
	}
	if err := checkMetadataURL(clientID); err != nil {
		return nil, err
	}
	md, err := a.cfg.ClientMetadata.Fetch(ctx, clientID)
	if err != nil {
		return nil, fmt.Errorf("%w: metadata document: %w", errUnknownClient, err)
	}
	if md == nil || md.ClientID != clientID {
		return nil, cimd.NewError(cimd.ReasonClientIDMismatch, fmt.Errorf("%w: the document's client_id is not its URL", errUnknownClient))
	}
	if len(md.RedirectURIs) == 0 || len(md.RedirectURIs) > 20 {
		return nil, cimd.NewInvalidMember("redirect_uris", fmt.Errorf("%w: the document needs 1 to 20 redirect_uris", errUnknownClient))
	}
	for _, r := range md.RedirectURIs {
		if _, err := checkRedirectURI(r); err != nil {
			return nil, cimd.NewInvalidMember("redirect_uris", fmt.Errorf("%w: %w", errUnknownClient, err))
		}
	}
	if m := md.TokenEndpointAuthMethod; m != "" && m != "none" {
		return nil, cimd.NewInvalidMember("token_endpoint_auth_method", fmt.Errorf("%w: token_endpoint_auth_method %q is not supported for metadata-document clients (only none)", errUnknownClient, m))
	}
	grants := []string{"authorization_code", "refresh_token"}
	if len(md.GrantTypes) > 0 {
		grants = slices.DeleteFunc(slices.Clone(md.GrantTypes), func(g string) bool { return g != "authorization_code" && g != "refresh_token" })
	}
	if !slices.Contains(grants, "authorization_code") {
		return nil, cimd.NewInvalidMember("grant_types", fmt.Errorf("%w: the document does not allow the authorization_code grant", errUnknownClient))
	}
	if len(md.ResponseTypes) > 0 && !slices.Contains(md.ResponseTypes, "code") {
		return nil, cimd.NewInvalidMember("response_types", fmt.Errorf("%w: the document does not allow response_type code", errUnknownClient))
	}
	name, err := cleanName(md.ClientName)
	if err != nil {
		return nil, cimd.NewInvalidMember("client_name", fmt.Errorf("%w: client_name: %w", errUnknownClient, err))
	}
	if name == "" {
		name = clientID
	}
	return &Client{
		ID: clientID, Name: name, Redirects: md.RedirectURIs, Grants: grants, Method: "none",
		FromMetadataDocument: true, ClientURI: httpsOrEmpty(md.ClientURI), LogoURI: httpsOrEmpty(md.LogoURI),
	}, nil
}

// checkMetadataURL refuses, without any network use, a client_id that cannot be a metadata
// document URL (draft-ietf-oauth-client-id-metadata-document §3): https, a host, a path other
// than "/", no userinfo, query, fragment or dot segments, no whitespace or control bytes.
func checkMetadataURL(clientID string) error {
	if !strings.HasPrefix(clientID, "https://") {
		return cimd.NewError(cimd.ReasonNotHTTPS, fmt.Errorf("%w: a URL client_id must be https", errUnknownClient))
	}
	if len(clientID) > maxURILen {
		return cimd.NewError(cimd.ReasonBadURL, fmt.Errorf("%w: a URL client_id is limited to %d bytes", errUnknownClient, maxURILen))
	}
	for i := 0; i < len(clientID); i++ {
		if c := clientID[i]; c <= 0x20 || c >= 0x7f || c == '\\' || c == '#' || c == '?' {
			return cimd.NewError(cimd.ReasonBadURL, fmt.Errorf("%w: a URL client_id may not contain whitespace, control characters, a query or a fragment", errUnknownClient))
		}
	}
	u, err := url.Parse(clientID)
	if err != nil || u.User != nil || u.Hostname() == "" || u.Path == "" || u.Path == "/" || strings.Contains(u.Host, "@") {
		return cimd.NewError(cimd.ReasonBadURL, fmt.Errorf("%w: a URL client_id needs a host and a path, and no userinfo", errUnknownClient))
	}
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		if s := strings.ToLower(seg); s == "." || s == ".." || s == "%2e" || s == "%2e%2e" || s == ".%2e" || s == "%2e." {
			return cimd.NewError(cimd.ReasonBadURL, fmt.Errorf("%w: a URL client_id may not contain dot segments", errUnknownClient))
		}
	}
	return nil
}

// cleanName validates a client_name: at most 200 characters, no control characters (the
// consent page escapes it anyway).
func cleanName(s string) (string, error) {
	s = strings.TrimSpace(s)
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > 200 {
		return "", errors.New("must be valid text of at most 200 characters")
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r) {
			return "", errors.New("must not contain control characters")
		}
	}
	return s, nil
}

func httpsOrEmpty(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme == "https" && u.Host != "" && u.User == nil && len(s) <= maxURILen {
		return s
	}
	return ""
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

var _ op.Client = (*Client)(nil)

// GetID implements op.Client.
func (c *Client) GetID() string { return c.ID }

// RedirectURIs implements op.Client.
func (c *Client) RedirectURIs() []string { return c.Redirects }

// PostLogoutRedirectURIs implements op.Client: the logout page (PathLogout) is the person's,
// not an OpenID Connect RP-initiated logout, and redirects nowhere.
func (c *Client) PostLogoutRedirectURIs() []string { return nil }

// ApplicationType implements op.Client. It is always native: the library's redirect check
// then accepts exactly registered URIs and loopback URIs on another port, which is a superset
// of what matchRedirectURI, run before it on every request, lets through.
func (c *Client) ApplicationType() op.ApplicationType { return op.ApplicationTypeNative }

// AuthMethod implements op.Client.
func (c *Client) AuthMethod() oidc.AuthMethod { return oidc.AuthMethod(c.Method) }

// ResponseTypes implements op.Client. Every type passes the library's check so that our
// Authorize answers anything but "code" with unsupported_response_type (the library would say
// unauthorized_client).
func (c *Client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode, "token", oidc.ResponseTypeIDToken, oidc.ResponseTypeIDTokenOnly,
		"code token", "code id_token", "code id_token token"}
}

// GrantTypes implements op.Client.
func (c *Client) GrantTypes() []oidc.GrantType {
	out := make([]oidc.GrantType, len(c.Grants))
	for i, g := range c.Grants {
		out[i] = oidc.GrantType(g)
	}
	return out
}

// LoginURL implements op.Client; unused (Authorize redirects to the login page itself).
func (c *Client) LoginURL(string) string { return "" }

// AccessTokenType implements op.Client.
func (c *Client) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }

// IDTokenLifetime implements op.Client.
func (c *Client) IDTokenLifetime() time.Duration { return IDTokenTTL }

// DevMode implements op.Client: never (it would accept any http redirect URI).
func (c *Client) DevMode() bool { return false }

// RestrictAdditionalIdTokenScopes implements op.Client.
func (c *Client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

// RestrictAdditionalAccessTokenScopes implements op.Client.
func (c *Client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

// IsScopeAllowed implements op.Client: the spec's scopes (openid and offline_access are
// allowed by the library itself). Other scopes are dropped from the request.
func (c *Client) IsScopeAllowed(scope string) bool {
	_, ok := scopes.Describe(scope)
	return ok
}

// IDTokenUserinfoClaimsAssertion implements op.Client.
func (c *Client) IDTokenUserinfoClaimsAssertion() bool { return false }

// ClockSkew implements op.Client.
func (c *Client) ClockSkew() time.Duration { return 0 }

func (c *Client) allowsRefresh() bool { return slices.Contains(c.Grants, "refresh_token") }
