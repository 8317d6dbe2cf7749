// Package server is the composition root: it wires the generated registry, the hand-written
// logic, the store, tokens, and the MCP and REST transports into one http.Handler. It holds no
// business logic; every request stands alone, so any number of replicas can serve.
package server

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/trace"

	"github.com/go-jose/go-jose/v4"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/authn"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/httpx"
	"github.com/neemias/neemias-mcp/internal/logic"
	"github.com/neemias/neemias-mcp/internal/mcp"
	"github.com/neemias/neemias-mcp/internal/metrics"
	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/oauth/cimd"
	"github.com/neemias/neemias-mcp/internal/oauth/external"
	"github.com/neemias/neemias-mcp/internal/pipeline"
	"github.com/neemias/neemias-mcp/internal/ratelimit"
	"github.com/neemias/neemias-mcp/internal/reqid"
	"github.com/neemias/neemias-mcp/internal/rest"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/tokens"
	"github.com/neemias/neemias-mcp/internal/upstream"
	"github.com/neemias/neemias-mcp/internal/views"
)

// Config is the runtime configuration (never part of the capability spec).
type Config struct {
	// PublicURL is the externally visible base URL, e.g. https://mcp.church.example or
	// http://127.0.0.1:8080. The MCP endpoint is PublicURL+"/mcp"; in built-in mode tokens
	// are issued by PublicURL and bound to the MCP endpoint.
	PublicURL string
	// AllowedOrigins are browser origins allowed to call /mcp (besides none).
	AllowedOrigins []string
	Logger         *slog.Logger
	// Version is the server version reported to clients.
	Version string
	// RatePerSecond and RateBurst limit requests per caller (zero: DefaultRatePerSecond and
	// DefaultRateBurst); RateLimitOff turns the limit off (benchmarks, trusted networks).
	RatePerSecond float64
	RateBurst     int
	RateLimitOff  bool
	// CheckinWindowDays is how many days back a check-in may be registered (zero:
	// logic.DefaultCheckinWindowDays).
	CheckinWindowDays int
	// TokenCheckCache is how long a token's passed revocation check (its grant not revoked,
	// a development token's user still enabled: one database lookup) is reused before it is
	// looked up again. A revocation or disable made elsewhere (another replica, the `user
	// disable` command) takes effect within it on every replica; one this process makes, at
	// once. Zero checks every request (the CLI's --token-check-cache defaults to 1s).
	TokenCheckCache time.Duration
	// MCPEngineOnly turns internal/mcp's fast path off (mcp.Options.EngineOnly).
	MCPEngineOnly bool
	// RateStore keeps the buckets of the edge's rate limits (per user on /mcp and REST, per
	// address on the OAuth endpoints). Nil, what `serve` uses: the rate_limits table, shared by
	// the replicas (ratelimit.Postgres); ratelimit.Memory limits each process on its own (tests
	// and benchmarks only). The logic's limits (wrong pick-up codes, searches by name) are in
	// the rate_limits table always (docs/scale-out.md).
	RateStore ratelimit.Store
	// AuthServer configures the built-in OAuth authorization server (internal/oauth): token
	// lifetimes, registration, login through the church's OpenID Connect provider. Client ID
	// Metadata Documents are resolved by internal/oauth/cimd unless AuthServer.ClientMetadata
	// is set. Ignored in external provider mode.
	AuthServer oauth.Options
	// External, when set, is external provider mode: Neemias is a pure resource server of
	// that OpenID Connect provider. Nil (the default) is built-in mode.
	External *ExternalAuth
	// Operations (operate.go). Metrics, when set, instruments the server; MetricsOnMain also
	// serves it at /metrics of Handler. Tracer, when set, makes spans (HTTP, MCP method,
	// capability; SQL spans come from the pool's tracer). MCPHost and APIHost split the
	// origin by Host; both empty, one origin serves everything.
	Metrics          *metrics.Metrics
	MetricsOnMain    bool
	Tracer           trace.TracerProvider
	MCPHost, APIHost string
	// Upstreams is the runtime configuration of the governed upstream MCP servers (issue 11;
	// upstreams.go): off by default, and then no upstream tool is listed and no connection is
	// opened. On, the tools the spec declares of each upstream with a URL are offered.
	Upstreams upstream.Config
}

