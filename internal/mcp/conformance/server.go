package conformance

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/internal/authn/authntest"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/httpx"
	"github.com/neemias/neemias-mcp/internal/mcp"
	"github.com/neemias/neemias-mcp/internal/principal"
)

// NewServer returns the fixture server's mux for a server reachable at base (a loopback
// http://host:port): /mcp, its /sse alias and the RFC 9728 metadata documents. Only token is
// accepted (interim static verifier).
func NewServer(base, token string, logger *slog.Logger) (http.Handler, error) {
	return NewServerWith(base, token, logger, nil)
}

// NewServerWith is NewServer with a last say on the options (the differential test's
// EngineOnly).
func NewServerWith(base, token string, logger *slog.Logger, adjust func(*mcp.Options)) (http.Handler, error) {
	opts := Options()
	opts.Edge = &httpx.Edge{
		Verifier: authntest.Static{Tokens: map[string]principal.Principal{token: {
			UserID:   uuid.MustParse("00000000-0000-4000-8000-000000000001"),
			ChurchID: uuid.MustParse("00000000-0000-4000-8000-000000000002"),
			Role:     "ADMIN", Scopes: capability.NewScopeSet(Scope), ClientID: "conformance",
		}}},
		ResourceMetadataURL: base + "/.well-known/oauth-protected-resource/mcp",
		Hosts:               httpx.LoopbackHosts(),
		Origins:             httpx.LoopbackOrigins(),
		Logger:              logger,
	}
	opts.Logger = logger
	if adjust != nil {
		adjust(&opts)
	}
	h, err := mcp.NewHandler(opts)
	if err != nil {
		return nil, fmt.Errorf("building handler: %w", err)
	}
	prm := fmt.Sprintf(`{"resource":%q,"authorization_servers":[%q],"scopes_supported":[%q],"bearer_methods_supported":["header"]}`,
		base+"/mcp", base, Scope)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle("/sse", h)
	for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		mux.HandleFunc("GET "+p, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(prm))
		})
	}
	return mux, nil
}
