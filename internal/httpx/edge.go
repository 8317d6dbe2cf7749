package httpx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"

	"github.com/neemias/neemias-mcp/internal/authn"
	"github.com/neemias/neemias-mcp/internal/principal"
)

// Edge is the one front of the server's authenticated surfaces, MCP (/mcp and its aliases)
// and REST (/api/v1). The composition root (internal/server) builds it once and gives the same
// value to both transports, so an allowlist, the verifier, the challenges, the rate limiter and
// its budgets are one thing whichever surface a request reaches, and the order of the checks
// is written once, in Wrap. What differs between the surfaces is their SurfaceRules.
//
// Wrap puts a surface's handler behind these layers, outermost first:
//
//  1. the challenges name the metadata of the endpoint the request addressed
//     (EndpointMetadataURL; nothing is answered here);
//  2. Host, and Origin when present, must be allowlisted (HostOriginGuard, 403): before
//     anything of a request that may come from a rebinding page is read, its credential
//     included;
//  3. the surface's own rules for the request line: MCP's one method (405 with Allow: a GET
//     for a stream is refused as the MCP transport says, before any OAuth dance it could
//     start), REST's query string (CheckQuery, 400); before the credential, so a request the
//     surface could never serve costs no token verification;
//  4. one bearer credential (Bearer: 401 with the RFC 6750/9728 challenge, 400, 403
//     access_denied, 503 with Retry-After when verification cannot answer), which puts the
//     caller on the context; a surface's Keys are verified here too, and the wrong ones are
//     limited per client address (Lookups, 429);
//  5. the per-caller rate limit (RateLimit, 429 or 503 with Retry-After): after
//     authentication, because its buckets are per church and user, and one limiter behind
//     both surfaces gives a caller one budget across them;
//  6. the surface's handler.
//
// Differences between the surfaces that are deliberate, and stay:
//
//   - The body rules (a size limit, strict JSON: ReadBody, CheckJSON) are applied by
//     each surface inside its handler, after the rate limit, at the point it can: REST after
//     its scope check (BodyCheck inside the route's authorization), because the route names
//     the capability and a caller without the scope is refused before its body is read; MCP
//     first thing in its handler, because which capability a request addresses is in its
//     body, and its refusals are JSON-RPC errors with parse-error codes.
//   - With nil Errors (MCP) refusals are JSON-RPC errors, and bearer challenges RFC 6750 OAuth
//     error objects; REST's ErrorWriter writes its Error object. Of the JSON-RPC errors only
//     the bearer check's (a 503 while verification cannot answer) carry the request's id
//     (RPCID, which reads the body): the Host/Origin, method and rate-limit refusals answer
//     without one.
//
// Around the edge, internal/server adds what is no surface's own: request ids, security
// headers, host routing of a split origin and Retry-After on every 503 (the whole mux), and
// the refusal of a church API key on /mcp (a 401 saying MCP needs OAuth; it wraps the MCP
// endpoint, so it answers before the Host check); REST marks every answer no-store
// (internal/rest).
//
// Wrap reads the Edge when it is called: set every field first and change none afterwards.
type Edge struct {
	// Hosts and Origins are the Host and Origin allowlists (HostOriginGuard); Hosts is
	// required. A surface may answer more hosts (SurfaceRules.Hosts).
	Hosts, Origins []string
	// Verifier authenticates bearer tokens (required); a surface's Keys go to their own.
	Verifier authn.Verifier
	// ResourceMetadataURL is the RFC 9728 metadata URL every challenge names (required), and
	// EndpointMetadataURL, when set, the one of the endpoint a request addressed instead (each
	// alias of the MCP endpoint, and each loopback name, has metadata of its own): see
	// WithResourceMetadataURL and MetadataURL.
	ResourceMetadataURL string
	EndpointMetadataURL func(r *http.Request) string
	// ChallengeScope, if non-empty, is the scope hint of 401 challenges.
	ChallengeScope string
	// RateLimit, when set, limits requests per authenticated caller.
	RateLimit *RateLimiter
	// Lookups, when set, limits per client address the wrong credentials of a surface's Keys.
	Lookups *LookupLimit
	// Logger receives the bearer check's diagnostics (nil: slog.Default).
	Logger *slog.Logger
}

