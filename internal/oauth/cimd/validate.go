package cimd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-jose/go-jose/v4"
)

// Limits on a document's contents.
const (
	maxURLLen          = 2048
	maxRedirectURIs    = 20
	maxClientNameRunes = 200
	maxScopeLen        = 1024
)

// IsMetadataURL reports whether clientID is meant as a Client ID Metadata Document URL, that
// is, whether the authorization server should hand it to Fetch rather than look it up among
// registered clients. Clients we register ourselves never get an id of this shape.
func IsMetadataURL(clientID string) bool {
	return len(clientID) >= len("https://") && strings.EqualFold(clientID[:len("https://")], "https://")
}

// ParseClientID checks that clientID is an acceptable Client ID Metadata Document URL without
// touching the network, and returns it parsed. Errors wrap ErrNotMetadataURL.
func ParseClientID(clientID string) (*url.URL, error) {
	if clientID == "" || len(clientID) > maxURLLen {
		return nil, because(ReasonBadURL, fmt.Errorf("%w: empty or longer than %d bytes", ErrNotMetadataURL, maxURLLen))
	}
	if !strings.HasPrefix(clientID, "https://") {
		return nil, because(ReasonNotHTTPS, fmt.Errorf("%w: scheme must be https", ErrNotMetadataURL))
	}
	for i := 0; i < len(clientID); i++ {
		switch c := clientID[i]; {
		case c <= 0x20 || c >= 0x7f:
			return nil, because(ReasonBadURL, fmt.Errorf("%w: whitespace, control or non-ASCII character", ErrNotMetadataURL))
		case c == '\\':
			return nil, because(ReasonBadURL, fmt.Errorf("%w: backslash", ErrNotMetadataURL))
		case c == '#':
			return nil, because(ReasonBadURL, fmt.Errorf("%w: fragment", ErrNotMetadataURL))
		}
	}
	rest := clientID[len("https://"):]
	authority, pathAndQuery := rest, ""
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		authority, pathAndQuery = rest[:i], rest[i:]
	}
	if strings.Contains(authority, "@") {
		return nil, because(ReasonBadURL, fmt.Errorf("%w: userinfo", ErrNotMetadataURL))
	}
	if strings.Contains(authority, "%") {
		return nil, because(ReasonBadURL, fmt.Errorf("%w: percent-encoded host", ErrNotMetadataURL))
	}
	u, err := url.Parse(clientID)
	if err != nil || u.Scheme != "https" || u.Opaque != "" || u.User != nil || u.Host == "" {
		return nil, because(ReasonBadURL, fmt.Errorf("%w: not an absolute https URL", ErrNotMetadataURL))
	}
	if err := checkHostSyntax(u.Hostname()); err != nil {
		return nil, err
	}
	if strings.HasSuffix(u.Host, ":") {
		return nil, because(ReasonBadURL, fmt.Errorf("%w: empty port", ErrNotMetadataURL))
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 || p[0] == '0' {
			return nil, because(ReasonBadURL, fmt.Errorf("%w: bad port", ErrNotMetadataURL))
		}
	}
	path, _, _ := strings.Cut(pathAndQuery, "?")
	if path == "" || path == "/" {
		return nil, because(ReasonBadURL, fmt.Errorf("%w: no path", ErrNotMetadataURL))
	}
	for _, seg := range strings.Split(path, "/") {
		if s := strings.ReplaceAll(strings.ToLower(seg), "%2e", "."); s == "." || s == ".." {
			return nil, because(ReasonBadURL, fmt.Errorf("%w: dot segment in path", ErrNotMetadataURL))
		}
	}
	return u, nil
}

// ErrInvalidRedirectURI is wrapped by ValidateRedirectURI's errors.
var ErrInvalidRedirectURI = errors.New("invalid redirect URI")

// deniedSchemes can never be redirect targets: they run code, read local data or are not
// navigations an authorization response can be delivered through.
var deniedSchemes = []string{
	"javascript", "data", "file", "vbscript", "blob", "about", "filesystem", "view-source",
	"mailto", "tel", "sms", "ftp", "ws", "wss", "jar", "urn",
}

