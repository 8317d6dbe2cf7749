package httpx

import "strings"

// Surfaces: what part of the server a request path belongs to. Host routing (which paths a
// host serves), metrics labels and trace names all read this one classification.
const (
	SurfaceMCP      = "mcp"
	SurfaceREST     = "rest"
	SurfaceOAuth    = "oauth"
	SurfaceMetadata = "metadata"
	SurfaceHealth   = "health"
	SurfaceOther    = "other"
)

// Surface classifies a request path.
func Surface(path string) string {
	switch {
	case path == "/mcp" || path == "/mcp/" || path == "/sse": // the endpoint and its aliases (server/endpoints.go)
		return SurfaceMCP
	case strings.HasPrefix(path, "/api/"):
		return SurfaceREST
	case strings.HasPrefix(path, "/.well-known/oauth-protected-resource"):
		return SurfaceMetadata
	case path == "/healthz" || path == "/readyz" || path == "/metrics":
		return SurfaceHealth
	case strings.HasPrefix(path, "/.well-known/"), path == "/authorize", path == "/token", path == "/register",
		path == "/revoke", path == "/jwks", path == "/userinfo", path == "/end_session",
		strings.HasPrefix(path, "/login"), strings.HasPrefix(path, "/consent"), strings.HasPrefix(path, "/oauth/"),
		strings.HasPrefix(path, "/set-password"):
		return SurfaceOAuth
	}
	return SurfaceOther
}
