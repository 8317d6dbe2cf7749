package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/authn"
	"github.com/neemias/neemias-mcp/internal/ratelimit"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/tokens"
)

// The endpoints, relative to the issuer.
const (
	PathAuthorize     = "/authorize"
	PathToken         = "/token"
	PathRegister      = "/register"
	PathRevoke        = "/revoke"
	PathJWKS          = "/jwks"
	PathLogin         = "/login"
	PathLoginUpstream = "/login/upstream"
	PathLoginCallback = "/login/callback"
	PathConsent       = "/consent"

	PathAuthServerMetadata = "/.well-known/oauth-authorization-server"
	PathOpenIDMetadata     = "/.well-known/openid-configuration"
)

// AS is the built-in authorization server. It keeps no state of its own between requests
// (everything is in PostgreSQL), so any number of replicas serve any step of any flow.
type AS struct {
	cfg    Config
	pool   poolTx
	q      *db.Queries
	log    *slog.Logger
	op     http.Handler
	pages  *pages
	secure bool

	// resources maps the resourceKey of Resource and of each ResourceAliases entry to the URL
	// a token for it carries as aud (the first spelling listed).
	resources map[string]string
	// extraResources maps the resourceKey of each Options.ExtraResources entry to the entry.
	extraResources map[string]string
	limits         ratelimit.Store
	upstream       *upstreamLogin

	keyMu  sync.Mutex
	key    tokens.Key
	keyAt  time.Time
	purged atomic.Int64
	// dummyHash is checked when a login names no account, so an unknown email costs the same
	// argon2id work as a known one.
	dummyHash string
	now       func() time.Time
}

// poolTx is what the server needs of the pgx pool.
type poolTx interface {
	db.DBTX
	Begin(ctx context.Context) (pgx.Tx, error)
}

// New assembles the authorization server.
func New(cfg Config) (*AS, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.Options = cfg.Options.withDefaults()
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	iss, err := url.Parse(cfg.Issuer)
	if err != nil || (iss.Scheme != "https" && iss.Scheme != "http") || iss.Host == "" {
		return nil, fmt.Errorf("oauth: issuer %q must be an absolute http(s) URL", cfg.Issuer)
	}
	pool := cfg.Store.Pool()
	dummy, err := store.DummyPasswordHash()
	if err != nil {
		return nil, err
	}
	a := &AS{
		cfg: cfg, pool: pool, q: db.New(pool), log: cfg.Logger, secure: iss.Scheme == "https",
		limits:    cfg.Limits,
		dummyHash: dummy,
		now:       time.Now,
	}
	if a.limits == nil {
		a.limits = &ratelimit.Memory{}
	}
	a.resources = map[string]string{}
	for _, r := range append([]string{cfg.Resource}, cfg.ResourceAliases...) {
		k, ok := resourceKey(r)
		if !ok {
			return nil, fmt.Errorf("oauth: resource %q is not an absolute URL", r)
		}
		if _, dup := a.resources[k]; !dup {
			a.resources[k] = r
		}
	}
	for _, r := range cfg.ExtraResources {
		k, ok := resourceKey(r)
		if !ok {
			return nil, fmt.Errorf("oauth: extra resource %q must be an absolute http(s) URL without query or fragment", r)
		}
		if _, own := a.resources[k]; own {
			return nil, fmt.Errorf("oauth: extra resource %q is this server's own MCP endpoint", r)
		}
		if a.extraResources == nil {
			a.extraResources = map[string]string{}
		}
		a.extraResources[k] = r
	}
	if a.pages, err = newPages(); err != nil {
		return nil, err
	}
	if cfg.Upstream != nil {
		a.upstream = newUpstreamLogin(a, *cfg.Upstream)
		if a.upstreamOnlyUnusable() {
			a.log.Error("login is provider-only but the provider's client secret is not configured: /authorize answers 503 until it is (--login-provider-client-secret-file or $NEEMIAS_LOGIN_PROVIDER_CLIENT_SECRET_FILE)")
		}
	}
	a.op = op.RegisterServer(&opServer{as: a}, op.Endpoints{
		Authorization: op.NewEndpoint(PathAuthorize),
		Token:         op.NewEndpoint(PathToken),
		Revocation:    op.NewEndpoint(PathRevoke),
		JwksURI:       op.NewEndpoint(PathJWKS),
	},
		op.WithEncoder(issEncoder{iss: cfg.Issuer}),
		op.WithServerCORSOptions(nil), // ours, per endpoint (none on /authorize)
	)
	return a, nil
}