// ValidateRedirectURI checks one registered redirect URI: absolute, no fragment, no
// whitespace, control or non-ASCII bytes; https with a host and no userinfo; http only on a
// loopback host (127.0.0.1, [::1], localhost; RFC 8252 §7.3); or a private-use scheme for
// native apps (RFC 8252 §7.1) that is not on a deny list (javascript:, data:, file:, …).
// The authorization server (internal/oauth/redirect.go) applies its own, stricter check on
// every redirect URI as well, whether it came from a metadata document or from registration;
// the two rule sets differ in details (length limit, denied schemes, loopback forms) and are
// to be unified deliberately, not by accident.
func ValidateRedirectURI(raw string) error {
	if raw == "" || len(raw) > maxURLLen {
		return fmt.Errorf("%w: empty or longer than %d bytes", ErrInvalidRedirectURI, maxURLLen)
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= 0x20 || c >= 0x7f || c == '\\' {
			return fmt.Errorf("%w: whitespace, control, backslash or non-ASCII character", ErrInvalidRedirectURI)
		}
	}
	if strings.Contains(raw, "#") {
		return fmt.Errorf("%w: fragment", ErrInvalidRedirectURI)
	}
	scheme, _, ok := strings.Cut(raw, ":")
	if !ok || !validScheme(scheme) {
		return fmt.Errorf("%w: not an absolute URI", ErrInvalidRedirectURI)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: unparsable", ErrInvalidRedirectURI)
	}
	lower := strings.ToLower(scheme)
	if slices.Contains(deniedSchemes, lower) {
		return fmt.Errorf("%w: scheme %q is not allowed", ErrInvalidRedirectURI, lower)
	}
	if u.User != nil {
		return fmt.Errorf("%w: userinfo", ErrInvalidRedirectURI)
	}
	switch lower {
	case "https":
		if scheme != lower || u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
			return fmt.Errorf("%w: https URI needs a lower-case scheme and a host", ErrInvalidRedirectURI)
		}
	case "http":
		if scheme != lower || u.Opaque != "" {
			return fmt.Errorf("%w: http URI needs a lower-case scheme and a host", ErrInvalidRedirectURI)
		}
		switch u.Hostname() {
		case "127.0.0.1", "::1", "localhost":
		default:
			return fmt.Errorf("%w: http is allowed only for loopback hosts", ErrInvalidRedirectURI)
		}
	default:
		// A private-use scheme: "com.example.app:/cb" or "cursor://anysphere.cursor/cb".
		if u.Opaque == "" && u.Host == "" && (u.Path == "" || u.Path == "/") {
			return fmt.Errorf("%w: private-use URI without a path", ErrInvalidRedirectURI)
		}
	}
	return nil
}