// ExternalAuth is external provider mode: no built-in authorization server is mounted (no
// /authorize, /token, /register, /login, /consent, /jwks, nor authorization-server metadata);
// the protected-resource metadata names Issuer as the authorization server; /mcp and /api
// accept only the provider's access tokens, verified by internal/oauth/external against its
// JWKS (discovered from Issuer, cached, refreshed on an unknown kid; 503 when no key can be
// had). A token's iss+sub is mapped to a local user through oauth_upstream_identities (link
// one with `neemias-mcp identity link --issuer ISSUER --subject SUB --email …`), never by
// e-mail; an unknown subject or a disabled user gets 403 saying so. Church and role are the
// local user's unless Claims maps them; scopes are the token's ∩ the role's (or the role's,
// with ScopesFromRole).
type ExternalAuth struct {
	// Issuer is the provider's issuer URL, exactly as its tokens carry it (https, or http on
	// loopback). Its
	// /.well-known/openid-configuration must name the same issuer. The server starts while
	// the provider is unreachable: /readyz reports it, and /mcp answers 503 with Retry-After
	// until its keys can be had.
	Issuer string
	// Audience is the aud the provider puts in access tokens for this server: any string (a
	// client id, a GUID, an api:// URI), matched exactly. Default: the MCP endpoint,
	// PublicURL+"/mcp" (its trailing-slash form is accepted too, as for any URL). The
	// protected-resource metadata's `resource` is the MCP endpoint either way.
	Audience string
	// Claims says where the provider puts the scopes, church, role and client id, and maps
	// provider roles or groups to local roles (see external.ClaimMapping).
	Claims external.ClaimMapping
	// RequireAccessTokenType demands the RFC 9068 JOSE typ at+jwt; RequiredClaims are string
	// claims that must have exactly these values (a provider's token-type marker).
	RequireAccessTokenType bool
	RequiredClaims         map[string]string
	// RootCAs replaces the system trust roots for the provider (a private CA; tests).
	RootCAs *x509.CertPool
	// RefreshInterval is the least time between two JWKS fetches (default 10 s).
	RefreshInterval time.Duration
	// Introspection validates opaque access tokens by RFC 7662 introspection (nil: JWTs only).
	Introspection *external.Introspection
	// AcceptMissingAudience lists the client ids whose tokens are accepted without aud
	// (audited); see external.Config and docs/external-provider.md for the risk.
	AcceptMissingAudience []string
	// MetadataProxy serves the provider's metadata on our origin with "none" added to
	// token_endpoint_auth_methods_supported, and names our origin as the authorization server
	// in the protected-resource metadata (external_mode.go).
	MetadataProxy bool
	// Algorithms narrows the accepted signature algorithms (default: every asymmetric one,
	// external.DefaultAlgorithms).
	Algorithms []jose.SignatureAlgorithm
	// ScopesFromRole grants a token that carries none of this server's scopes its role's
	// non-sensitive scopes, and the sensitive ones Claims.ScopeGrants maps from its groups:
	// for providers that cannot mint our scopes (Dex, Google, plain OIDC). A risk, logged at
	// start-up (docs/external-provider.md).
	ScopesFromRole bool
	// ChallengeScopes are the scopes clients are told to ask the provider for: the 401
	// challenge's scope and the protected-resource metadata's scopes_supported (default: this
	// server's scopes, which only a provider that mints them knows; for Dex, say, "openid
	// groups audience:server:client_id:neemias-mcp").
	ChallengeScopes []string
	// ClientID, where the provider has no client registration, is the pre-registered client
	// id public clients should use: published as "client_id" in the protected-resource
	// metadata (a Neemias extension member; RFC 9728 §2 allows additional members).
	ClientID string
}

// The default per-caller rate limit: 10 requests per second sustained, bursts of 60.
const (
	DefaultRatePerSecond = 10
	DefaultRateBurst     = 60
)

