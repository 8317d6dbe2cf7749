package server

import (
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/scopes"
)

// The MCP endpoint answers at three paths: the canonical /mcp, its trailing-slash form /mcp/
// (a common typo) and /sse (the compatibility alias older configurations name). Each is a
// full alias, OAuth included, because clients check that the protected-resource metadata's
// `resource` is the URL they connected to (RFC 9728 §3.3; the TypeScript SDK and mcp-remote
// refuse "…/mcp" when they were given "…/sse"). So, in built-in mode:
//
//   - each path P has metadata of its own at /.well-known/oauth-protected-resource{P} whose
//     `resource` is exactly <base>{P} (the root /.well-known/oauth-protected-resource is /mcp's);
//   - the 401 and 403 challenges of a request to P name that metadata;
//   - the authorization server accepts <base>{P} as a `resource` and issues tokens whose aud
//     is that URL; the resource server accepts every such audience on every path (it is one
//     endpoint: a token for /sse works on /mcp and the other way round);
//   - when the public URL is on loopback (make run), <base> is the host the request named if
//     it is another loopback name on the same port (localhost, 127.0.0.1, [::1]), so
//     http://localhost:8080/mcp completes OAuth as well as http://127.0.0.1:8080/mcp; the
//     authorization server's issuer stays the public URL.
//
// In external provider mode the provider decides audiences: only /mcp's metadata exists, and
// every path's challenges name it.
var mcpPaths = []string{"/mcp", "/mcp/", "/sse"}

// metadataPath is the RFC 9728 well-known prefix.
const metadataPath = "/.well-known/oauth-protected-resource"

// endpoints computes, per request, the resource URL and metadata of the MCP endpoint.
type endpoints struct {
	public   string // the public base URL, without a trailing slash
	scheme   string
	port     string // the public URL's port ("" when it has none)
	loopback bool   // the public URL's host is a loopback name: serve the other names too
}

func newEndpoints(base *url.URL) endpoints {
	return endpoints{
		public: base.String(), scheme: base.Scheme, port: base.Port(),
		loopback: isLoopbackName(base.Hostname()),
	}
}

func isLoopbackName(h string) bool {
	h = strings.ToLower(h)
	return h == "localhost" || h == "127.0.0.1" || h == "::1"
}

// baseFor is the base URL the request addressed: the public one, or, on a loopback
// deployment, the request's own loopback host on the same port.
func (e endpoints) baseFor(r *http.Request) string {
	if !e.loopback {
		return e.public
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, port = strings.Trim(r.Host, "[]"), ""
	}
	if port != e.port || !isLoopbackName(host) {
		return e.public
	}
	return e.baseOf(strings.ToLower(host))
}

func (e endpoints) baseOf(host string) string {
	if e.port != "" {
		host = net.JoinHostPort(host, e.port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return e.scheme + "://" + host
}

// bases are every base URL the endpoint answers at, the public one first.
func (e endpoints) bases() []string {
	out := []string{e.public}
	if e.loopback {
		for _, h := range []string{"localhost", "127.0.0.1", "::1"} {
			if b := e.baseOf(h); !slices.Contains(out, b) {
				out = append(out, b)
			}
		}
	}
	return out
}

// resources are every resource URL of the endpoint (each base × each path), the canonical
// one (public /mcp) first: the authorization server's targets, the verifier's audiences.
func (e endpoints) resources() []string {
	var out []string
	for _, b := range e.bases() {
		for _, p := range mcpPaths {
			out = append(out, b+p)
		}
	}
	return out
}

// audiences are the resources, each also with one trailing slash (tokens minted for an
// equivalent form of the resource parameter).
func (e endpoints) audiences() []string {
	var out []string
	for _, r := range e.resources() {
		out = append(out, r)
		if !strings.HasSuffix(r, "/") {
			out = append(out, r+"/")
		}
	}
	return out
}

// metadataURL is the metadata the 401 and 403 challenges of a request name: that of the
// endpoint it addressed (any other path — the REST API — names /mcp's). It is the edge's
// EndpointMetadataURL in built-in mode.
func (e endpoints) metadataURL(r *http.Request) string {
	p := r.URL.Path
	if !slices.Contains(mcpPaths, p) {
		p = "/mcp"
	}
	return e.baseFor(r) + metadataPath + p
}

// register mounts the metadata of every path, answering each request with the resource of
// the base it addressed.
func (e endpoints) register(mux *http.ServeMux, authServer string) {
	for _, p := range mcpPaths {
		pattern := "GET " + metadataPath + p
		if strings.HasSuffix(p, "/") {
			pattern += "{$}"
		}
		mux.HandleFunc(pattern, e.metadata(p, authServer))
	}
	mux.HandleFunc("GET "+metadataPath, e.metadata("/mcp", authServer))
}

func (e endpoints) metadata(path, authServer string) http.HandlerFunc {
	var names []string
	for _, s := range scopes.All() {
		names = append(names, s.Name)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := json.Marshal(map[string]any{
			"resource":                 e.baseFor(r) + path,
			"authorization_servers":    []string{authServer},
			"scopes_supported":         names,
			"bearer_methods_supported": []string{"header"},
			"resource_name":            capapi.ServerTitle, // the spec's server.title
		})
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("Vary", "Host")
		_, _ = w.Write(body)
	}
}