func validScheme(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// document is the wire form; pointer-free fields are fine because absence and emptiness are
// treated alike.
type document struct {
	ClientID                string          `json:"client_id"`
	ClientName              string          `json:"client_name"`
	RedirectURIs            []string        `json:"redirect_uris"`
	GrantTypes              []string        `json:"grant_types"`
	ResponseTypes           []string        `json:"response_types"`
	TokenEndpointAuthMethod string          `json:"token_endpoint_auth_method"`
	ClientURI               string          `json:"client_uri"`
	LogoURI                 string          `json:"logo_uri"`
	TOSURI                  string          `json:"tos_uri"`
	PolicyURI               string          `json:"policy_uri"`
	JWKSURI                 string          `json:"jwks_uri"`
	JWKS                    json.RawMessage `json:"jwks"`
	Scope                   string          `json:"scope"`
	SoftwareID              string          `json:"software_id"`
	SoftwareVersion         string          `json:"software_version"`
}

// secretMembers must not appear: a document is public, so it cannot carry a shared secret.
var secretMembers = []string{"client_secret", "client_secret_expires_at"}

// parseDocument validates body as the metadata document published at clientID.
func parseDocument(body []byte, clientID string) (*Metadata, error) {
	if !utf8.Valid(body) {
		return nil, because(ReasonInvalidJSON, fmt.Errorf("%w: not valid UTF-8", ErrInvalidDocument))
	}
	keys, err := topLevelKeys(body)
	if err != nil {
		return nil, err
	}
	for _, k := range secretMembers {
		if slices.Contains(keys, k) {
			return nil, invalidMember(k, fmt.Errorf("%w: %s is not allowed in a public document", ErrInvalidDocument, k))
		}
	}
	var d document
	if err := json.Unmarshal(body, &d); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, invalidMember(te.Field, fmt.Errorf("%w: member %q has the wrong type", ErrInvalidDocument, te.Field))
		}
		return nil, because(ReasonInvalidJSON, fmt.Errorf("%w: malformed JSON", ErrInvalidDocument))
	}
	if d.ClientID != clientID {
		return nil, because(ReasonClientIDMismatch, fmt.Errorf("%w: client_id does not equal the document URL", ErrInvalidDocument))
	}
	if len(d.RedirectURIs) == 0 {
		return nil, invalidMember("redirect_uris", fmt.Errorf("%w: redirect_uris missing or empty", ErrInvalidDocument))
	}
	if len(d.RedirectURIs) > maxRedirectURIs {
		return nil, invalidMember("redirect_uris", fmt.Errorf("%w: more than %d redirect_uris", ErrInvalidDocument, maxRedirectURIs))
	}
	for i, r := range d.RedirectURIs {
		if err := ValidateRedirectURI(r); err != nil {
			return nil, invalidMember("redirect_uris", fmt.Errorf("%w: redirect_uris[%d]: %w", ErrInvalidDocument, i, err))
		}
	}
	if err := checkName(d.ClientName); err != nil {
		return nil, err
	}
	if d.GrantTypes == nil {
		d.GrantTypes = []string{"authorization_code"}
	}
	for _, g := range d.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return nil, invalidMember("grant_types", fmt.Errorf("%w: grant type %q is not allowed", ErrInvalidDocument, truncate(g)))
		}
	}
	if !slices.Contains(d.GrantTypes, "authorization_code") {
		return nil, invalidMember("grant_types", fmt.Errorf("%w: grant_types must include authorization_code", ErrInvalidDocument))
	}
	if d.ResponseTypes == nil {
		d.ResponseTypes = []string{"code"}
	}
	for _, r := range d.ResponseTypes {
		if r != "code" {
			return nil, invalidMember("response_types", fmt.Errorf("%w: response type %q is not allowed", ErrInvalidDocument, truncate(r)))
		}
	}
	switch d.TokenEndpointAuthMethod {
	case "":
		// RFC 7591 would default to client_secret_basic, which a public document cannot use.
		d.TokenEndpointAuthMethod = AuthMethodNone
	case AuthMethodNone, AuthMethodPrivateKeyJWT:
	default:
		return nil, invalidMember("token_endpoint_auth_method", fmt.Errorf("%w: token_endpoint_auth_method %q is not allowed (none or private_key_jwt)",
			ErrInvalidDocument, truncate(d.TokenEndpointAuthMethod)))
	}
	for _, f := range []struct{ name, v string }{
		{"client_uri", d.ClientURI}, {"logo_uri", d.LogoURI}, {"tos_uri", d.TOSURI},
		{"policy_uri", d.PolicyURI}, {"jwks_uri", d.JWKSURI},
	} {
		if f.v != "" && !isHTTPSURL(f.v) {
			return nil, invalidMember(f.name, fmt.Errorf("%w: %s must be an absolute https URL", ErrInvalidDocument, f.name))
		}
	}
	hasJWKS := len(d.JWKS) > 0 && string(d.JWKS) != "null"
	if hasJWKS && d.JWKSURI != "" {
		return nil, invalidMember("jwks", fmt.Errorf("%w: jwks and jwks_uri are mutually exclusive", ErrInvalidDocument))
	}
	if hasJWKS {
		if err := checkPublicJWKS(d.JWKS); err != nil {
			return nil, err
		}
	}
	if d.TokenEndpointAuthMethod == AuthMethodPrivateKeyJWT && !hasJWKS && d.JWKSURI == "" {
		return nil, invalidMember("jwks", fmt.Errorf("%w: private_key_jwt needs jwks or jwks_uri", ErrInvalidDocument))
	}
	if len(d.Scope) > maxScopeLen {
		return nil, invalidMember("scope", fmt.Errorf("%w: scope too long", ErrInvalidDocument))
	}
	m := &Metadata{
		ClientID: d.ClientID, ClientName: d.ClientName,
		RedirectURIs: d.RedirectURIs, GrantTypes: d.GrantTypes, ResponseTypes: d.ResponseTypes,
		TokenEndpointAuthMethod: d.TokenEndpointAuthMethod,
		ClientURI:               d.ClientURI, LogoURI: d.LogoURI, TOSURI: d.TOSURI, PolicyURI: d.PolicyURI,
		JWKSURI: d.JWKSURI, Scope: d.Scope, SoftwareID: d.SoftwareID, SoftwareVersion: d.SoftwareVersion,
	}
	if hasJWKS {
		m.JWKS = append(json.RawMessage(nil), d.JWKS...)
	}
	return m, nil
}