// rateLimiter is the per-caller limiter of Config over store, or nil when it is off.
func (c Config) rateLimiter(store ratelimit.Store) *httpx.RateLimiter {
	if c.RateLimitOff {
		return nil
	}
	return &httpx.RateLimiter{PerSecond: c.rateOr(DefaultRatePerSecond), Burst: c.burstOr(DefaultRateBurst), Store: store, Logger: c.Logger}
}

func (c Config) rateOr(d float64) float64 {
	if c.RatePerSecond > 0 {
		return c.RatePerSecond
	}
	return d
}

func (c Config) burstOr(d int) int {
	if c.RateBurst > 0 {
		return c.RateBurst
	}
	return d
}

// Server is the assembled application.
type Server struct {
	Handler http.Handler
	// Minter and Verifier are the built-in mode's local-key tokens (the zero Minter and nil
	// in external provider mode, where only the provider issues tokens).
	Minter   tokens.Minter
	Verifier *tokens.Verifier
	// ResourceURL is the canonical MCP endpoint: the metadata's `resource` and the tokens'
	// audience (unless ExternalAuth.Audience names another).
	ResourceURL string
	// AuthorizationServer is the issuer the protected-resource metadata names: PublicURL in
	// built-in mode, ExternalAuth.Issuer in external provider mode.
	AuthorizationServer string
	// AuthServer is the built-in authorization server (nil in external provider mode).
	AuthServer *oauth.AS
	// External verifies the provider's tokens in external provider mode (nil otherwise).
	External *external.Verifier

	drain drainState // Drain

	upstreams *upstreamTools // CloseUpstreams
}

