package oauth

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// errBadRedirectURI is the reason a redirect URI cannot be registered (RFC 7591
// invalid_redirect_uri).
var errBadRedirectURI = errors.New("invalid redirect URI")

// maxURILen bounds every URI a client registers or sends.
const maxURILen = 2000

// deniedSchemes can never be redirect URIs, whatever the application type: they run code in
// the browser, read local files or leave the browser for something that is not the client.
var deniedSchemes = []string{
	"javascript", "data", "vbscript", "file", "blob", "mailto", "about", "filesystem",
	"view-source", "jar", "ftp", "ws", "wss", "tel", "sms", "intent", "content", "chrome",
	"chrome-extension", "moz-extension", "resource",
}

// redirectKind classifies a valid redirect URI.
type redirectKind int

const (
	redirectHTTPS    redirectKind = iota + 1 // https with a host
	redirectLoopback                         // http on 127.0.0.1, [::1] or localhost (RFC 8252 §7.3)
	redirectPrivate                          // a private-use scheme of a native app (RFC 8252 §7.1)
)

// checkRedirectURI validates a redirect URI a client registers (Dynamic Client Registration
// or a Client ID Metadata Document): absolute; no fragment, userinfo, whitespace, control,
// backslash or non-ASCII bytes (so no spaced, tabbed or mixed-case tricks around the scheme
// survive); https with a host, http only on a loopback host, or a private-use scheme that is
// not on the deny list. Matching at /authorize is exact apart from the loopback port.
func checkRedirectURI(raw string) (redirectKind, error) {
	if raw == "" || len(raw) > maxURILen {
		return 0, fmt.Errorf("%w: empty or longer than %d bytes", errBadRedirectURI, maxURILen)
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= 0x20 || c >= 0x7f || c == '\\' {
			return 0, fmt.Errorf("%w: whitespace, control, backslash or non-ASCII character", errBadRedirectURI)
		}
	}
	if strings.Contains(raw, "#") {
		return 0, fmt.Errorf("%w: fragment", errBadRedirectURI)
	}
	scheme, _, ok := strings.Cut(raw, ":")
	if !ok || !validScheme(scheme) {
		return 0, fmt.Errorf("%w: not an absolute URI", errBadRedirectURI)
	}
	lower := strings.ToLower(scheme)
	if slices.Contains(deniedSchemes, lower) {
		return 0, fmt.Errorf("%w: scheme %q is not allowed", errBadRedirectURI, lower)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return 0, fmt.Errorf("%w: unparsable", errBadRedirectURI)
	}
	if u.User != nil || strings.Contains(u.Host, "@") {
		return 0, fmt.Errorf("%w: userinfo", errBadRedirectURI)
	}
	switch lower {
	case "https":
		if scheme != lower || u.Opaque != "" || u.Hostname() == "" {
			return 0, fmt.Errorf("%w: https URI needs a lower-case scheme and a host", errBadRedirectURI)
		}
		return redirectHTTPS, nil
	case "http":
		if scheme != lower || u.Opaque != "" || !isLoopbackHost(u.Hostname()) {
			return 0, fmt.Errorf("%w: http is allowed only on a loopback host (127.0.0.1, [::1], localhost)", errBadRedirectURI)
		}
		if p := u.Port(); p != "" && !isPort(p) {
			return 0, fmt.Errorf("%w: bad port", errBadRedirectURI)
		}
		return redirectLoopback, nil
	default:
		// "com.example.app:/callback" or "cursor://anysphere.cursor-mcp/oauth/callback".
		if u.Opaque == "" && u.Host == "" && (u.Path == "" || u.Path == "/") {
			return 0, fmt.Errorf("%w: private-use URI without a path", errBadRedirectURI)
		}
		return redirectPrivate, nil
	}
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

// isLoopbackHost reports whether h (without brackets) names the loopback interface: localhost,
// an IPv4 address in 127.0.0.0/8 written canonically, or ::1.
func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback() && (ip.To4() == nil || ip.String() == h)
}

func isPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n > 0 && n <= 65535 && p[0] != '0' && p[0] != '+' && p[0] != '-'
}

// matchRedirectURI reports whether requested, the redirect_uri of an authorization request,
// is one of registered: the exact string, or, for an http loopback URI, the same scheme, host,
// path and query on any port (RFC 8252 §7.3: native apps get an ephemeral port). Hosts are
// compared exactly: localhost, 127.0.0.1 and [::1] are different URIs.
func matchRedirectURI(registered []string, requested string) bool {
	if slices.Contains(registered, requested) {
		return true
	}
	kind, err := checkRedirectURI(requested)
	if err != nil || kind != redirectLoopback {
		return false
	}
	req, err := url.Parse(requested)
	if err != nil {
		return false
	}
	for _, r := range registered {
		reg, err := url.Parse(r)
		if err != nil || reg.Scheme != "http" || !isLoopbackHost(reg.Hostname()) {
			continue
		}
		if reg.Hostname() == req.Hostname() && reg.EscapedPath() == req.EscapedPath() &&
			reg.RawQuery == req.RawQuery && reg.ForceQuery == req.ForceQuery {
			return true
		}
	}
	return false
}

// applicationType returns the OpenID Connect application type of a registration: the one
// declared, checked against the redirect URIs (a web client uses https only), or, when none is
// declared (older MCP clients send none), native if any redirect URI is loopback or
// private-use and web otherwise.
func applicationType(declared string, redirectURIs []string) (string, error) {
	native := false
	for _, r := range redirectURIs {
		kind, err := checkRedirectURI(r)
		if err != nil {
			return "", err
		}
		native = native || kind != redirectHTTPS
	}
	switch declared {
	case "":
		if native {
			return "native", nil
		}
		return "web", nil
	case "native":
		return "native", nil
	case "web":
		if native {
			return "", fmt.Errorf("%w: a web client may register https redirect URIs only (use application_type native for loopback or private-use URIs)", errBadRedirectURI)
		}
		return "web", nil
	}
	return "", fmt.Errorf("unknown application_type %q", declared)
}

// redirectHost is what the consent page shows of a redirect URI: its host (and port), or the
// scheme of a private-use URI.
func redirectHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if u.Host != "" {
		return u.Host
	}
	return u.Scheme + ":"
}