// SurfaceRules are what one surface brings to the Edge: how it writes a refusal and the few
// rules that are its own.
type SurfaceRules struct {
	// Errors writes the surface's refusals (nil: JSON-RPC errors, and RFC 6750 OAuth error
	// objects for bearer challenges, as MCP answers).
	Errors ErrorWriter
	// RPCID, when set, returns a request's JSON-RPC id for the errors of the bearer check
	// (see Bearer.RPCID).
	RPCID func(r *http.Request) json.RawMessage
	// Method, when set, is the only method the surface takes: any other gets 405 with an Allow
	// header (MCP: POST; stateless, it has no GET stream and no DELETE, and OPTIONS gets no
	// CORS answer).
	Method string
	// Query, when set, refuses a query string that CheckQuery refuses, before anything reads
	// it (REST: r.URL.Query() would drop a ";"-separated pair silently, and Get takes the
	// first of two).
	Query *QueryCheck
	// Hosts are Host values this surface answers besides the Edge's (REST: the API host of a
	// split origin, which host routing keeps MCP off).
	Hosts []string
	// Keys, when set, are credentials the surface takes besides the Edge's bearer tokens
	// (REST's church API keys).
	Keys *Keys
}

// Keys are bearer credentials that cost a database lookup before anyone is authenticated
// (church API keys; MCP takes none): a token Is recognizes (by its form: no lookup) is
// verified by Verifier, never by the Edge's, and each one refused counts against the Edge's
// per-address Lookups.
type Keys struct {
	Is       func(token string) bool
	Verifier authn.Verifier
}

// Check reports what a usable Edge lacks (the transports call it when they are built).
func (e *Edge) Check() error {
	switch {
	case e == nil:
		return errors.New("an edge is required (httpx.Edge)")
	case e.Verifier == nil:
		return errors.New("the edge needs a Verifier")
	case e.ResourceMetadataURL == "":
		return errors.New("the edge needs a ResourceMetadataURL")
	case len(e.Hosts) == 0:
		return errors.New("the edge needs Hosts (httpx.LoopbackHosts() for local runs)")
	}
	return nil
}

// MetadataURL is the metadata URL the challenges of the request of ctx name: its endpoint's
// (EndpointMetadataURL) behind Wrap, else ResourceMetadataURL. A surface's own challenges (the
// 403 insufficient_scope of a step-up) use it.
func (e *Edge) MetadataURL(ctx context.Context) string {
	return ResourceMetadataURL(ctx, e.ResourceMetadataURL)
}

// Wrap returns next behind the edge, with the surface's rules s (see Edge for the order).
func (e *Edge) Wrap(next http.Handler, s SurfaceRules) http.Handler {
	bearer := Bearer{Verifier: e.Verifier, ResourceMetadataURL: e.ResourceMetadataURL, Scope: e.ChallengeScope,
		Logger: e.Logger, Errors: s.Errors, RPCID: s.RPCID}
	if s.Keys != nil {
		bearer.Verifier = either(s.Keys, e.Verifier)
		bearer.Lookups, bearer.LookedUp = e.Lookups, s.Keys.Is
	}
	layers := []func(http.Handler) http.Handler{ // outermost first
		e.endpoint,
		HostOriginGuard{Hosts: append(slices.Clip(e.Hosts), s.Hosts...), Origins: e.Origins, Errors: s.Errors}.Wrap,
		s.onlyMethod,
		s.query,
		bearer.Wrap,
		func(h http.Handler) http.Handler {
			if e.RateLimit == nil {
				return h
			}
			return e.RateLimit.WrapWith(h, s.Errors)
		},
	}
	h := next
	for _, layer := range slices.Backward(layers) {
		h = layer(h)
	}
	return h
}

// endpoint names the request's endpoint metadata on its context (layer 1).
func (e *Edge) endpoint(next http.Handler) http.Handler {
	of := e.EndpointMetadataURL
	if of == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(WithResourceMetadataURL(r.Context(), of(r))))
	})
}