// New assembles the server over st.
func New(ctx context.Context, cfg Config, st *store.Store) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	base, err := url.Parse(strings.TrimSuffix(cfg.PublicURL, "/"))
	if err != nil || base.Scheme == "" || base.Host == "" {
		return nil, fmt.Errorf("server: public URL %q must be absolute, like http://127.0.0.1:8080", cfg.PublicURL)
	}
	publicURL := base.String()
	resource := publicURL + "/mcp"
	out := &Server{ResourceURL: resource}
	limits := cfg.limitStore(ctx, st)
	eps := newEndpoints(base) // /mcp, /mcp/ and /sse, per loopback host (endpoints.go)
	head, err := schemaHead()
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	ready := readinessChecks{st: st, head: head}
	var verifier authn.Verifier
	if cfg.External != nil {
		ev, err := newExternalVerifier(ctx, *cfg.External, resource, st, cfg.Logger)
		if err != nil {
			return nil, err
		}
		verifier, out.External, out.AuthorizationServer = ev, ev, cfg.External.Issuer
		if cfg.External.MetadataProxy {
			out.AuthorizationServer = publicURL
		}
	} else {
		keys := &tokens.KeyStore{Pool: st.Pool()}
		key, err := keys.Active(ctx)
		if err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		checked := tokens.NewCheckCache(0, cfg.TokenCheckCache)
		asOpts := cfg.AuthServer
		if asOpts.ClientMetadata == nil {
			if asOpts.ClientMetadata, err = clientMetadataFetcher(cimd.Options{}); err != nil {
				return nil, fmt.Errorf("server: %w", err)
			}
		}
		authServer, err := oauth.New(oauth.Config{
			Issuer: publicURL, Resource: resource, ResourceAliases: eps.resources()[1:],
			Store: st, Keys: keys, Logger: cfg.Logger, Options: asOpts, Limits: limits,
			OnRevoke: checked.Forget,
		})
		if err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		tv := &tokens.Verifier{Issuer: publicURL, Audiences: eps.audiences(), Keys: keys.Public,
			// tokens of a revoked grant, and dev tokens of a disabled user, are refused: at once
			// when this process revoked, within TokenCheckCache when another did
			Check: devTokenCheck(st, authServer.CheckToken),
			Cache: &tokens.Cache{}, Checked: checked}
		verifier, out.Verifier, out.AuthServer, out.AuthorizationServer = tv, tv, authServer, publicURL
		out.Minter = tokens.Minter{Issuer: publicURL, Audience: resource, Key: key}
		ready.keys = signingKeysLoaded(keys, key.ID)
	}
	verifier = cfg.Metrics.WrapVerifier(verifier)
	metadataURL := publicURL + "/.well-known/oauth-protected-resource/mcp"
	hosts, origins := allowlists(base, cfg.AllowedOrigins)

	// The one invocation pipeline both transports call: the scope check (refusals audited),
	// then validation, the hand-written logic, redaction and one encoding.
	ups, err := newUpstreamTools(ctx, cfg.Upstreams, st, cfg.Logger)
	if err != nil {
		return nil, err
	}
	out.upstreams = ups
	// The logic's own limits (wrong pick-up codes, searches by name) are taken in PostgreSQL
	// within each call's transaction, whatever RateStore is (logic.PickupAttemptLimit).
	svc := logic.New(st, logic.WithLogger(cfg.Logger), logic.WithCorrelationID(reqid.From), logic.WithCheckinWindow(cfg.CheckinWindowDays),
		logic.WithPeopleChanged(ups.peopleChanged))
	// The catalog: the spec's capabilities over the logic, the views' app-only tools (aliases
	// of the tools they run), then the upstream tools offered (audited under their upstream
	// capability name).
	vs := views.All()
	catalog, err := capapi.Catalog(svc).With(append(capability.AppToolEntries(vs), ups.entries(svc.OnRefused)...)...)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	cfg.Metrics.ObservePool(st.Pool())
	gate, err := pipeline.New(pipeline.Config{Catalog: catalog, OnRefused: svc.OnRefused, Interceptors: interceptors(cfg)})
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	// One edge in front of MCP and REST (httpx.Edge): the allowlists, the verifier and its
	// challenges, one rate limiter (a caller has one budget across both surfaces) and the
	// per-address limit of wrong API keys; each surface adds only its own rules.
	edge := &httpx.Edge{
		Hosts: hosts, Origins: origins, Verifier: verifier, ResourceMetadataURL: metadataURL,
		// The 401 challenge's scope hint: what a client should ask for first. Sensitive scopes
		// (children's data, phones) are requested by step-up, on a 403 that names them.
		ChallengeScope: nonSensitiveScopes(),
		RateLimit:      cfg.rateLimiter(limits),
		// An API key is looked up before anyone is authenticated: wrong ones are limited per
		// client address (a random well-formed key costs a query). OAuth tokens are verified
		// by signature first.
		Lookups: &httpx.LookupLimit{Store: limits},
		Logger:  cfg.Logger,
	}
	if cfg.External == nil {
		edge.EndpointMetadataURL = eps.metadataURL // each alias's challenges name its own metadata
	} else if len(cfg.External.ChallengeScopes) > 0 {
		edge.ChallengeScope = strings.Join(cfg.External.ChallengeScopes, " ") // what the provider knows
	}

	mcpHandler, err := mcp.NewHandler(mcp.Options{
		Name:    capapi.ServerName, // the server's identity is the spec's (server:)
		Title:   capapi.ServerTitle,
		Version: cfg.Version,
		Instructions: "Children's ministry data of one church: roster counts, one child's record, attendance " +
			"summaries, the day's check-ins; tools register check-ins, pick-ups and enrollments. Personal data " +
			"is returned only where your scopes allow.",
		ReadToolPrefix: capapi.ToolPrefix, // every resource is also a read-only tool
		Views:          vs,                // MCP Apps (io.modelcontextprotocol/ui)
		Gate:           gate,
		Complete:       svc.Complete,
		Edge:           edge,
		Observe:        observeMCP(cfg),
		Logger:         cfg.Logger,
		EngineOnly:     cfg.MCPEngineOnly,
	})
	if err != nil {
		return nil, fmt.Errorf("server: MCP handler: %w", err)
	}
	restHandler, err := rest.New(rest.Options{Gate: gate, Edge: edge, Logger: cfg.Logger,
		Keys:  restKeys(cfg, st),     // church API keys are REST's
		Hosts: apiHosts(cfg.APIHost), // and so is the API host of a split origin
	})
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}

	mux := http.NewServeMux()
	mcpEndpoint := refuseAPIKeys(metadataURL, mcpHandler) // API keys are REST's; MCP needs OAuth
	mux.Handle("/mcp", mcpEndpoint)
	mux.Handle("/mcp/{$}", mcpEndpoint) // the same endpoint: a trailing slash is a common typo
	mux.Handle("/sse", mcpEndpoint)     // compatibility alias of the same stateless endpoint
	mux.Handle("/api/v1/", restHandler)
	mux.HandleFunc("GET /api/openapi.json", openAPIHandler(out.External))
	if out.AuthServer != nil {
		out.AuthServer.Register(mux) // /authorize, /token, /register, /login, /consent, AS metadata…
	}
	registerExternalMode(mux, cfg.External, out.External, cfg.Logger) // metadata proxy
	ready.provider = out.External
	mux.Handle("GET /readyz", out.drain.readyUnlessDraining(readiness(ready)))
	if cfg.Metrics != nil && cfg.MetricsOnMain {
		mux.Handle("GET /metrics", cfg.Metrics.Handler())
	}
	if cfg.External == nil {
		eps.register(mux, out.AuthorizationServer)
	} else {
		prm := protectedResourceMetadata(resource, out.AuthorizationServer, cfg.External)
		mux.HandleFunc("GET /.well-known/oauth-protected-resource", prm)
		mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", prm)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := st.Pool().Ping(ctx); err != nil {
			http.Error(w, "database unavailable", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	out.Handler = outermost(cfg, reqid.Middleware(securityHeaders(hostRouting(cfg.MCPHost, cfg.APIHost, retryAfterOn503(mux)))))
	return out, nil
}

// newExternalVerifier is external provider mode's token verifier: internal/oauth/external
// over the provider's discovery and JWKS, with subjects mapped to local users through
// oauth_upstream_identities.
func newExternalVerifier(ctx context.Context, x ExternalAuth, resource string, st *store.Store, log *slog.Logger) (*external.Verifier, error) {
	if x.Issuer == "" {
		return nil, errors.New("server: external provider mode needs the provider's issuer URL")
	}
	aud := x.Audience
	if aud == "" {
		aud = resource
	}
	v, err := external.NewVerifier(ctx, external.Config{
		Issuer: x.Issuer, Audience: aud, Claims: x.Claims, Lookup: upstreamIdentityLookup(st),
		RequireAccessTokenType: x.RequireAccessTokenType, RequiredClaims: x.RequiredClaims,
		RootCAs: x.RootCAs, RefreshInterval: x.RefreshInterval, Algorithms: x.Algorithms, ScopesFromRole: x.ScopesFromRole,
		Introspection: x.Introspection, AcceptMissingAudience: x.AcceptMissingAudience,
		OnMissingAudience: auditMissingAudience(st), Logger: log,
	})
	if err != nil {
		return nil, fmt.Errorf("server: external provider %s: %w", x.Issuer, err)
	}
	// The settings that weaken a check are said at start-up, every time (docs/external-provider.md).
	if len(x.AcceptMissingAudience) > 0 {
		log.WarnContext(ctx, "risk: access tokens WITHOUT an audience are accepted from the listed clients (--oauth-accept-missing-aud)",
			"clients", x.AcceptMissingAudience)
	}
	if x.ScopesFromRole {
		var grants []string
		for g, sc := range x.Claims.ScopeGrants {
			grants = append(grants, g+"="+strings.Join(sc, "+"))
		}
		slices.Sort(grants)
		log.WarnContext(ctx, "risk: tokens without this server's scopes get their role's non-sensitive scopes, and sensitive ones by group, "+
			"with no consent page and no step-up (--oauth-scopes-from-role)", "scope_grant_claim", x.Claims.ScopeGrantClaim, "scope_grants", grants)
	}
	return v, nil
}

// upstreamIdentityLookup maps a provider's issuer and subject to the local user linked to
// them in oauth_upstream_identities (`neemias-mcp identity link`, which stores the issuer
// without a trailing slash, hence the trim). No link, or a disabled user: ErrUnknownSubject,
// so the token is refused. Never by e-mail: an e-mail claim can be set or recycled at the
// provider, a subject cannot.
func upstreamIdentityLookup(st *store.Store) external.LookupFunc {
	q := db.New(st.Pool()) // the oauth_* tables are the owner's, like the authorization server's
	return func(ctx context.Context, issuer, subject string) (external.User, error) {
		u, err := q.OAuthUpstreamIdentity(ctx, db.OAuthUpstreamIdentityParams{Issuer: oauth.NormalizeIssuer(issuer), Subject: subject})
		if errors.Is(err, pgx.ErrNoRows) {
			return external.User{}, external.ErrUnknownSubject
		}
		if err != nil {
			return external.User{}, err
		}
		if u.DisabledAt != nil {
			return external.User{ID: u.ID}, external.ErrDisabledUser
		}
		return external.User{ID: u.ID, ChurchID: u.ChurchID, Role: u.Role}, nil
	}
}

// allowlists returns the Host and Origin allowlists of the MCP endpoint: the public URL's host
// and origin, plus the configured origins. A server whose public URL is on loopback also
// accepts the other loopback names (localhost, 127.0.0.1, [::1]) on any port, as Host and as
// http Origin: local clients say "localhost" as often as "127.0.0.1", browser-based ones (the
// MCP Inspector) run on another port, and a rebinding attacker's page never has a loopback
// Host or Origin.
func allowlists(base *url.URL, extraOrigins []string) (hosts, origins []string) {
	hosts = []string{base.Host, hostEntry(base.Hostname())}
	origins = append([]string{base.Scheme + "://" + base.Host}, extraOrigins...)
	if h := base.Hostname(); h == "localhost" || net.ParseIP(h).IsLoopback() {
		hosts = append(hosts, httpx.LoopbackHosts()...)
		origins = append(origins, httpx.LoopbackOrigins()...)
	}
	return hosts, origins
}

// hostEntry brackets an IPv6 literal, the form a Host header carries it in.
func hostEntry(h string) string {
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}

// protectedResourceMetadata serves RFC 9728 metadata. `resource` is exactly the canonical MCP
// URL; the authorization server is ours or the external provider; the scopes are the spec's.
func protectedResourceMetadata(resource, authServer string, x *ExternalAuth) http.HandlerFunc {
	var names []string
	for _, s := range scopes.All() {
		names = append(names, s.Name)
	}
	doc := map[string]any{
		"resource":                 resource,
		"authorization_servers":    []string{authServer},
		"scopes_supported":         names,
		"bearer_methods_supported": []string{"header"},
		"resource_name":            capapi.ServerTitle, // the spec's server.title
	}
	if x != nil && len(x.ChallengeScopes) > 0 {
		doc["scopes_supported"] = x.ChallengeScopes // what the provider knows, not our scopes
	}
	if x != nil && x.ClientID != "" {
		doc["client_id"] = x.ClientID
	}
	body, _ := json.Marshal(doc)
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		_, _ = w.Write(body)
	}
}