// Register mounts every endpoint of the authorization server on mux.
func (a *AS) Register(mux *http.ServeMux) {
	mux.HandleFunc(PathAuthorize, a.authorize)
	mux.Handle(PathToken, cors(a.limitedJSON(limitToken, tokenRequests(a.op))))
	mux.Handle(PathRevoke, cors(a.limitedJSON(limitRevoke, tokenRequests(a.op))))
	mux.Handle(PathJWKS, cors(a.op))
	if !a.cfg.DisableRegistration {
		mux.Handle(PathRegister, cors(http.HandlerFunc(a.register)))
	}
	// The pages read their URL query as written (query.go); /authorize checks its query and
	// body together itself.
	mux.HandleFunc(PathLogin, a.checkedPage(a.login))
	mux.HandleFunc(PathConsent, a.checkedPage(a.consent))
	mux.HandleFunc(PathSetPassword, a.checkedPage(a.setPassword))
	mux.HandleFunc(PathLogout, a.checkedPage(a.logout))
	if a.upstream != nil {
		mux.HandleFunc(PathLoginUpstream, a.checkedPage(a.upstreamStart))
		mux.HandleFunc(PathLoginCallback, a.checkedPage(a.upstreamCallback))
	}
	meta := cors(http.HandlerFunc(a.metadata))
	mux.Handle(PathAuthServerMetadata, meta)
	mux.Handle(PathOpenIDMetadata, meta)
	// An issuer with a path (behind a proxy that strips it): RFC 8414 §3.1 path insertion and
	// the OpenID Connect path-appended form.
	if p := strings.TrimSuffix(mustURL(a.cfg.Issuer).EscapedPath(), "/"); p != "" {
		mux.Handle(PathAuthServerMetadata+p, meta)
		mux.Handle(PathOpenIDMetadata+p, meta)
		mux.Handle(p+PathOpenIDMetadata, meta)
	}
}

// CheckToken is the resource server's revocation check of an access token this server issued
// (tokens.Verifier.Check): a token whose grant was revoked (code replay, refresh-token reuse,
// RFC 7009 revocation, a disabled account) is refused. One primary-key lookup per request;
// tokens without a grant (the dev token command) are not checked.
func (a *AS) CheckToken(ctx context.Context, c *tokens.Claims) error {
	if c.GrantID == "" {
		return nil
	}
	id, err := uuid.Parse(c.GrantID)
	if err != nil {
		return fmt.Errorf("%w: malformed grant_id", authn.ErrInvalidToken)
	}
	revoked, err := a.q.OAuthGrantRevoked(ctx, id)
	if err != nil {
		return fmt.Errorf("checking the token's grant: %w", err)
	}
	if revoked {
		return fmt.Errorf("%w: grant revoked", authn.ErrInvalidToken)
	}
	return nil
}

// LinkUpstreamIdentity links the upstream provider's account (issuer, subject) to the local
// user userID; a later login with that account acts as that user.
func LinkUpstreamIdentity(ctx context.Context, st *store.Store, issuer, subject string, churchID, userID uuid.UUID) error {
	issuer = NormalizeIssuer(issuer)
	if issuer == "" || subject == "" {
		return errors.New("oauth: issuer and subject are required")
	}
	return db.New(st.Pool()).LinkOAuthUpstreamIdentity(ctx, db.LinkOAuthUpstreamIdentityParams{
		Issuer: issuer, Subject: subject, ChurchID: churchID, UserID: userID,
	})
}

// NormalizeIssuer is the one form of an issuer URL stored with and looked up in upstream
// identities: without a trailing slash, so "https://idp.example/" and "https://idp.example"
// name the same provider whichever way a token or an administrator spells it.
func NormalizeIssuer(issuer string) string { return strings.TrimSuffix(issuer, "/") }

