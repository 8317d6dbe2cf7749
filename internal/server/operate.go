package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/gen/schemas"
	"github.com/neemias/neemias-mcp/internal/apikey"
	"github.com/neemias/neemias-mcp/internal/authn"
	"github.com/neemias/neemias-mcp/internal/httpx"
	"github.com/neemias/neemias-mcp/internal/metrics"
	"github.com/neemias/neemias-mcp/internal/oauth/external"
	"github.com/neemias/neemias-mcp/internal/pipeline"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/tokens"
	"github.com/neemias/neemias-mcp/internal/tracing"
)

// This file is the operations side of the composition root (issue 13): instrumentation,
// readiness, development-token rules and host routing, kept apart from New's wiring.

// DevTokenClient is the client id of development tokens (`neemias-mcp token`, the demo's
// printed tokens); MaxDevTokenTTL bounds their lifetime.
const (
	DevTokenClient = "neemias-dev-token"
	MaxDevTokenTTL = 12 * time.Hour
)

// devTokenCheck extends the verifier's per-request check to development tokens, which no
// grant backs: refused when minted for more than MaxDevTokenTTL, or once their user is
// disabled (or gone, or moved to another church). next is the grant check.
func devTokenCheck(st *store.Store, next func(context.Context, *tokens.Claims) error) func(context.Context, *tokens.Claims) error {
	q := db.New(st.Pool())
	return func(ctx context.Context, c *tokens.Claims) error {
		if c.ClientID == DevTokenClient {
			if c.IssuedAt == nil || c.Expiry == nil || c.Expiry.Time().Sub(c.IssuedAt.Time()) > MaxDevTokenTTL {
				return fmt.Errorf("%w: a development token's lifetime exceeds %s", authn.ErrInvalidToken, MaxDevTokenTTL)
			}
			id, err := uuid.Parse(c.Subject)
			if err != nil {
				return fmt.Errorf("%w: subject is not a user id", authn.ErrInvalidToken)
			}
			u, err := q.OAuthUser(ctx, id)
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("%w: the user is disabled or unknown", authn.ErrInvalidToken)
			}
			if err != nil {
				return fmt.Errorf("checking the development token's user: %w", err)
			}
			if u.DisabledAt != nil || u.ChurchID.String() != c.ChurchID {
				return fmt.Errorf("%w: the user is disabled or unknown", authn.ErrInvalidToken)
			}
		}
		if next != nil {
			return next(ctx, c)
		}
		return nil
	}
}

// interceptors are the pipeline's cross-cutting concerns, outermost first: metrics (calls
// and refusals), then traces (a span per call).
func interceptors(cfg Config) []pipeline.Interceptor {
	out := []pipeline.Interceptor{{Name: "metrics", Call: cfg.Metrics.WrapCall, Refused: cfg.Metrics.WrapRefusal}}
	if cfg.Tracer != nil {
		out = append(out, pipeline.Interceptor{Name: "tracing", Call: func(next pipeline.CallFunc) pipeline.CallFunc {
			return tracing.WrapCall(cfg.Tracer, next)
		}})
	}
	return out
}

// observeMCP is the MCP handler's Observe hook: the method for metrics, the span for traces.
func observeMCP(cfg Config) func(ctx context.Context, method, traceparent, tracestate string) context.Context {
	var span func(context.Context, string, string, string) context.Context
	if cfg.Tracer != nil {
		span = tracing.ObserveMCP(cfg.Tracer)
	}
	return func(ctx context.Context, method, traceparent, tracestate string) context.Context {
		metrics.SetMCPMethod(ctx, method)
		if span != nil {
			ctx = span(ctx, method, traceparent, tracestate)
		}
		return ctx
	}
}

// outermost wraps the whole handler: traces (the HTTP span), then metrics.
func outermost(cfg Config, h http.Handler) http.Handler {
	h = cfg.Metrics.Middleware(h)
	if cfg.Tracer != nil {
		h = tracing.Middleware(cfg.Tracer, h)
	}
	return h
}

