package httpx

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// HostOriginGuard rejects requests whose Host, or Origin when present, is not allowlisted, with
// 403 before anything else runs (MCP Streamable HTTP "Security Warning"; DNS rebinding).
//
// Go's http.CrossOriginProtection is not enough: it lets a rebinding pair through because the
// attacker's Origin host equals the Host header. The go-sdk's built-in check acts only when the
// socket is loopback. This guard checks both headers against explicit lists.
//
// Entries are matched case-insensitively. A host entry without a port ("localhost",
// "mcp.example.org", "[::1]") matches that host on any port; with a port ("mcp.example.org:443")
// only that port. Origin entries are "scheme://host" (any port) or "scheme://host:port".
type HostOriginGuard struct {
	Hosts   []string
	Origins []string
	// Errors writes refusals (nil: a JSON-RPC error).
	Errors ErrorWriter
}

// LoopbackHosts are the Host values of a server reached on loopback.
func LoopbackHosts() []string { return []string{"localhost", "127.0.0.1", "[::1]"} }

// LoopbackOrigins are the browser origins of pages served from loopback over http.
func LoopbackOrigins() []string {
	return []string{"http://localhost", "http://127.0.0.1", "http://[::1]"}
}

// Wrap returns next behind the guard.
func (g HostOriginGuard) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.HostAllowed(r.Host) {
			g.refuse(w, "Forbidden: Host header is not allowed")
			return
		}
		if origins := r.Header.Values("Origin"); len(origins) > 0 {
			if len(origins) > 1 || !g.OriginAllowed(origins[0]) {
				g.refuse(w, "Forbidden: Origin is not allowed")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (g HostOriginGuard) refuse(w http.ResponseWriter, msg string) {
	if g.Errors != nil {
		g.Errors(w, http.StatusForbidden, EdgeForbidden, msg)
		return
	}
	WriteRPCError(w, http.StatusForbidden, nil, RPCError{Code: CodeInvalidRequest, Message: msg})
}

// HostAllowed reports whether a Host header value is allowlisted.
func (g HostOriginGuard) HostAllowed(hostport string) bool {
	host, port, ok := splitHostPort(hostport)
	if !ok {
		return false
	}
	for _, e := range g.Hosts {
		eh, ep, ok := splitHostPort(e)
		if ok && strings.EqualFold(eh, host) && (ep == "" || ep == port) {
			return true
		}
	}
	return false
}

// OriginAllowed reports whether an Origin header value is allowlisted. "null" never is.
func (g HostOriginGuard) OriginAllowed(origin string) bool {
	scheme, hostport, ok := splitOrigin(origin)
	if !ok {
		return false
	}
	host, port, ok := splitHostPort(hostport)
	if !ok {
		return false
	}
	for _, e := range g.Origins {
		es, ehp, ok := splitOrigin(e)
		if !ok || !strings.EqualFold(es, scheme) {
			continue
		}
		eh, ep, ok := splitHostPort(ehp)
		if ok && strings.EqualFold(eh, host) && (ep == "" || ep == port) {
			return true
		}
	}
	return false
}

// splitOrigin splits "scheme://host[:port]" and rejects anything with a path, query, userinfo
// or other decoration, so "http://a.example@evil.example" never matches "http://a.example".
func splitOrigin(origin string) (scheme, hostport string, ok bool) {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", "", false
	}
	return u.Scheme, u.Host, true
}

// splitHostPort splits host[:port]; the port may be absent. It rejects empty hosts, spaces and
// control characters.
func splitHostPort(hp string) (host, port string, ok bool) {
	if hp == "" || strings.ContainsAny(hp, " \t\r\n/\\@") {
		return "", "", false
	}
	if h, p, err := net.SplitHostPort(hp); err == nil {
		if h == "" {
			return "", "", false
		}
		if strings.Contains(h, ":") { // IPv6 literal came without brackets from SplitHostPort
			h = "[" + h + "]"
		}
		return h, p, true
	}
	if strings.Count(hp, ":") > 0 && !(strings.HasPrefix(hp, "[") && strings.HasSuffix(hp, "]")) {
		return "", "", false
	}
	return hp, "", true
}