// metadataDoc is RFC 8414 authorization server metadata, also served as OpenID Connect
// discovery (the members OpenID Connect requires are included).
type metadataDoc struct {
	Issuer                                     string   `json:"issuer"`
	AuthorizationEndpoint                      string   `json:"authorization_endpoint"`
	TokenEndpoint                              string   `json:"token_endpoint"`
	RegistrationEndpoint                       string   `json:"registration_endpoint,omitempty"`
	RevocationEndpoint                         string   `json:"revocation_endpoint"`
	JWKSURI                                    string   `json:"jwks_uri"`
	ScopesSupported                            []string `json:"scopes_supported"`
	ResponseTypesSupported                     []string `json:"response_types_supported"`
	ResponseModesSupported                     []string `json:"response_modes_supported"`
	GrantTypesSupported                        []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported          []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethodsSupported     []string `json:"revocation_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported              []string `json:"code_challenge_methods_supported"`
	AuthorizationResponseIssParameterSupported bool     `json:"authorization_response_iss_parameter_supported"`
	ClientIDMetadataDocumentSupported          bool     `json:"client_id_metadata_document_supported,omitempty"`
	SubjectTypesSupported                      []string `json:"subject_types_supported"`
	IDTokenSigningAlgValuesSupported           []string `json:"id_token_signing_alg_values_supported"`
	ClaimsSupported                            []string `json:"claims_supported"`
	UILocalesSupported                         []string `json:"ui_locales_supported"`
	RequestParameterSupported                  bool     `json:"request_parameter_supported"`
	RequestURIParameterSupported               bool     `json:"request_uri_parameter_supported"`
}

func (a *AS) metadata(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	iss := a.cfg.Issuer
	var names []string
	for _, s := range scopes.All() {
		names = append(names, s.Name)
	}
	d := metadataDoc{
		Issuer:                                     iss,
		AuthorizationEndpoint:                      iss + PathAuthorize,
		TokenEndpoint:                              iss + PathToken,
		RevocationEndpoint:                         iss + PathRevoke,
		JWKSURI:                                    iss + PathJWKS,
		ScopesSupported:                            append(names, "openid", "offline_access"),
		ResponseTypesSupported:                     []string{"code"},
		ResponseModesSupported:                     []string{"query"},
		GrantTypesSupported:                        []string{"authorization_code", "refresh_token"},
		TokenEndpointAuthMethodsSupported:          []string{"none", "client_secret_basic", "client_secret_post"},
		RevocationEndpointAuthMethodsSupported:     []string{"none", "client_secret_basic", "client_secret_post"},
		CodeChallengeMethodsSupported:              []string{"S256"},
		AuthorizationResponseIssParameterSupported: true,
		ClientIDMetadataDocumentSupported:          a.cfg.ClientMetadata != nil,
		SubjectTypesSupported:                      []string{"public"},
		IDTokenSigningAlgValuesSupported:           []string{"RS256"},
		ClaimsSupported:                            []string{"iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "amr", "azp", "at_hash"},
		UILocalesSupported:                         []string{"pt-BR", "en"},
	}
	if !a.cfg.DisableRegistration {
		d.RegistrationEndpoint = iss + PathRegister
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_ = json.NewEncoder(w).Encode(d)
}

// signingKey returns the active signing key, reloaded every minute so a rotation reaches
// every replica quickly.
func (a *AS) signingKey(ctx context.Context) (tokens.Key, error) {
	a.keyMu.Lock()
	defer a.keyMu.Unlock()
	if a.key.Private != nil && a.now().Sub(a.keyAt) < time.Minute {
		return a.key, nil
	}
	k, err := a.cfg.Keys.Active(ctx)
	if err != nil {
		return tokens.Key{}, err
	}
	a.key, a.keyAt = k, a.now()
	return k, nil
}

// commitWith marks an error whose transaction must still commit (a replayed code revokes its
// grant and still fails). revoked, if set, is the grant it revoked (user: the account, when it
// is disabled): Config.OnRevoke is told after the commit.
type commitWith struct {
	err           error
	revoked, user uuid.UUID
}

func (c commitWith) Error() string { return c.err.Error() }
func (c commitWith) Unwrap() error { return c.err }

// inTx runs fn in a transaction of the pool (the owner's context: the oauth_* tables are
// closed to the application role). fn's error rolls back, unless it is a commitWith.
func (a *AS) inTx(ctx context.Context, fn func(q *db.Queries) error) error {
	tx, err := a.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	ferr := fn(db.New(tx))
	var keep commitWith
	if ferr != nil && !errors.As(ferr, &keep) {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return ferr
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if ferr != nil {
		a.revoked(keep.revoked, keep.user)
		return keep.err
	}
	return nil
}

// revoked tells Config.OnRevoke that grant (and, if set, the account user) was revoked.
func (a *AS) revoked(grant, user uuid.UUID) {
	if a.cfg.OnRevoke == nil || grant == uuid.Nil && user == uuid.Nil {
		return
	}
	g, u := "", ""
	if grant != uuid.Nil {
		g = grant.String()
	}
	if user != uuid.Nil {
		u = user.String()
	}
	a.cfg.OnRevoke(g, u)
}

// maybePurge deletes expired rows, at most once a minute per replica, in the background.
func (a *AS) maybePurge(ctx context.Context) {
	now := a.now().Unix()
	last := a.purged.Load()
	if now-last < 60 || !a.purged.CompareAndSwap(last, now) {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		for _, purge := range []func(context.Context) (int64, error){
			a.q.PurgeOAuthAuthRequests, a.q.PurgeOAuthCodes, a.q.PurgeOAuthGrants, a.q.PurgeOAuthClients,
			a.q.PurgeOAuthLoginSessions,
		} {
			if _, err := purge(ctx); err != nil {
				a.log.WarnContext(ctx, "purging expired authorization-server rows", "error", err)
				return
			}
		}
	}()
}

// random returns n random bytes, base64url-encoded without padding.
func random(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand panics rather than return an error)
	return base64.RawURLEncoding.EncodeToString(b)
}

func hash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// clientIP is the key of the per-address limits: the connection's peer. Behind a reverse
// proxy every request shares the proxy's address; the limits then apply to all together.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		return &url.URL{}
	}
	return u
}

// cors lets browser-based clients (the MCP Inspector) read the metadata, register, and call
// the token endpoints: any origin, no credentials (none of these use cookies). /authorize,
// /login and /consent have no CORS at all.
func cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", "*")
			h.Set("Access-Control-Expose-Headers", "WWW-Authenticate, Retry-After")
			if r.Method == http.MethodOptions {
				h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
				h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, MCP-Protocol-Version")
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