// onlyMethod answers every method but s.Method with 405 (layer 3).
func (s SurfaceRules) onlyMethod(next http.Handler) http.Handler {
	if s.Method == "" {
		return next
	}
	msg := "Method Not Allowed: this endpoint accepts " + s.Method + " only"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != s.Method {
			w.Header().Set("Allow", s.Method)
			if s.Errors != nil {
				s.Errors(w, http.StatusMethodNotAllowed, EdgeInvalidInput, msg)
				return
			}
			WriteRPCError(w, http.StatusMethodNotAllowed, nil, RPCError{Code: CodeInvalidRequest, Message: msg})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// query checks the query string (layer 3).
func (s SurfaceRules) query(next http.Handler) http.Handler {
	if s.Query == nil {
		return next
	}
	return s.Query.Wrap(next)
}

// either sends the tokens of k to k's verifier and the others to v.
func either(k *Keys, v authn.Verifier) authn.Verifier {
	return authn.VerifierFunc(func(ctx context.Context, token string) (principal.Principal, error) {
		if k.Is(token) {
			return k.Verifier.Verify(ctx, token)
		}
		return v.Verify(ctx, token)
	})
}

// ErrorWriter writes a refusal of the edge in a transport's own error format. code is a stable
// machine name ("unauthorized", "forbidden", "invalid_input", "rate_limited", "too_large",
// "unavailable"); message is for people and never quotes the request. The MCP endpoint leaves
// the writers nil (JSON-RPC errors, and RFC 6750 OAuth errors for bearer challenges); REST sets
// one that writes its documented Error object.
type ErrorWriter func(w http.ResponseWriter, status int, code, message string)

// Edge codes an ErrorWriter receives.
const (
	EdgeUnauthorized = "unauthorized"
	EdgeForbidden    = "forbidden"
	EdgeInvalidInput = "invalid_input"
	EdgeRateLimited  = "rate_limited"
	EdgeTooLarge     = "too_large"
	EdgeUnavailable  = "unavailable"
)

// BodyCheck applies the body rules of the edge to a request that has a body (REST; the MCP
// endpoint applies the same functions itself, because it answers in JSON-RPC): at most
// MaxBytes (413), one well-formed JSON value of valid UTF-8, at most MaxDepth deep, without
// duplicate or case-variant keys (400). The body is read once and handed on in memory.
type BodyCheck struct {
	MaxBytes int64
	MaxDepth int
	Errors   ErrorWriter
}

// Limit is the body limit b applies.
func (b BodyCheck) Limit() int64 {
	if b.MaxBytes <= 0 {
		return DefaultMaxBodyBytes
	}
	return b.MaxBytes
}

// RefuseRead answers a body ReadBody could not read (err): 413 past the limit, else 400.
func (b BodyCheck) RefuseRead(w http.ResponseWriter, err error) {
	if errors.Is(err, ErrBodyTooLarge) {
		b.Errors(w, http.StatusRequestEntityTooLarge, EdgeTooLarge, fmt.Sprintf("request body exceeds %d bytes", b.Limit()))
		return
	}
	b.Errors(w, http.StatusBadRequest, EdgeInvalidInput, "could not read the request body")
}

// Wrap returns next behind the check.
func (b BodyCheck) Wrap(next http.Handler) http.Handler {
	limit, depth := b.Limit(), b.MaxDepth
	if depth <= 0 {
		depth = DefaultMaxJSONDepth
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || (r.ContentLength == 0 && r.Method == http.MethodGet) {
			next.ServeHTTP(w, r)
			return
		}
		body, err := ReadBody(w, r, limit)
		if err != nil {
			b.RefuseRead(w, err)
			return
		}
		if len(body) > 0 {
			if err := CheckJSON(body, depth); err != nil {
				var je *JSONError
				errors.As(err, &je)
				b.Errors(w, http.StatusBadRequest, EdgeInvalidInput, je.Reason)
				return
			}
		}
		SetBody(r, body)
		next.ServeHTTP(w, r)
	})
}