func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

// clientMetadataFetcher resolves Client ID Metadata Documents for the authorization server
// with internal/oauth/cimd's SSRF-hardened, caching fetcher. Production passes zero options;
// tests pass their loopback and CA options.
func clientMetadataFetcher(opts cimd.Options) (oauth.ClientMetadataFetcher, error) {
	f, err := cimd.New(opts)
	if err != nil {
		return nil, err
	}
	return oauth.ClientMetadataFetcherFunc(func(ctx context.Context, clientID string) (*oauth.ClientMetadata, error) {
		m, err := f.Fetch(ctx, clientID)
		if err != nil {
			return nil, err
		}
		return &oauth.ClientMetadata{
			ClientID: m.ClientID, ClientName: m.ClientName, RedirectURIs: m.RedirectURIs, GrantTypes: m.GrantTypes,
			ResponseTypes: m.ResponseTypes, TokenEndpointAuthMethod: m.TokenEndpointAuthMethod,
			ClientURI: m.ClientURI, LogoURI: m.LogoURI,
		}, nil
	}), nil
}

// ErrNoDemoUser is returned when a demo login is not in the database.
var ErrNoDemoUser = errors.New("no such demo user")

// nonSensitiveScopes lists the spec's scopes that reach no personal data, space-separated.
func nonSensitiveScopes() string {
	var out []string
	for _, s := range scopes.All() {
		if !s.Sensitive {
			out = append(out, s.Name)
		}
	}
	return strings.Join(out, " ")
}