// schemaHead is the newest embedded migration's version.
func schemaHead() (int64, error) {
	entries, err := fs.ReadDir(store.MigrationsFS(), ".")
	if err != nil {
		return 0, err
	}
	var head int64
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		if v, err := strconv.ParseInt(num, 10, 64); ok && err == nil && v > head {
			head = v
		}
	}
	if head == 0 {
		return 0, errors.New("no embedded migrations")
	}
	return head, nil
}

// readinessChecks are what /readyz asks beyond the database's answer.
type readinessChecks struct {
	st *store.Store
	// keys reports whether signing keys are loaded (built-in mode; nil in external mode).
	keys func(ctx context.Context) error
	// provider is external provider mode's verifier (nil in built-in mode).
	provider *external.Verifier
	head     int64
}

// readiness is GET /readyz: 200 only when the database answers, its schema is at the newest
// embedded migration, and the signing keys are loaded (built-in mode) or the provider's keys
// are held (external provider mode; cached keys count, they keep serving while the provider
// is down); otherwise 503 with Retry-After and what is missing. /healthz stays the liveness
// check, so an unreachable provider never gets a replica restarted.
func readiness(c readinessChecks) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		report := map[string]string{"database": "ok", "migrations": "ok"}
		ready := true
		fail := func(key, reason string) { report[key], ready = reason, false }
		if err := c.st.Pool().Ping(ctx); err != nil {
			fail("database", "unavailable")
			report["migrations"] = "unknown"
		} else {
			if reason := notWritable(ctx, c.st.Pool()); reason != "" { // readiness_writable.go
				fail("database", reason)
			}
			var current int64
			err := c.st.Pool().QueryRow(ctx, `SELECT coalesce(max(version_id), 0) FROM goose_db_version WHERE is_applied`).Scan(&current)
			switch {
			case err != nil:
				fail("migrations", "unknown: the migration table cannot be read")
			case current < c.head:
				fail("migrations", fmt.Sprintf("behind: at %d, head is %d; run neemias-mcp migrate up", current, c.head))
			case current > c.head:
				fail("migrations", fmt.Sprintf("ahead: at %d, this binary knows %d; deploy the newer binary", current, c.head))
			}
		}
		if c.keys != nil {
			report["signing_keys"] = "ok"
			if err := c.keys(ctx); err != nil {
				fail("signing_keys", "unavailable: "+err.Error())
			}
		}
		if c.provider != nil {
			report["identity_provider"] = "ok"
			if err := c.provider.Ready(ctx); err != nil {
				fail("identity_provider", "unavailable: "+err.Error())
			}
		}
		report["status"] = "ready"
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if !ready {
			report["status"] = "unavailable"
			w.Header().Set("Retry-After", "5")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(report)
	})
}

// signingKeysLoaded reports whether the signing key this process signs with (kid) is in the
// key store's published set: false when the store cannot be read, or when the key was
// retired by a rotation elsewhere (tokens this replica mints would no longer verify).
func signingKeysLoaded(keys *tokens.KeyStore, kid string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		set, err := keys.JWKS(ctx)
		if err != nil {
			return errors.New("the key store cannot be read")
		}
		if len(set.Key(kid)) == 0 {
			return errors.New("the signing key in use is not among the published keys")
		}
		return nil
	}
}