// topLevelKeys returns the member names of the JSON object in body, refusing anything that is
// not exactly one object, and duplicate names (which parsers resolve differently).
func topLevelKeys(body []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, because(ReasonInvalidJSON, fmt.Errorf("%w: not a JSON object", ErrInvalidDocument))
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, because(ReasonInvalidJSON, fmt.Errorf("%w: malformed JSON", ErrInvalidDocument))
		}
		k, ok := t.(string)
		if !ok {
			return nil, because(ReasonInvalidJSON, fmt.Errorf("%w: malformed JSON", ErrInvalidDocument))
		}
		if slices.Contains(keys, k) {
			return nil, because(ReasonInvalidJSON, fmt.Errorf("%w: duplicate member %q", ErrInvalidDocument, truncate(k)))
		}
		keys = append(keys, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, because(ReasonInvalidJSON, fmt.Errorf("%w: malformed JSON", ErrInvalidDocument))
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, because(ReasonInvalidJSON, fmt.Errorf("%w: malformed JSON", ErrInvalidDocument))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, because(ReasonInvalidJSON, fmt.Errorf("%w: trailing data after the JSON object", ErrInvalidDocument))
	}
	return keys, nil
}

func checkName(name string) error {
	if utf8.RuneCountInString(name) > maxClientNameRunes {
		return invalidMember("client_name", fmt.Errorf("%w: client_name longer than %d characters", ErrInvalidDocument, maxClientNameRunes))
	}
	for _, r := range name {
		// Control characters and bidirectional overrides could disguise the name on the
		// consent page.
		if unicode.IsControl(r) || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) {
			return invalidMember("client_name", fmt.Errorf("%w: client_name contains control or bidi-override characters", ErrInvalidDocument))
		}
	}
	return nil
}

func isHTTPSURL(s string) bool {
	if len(s) > maxURLLen || !strings.HasPrefix(s, "https://") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= 0x20 || c >= 0x7f || c == '\\' {
			return false
		}
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "https" && u.User == nil && u.Hostname() != ""
}

// checkPublicJWKS accepts a JWK set holding only asymmetric public keys.
func checkPublicJWKS(raw json.RawMessage) error {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(raw, &set); err != nil || len(set.Keys) == 0 {
		return invalidMember("jwks", fmt.Errorf("%w: jwks is not a non-empty JWK set", ErrInvalidDocument))
	}
	for i, k := range set.Keys {
		var jwk jose.JSONWebKey
		if err := jwk.UnmarshalJSON(k); err != nil {
			return invalidMember("jwks", fmt.Errorf("%w: jwks key %d is unparsable", ErrInvalidDocument, i))
		}
		if !jwk.IsPublic() {
			return invalidMember("jwks", fmt.Errorf("%w: jwks key %d is private or symmetric key material", ErrInvalidDocument, i))
		}
	}
	return nil
}

// truncate bounds document-supplied strings quoted in error messages.
func truncate(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