// hostRouting splits one origin in two by Host (issue 13): requests for mcpHost reach only
// MCP, the OAuth endpoints and the metadata; requests for apiHost only REST and its OpenAPI
// document; health and metrics answer on both; any other host gets 404 (421 would tell a
// scanner more). Both empty: next unchanged.
func hostRouting(mcpHost, apiHost string, next http.Handler) http.Handler {
	if mcpHost == "" && apiHost == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := strings.ToLower(r.Host)
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		surface := httpx.Surface(r.URL.Path)
		allowed := surface == httpx.SurfaceHealth
		switch host {
		case mcpHost:
			allowed = allowed || surface == httpx.SurfaceMCP || surface == httpx.SurfaceOAuth || surface == httpx.SurfaceMetadata
		case apiHost:
			allowed = allowed || (surface == httpx.SurfaceREST)
		}
		if !allowed {
			http.NotFound(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// apiHosts are the Host values REST answers besides the edge's (the public URL's): the API
// host when the origin is split (hostRouting keeps MCP off it).
func apiHosts(apiHost string) []string {
	if apiHost == "" {
		return nil
	}
	return []string{apiHost}
}

// openAPIDocument serves the REST API's OpenAPI document (gen/openapi/openapi.json, embedded by
// gen/schemas): both credentials (OAuth, API keys), every operation, the problem format.
func openAPIDocument(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(schemas.OpenAPI())
}

// openAPIHandler serves the OpenAPI document. In external provider mode its oauth2 scheme
// names the provider's endpoints, not this server's /authorize and /token (which do not
// exist there): the authorization and token endpoints of the provider's discovery document,
// or, until discovery has succeeded, an openIdConnect scheme naming that document.
func openAPIHandler(v *external.Verifier) http.HandlerFunc {
	if v == nil {
		return openAPIDocument
	}
	return func(w http.ResponseWriter, _ *http.Request) {
		body, err := externalOpenAPI(schemas.OpenAPI(), v)
		if err != nil {
			http.Error(w, "OpenAPI document unavailable", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		_, _ = w.Write(body)
	}
}

func externalOpenAPI(doc []byte, v *external.Verifier) ([]byte, error) {
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	comps, _ := d["components"].(map[string]any)
	schemes, _ := comps["securitySchemes"].(map[string]any)
	oa, _ := schemes["oauth2"].(map[string]any)
	if oa == nil {
		return doc, nil
	}
	oa["description"] = "OAuth 2 bearer token of the identity provider " + v.Issuer() + " (this server is its resource server)."
	flows, _ := oa["flows"].(map[string]any)
	code, _ := flows["authorizationCode"].(map[string]any)
	if authz, tok, ok := v.Endpoints(); ok && authz != "" && tok != "" && code != nil {
		code["authorizationUrl"], code["tokenUrl"] = authz, tok
	} else {
		schemes["oauth2"] = map[string]any{"type": "openIdConnect", "description": oa["description"],
			"openIdConnectUrl": strings.TrimSuffix(v.Issuer(), "/") + "/.well-known/openid-configuration"}
	}
	return json.Marshal(d)
}

// restKeys are the credentials REST takes besides the edge's OAuth tokens: church API keys
// (internal/apikey), told apart by their form, verified against the store.
func restKeys(cfg Config, st *store.Store) *httpx.Keys {
	return &httpx.Keys{Is: apikey.Is, Verifier: cfg.Metrics.WrapVerifier(apikey.Verifier{Store: st})}
}

// refuseAPIKeys answers a request to the MCP endpoint that presents an API key with 401 and a
// challenge that says why: API keys are for the REST API; MCP clients use OAuth (the
// protected-resource metadata names the authorization server).
func refuseAPIKeys(metadataURL string, next http.Handler) http.Handler {
	const desc = "API keys are accepted on the REST API (/api/v1) only; MCP needs OAuth: discover the authorization server from resource_metadata"
	body, _ := json.Marshal(map[string]string{"error": "invalid_token", "error_description": desc})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && apikey.Is(strings.TrimSpace(tok)) {
			metrics.SetAuthReason(r.Context(), "api_key_on_mcp")
			w.Header().Set("WWW-Authenticate", fmt.Sprintf("Bearer error=%q, error_description=%q, resource_metadata=%q", "invalid_token", desc, metadataURL))
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write(body)
			return
		}
		next.ServeHTTP(w, r)
	})
}
