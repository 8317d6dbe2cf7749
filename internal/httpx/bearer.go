package httpx

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/neemias/neemias-mcp/internal/authn"
	"github.com/neemias/neemias-mcp/internal/principal"
)

// Bearer authenticates every request with an RFC 6750 bearer token in the Authorization header
// and puts the verified caller on the request context (principal.With).
//
//   - no Authorization header: 401, `WWW-Authenticate: Bearer resource_metadata="…"` (no error
//     code: RFC 6750 §3.1 forbids one when no credentials were sent);
//   - a header that is not one well-formed Bearer credential, or a token the verifier rejects:
//     401 with `error="invalid_token"`;
//   - two Authorization headers: 400 with `error="invalid_request"`;
//   - a verifier failure that is not ErrInvalidToken: 503 (fail closed), logged (one warning
//     per UnavailableLogInterval, with the count), not echoed.
//
// Tokens in the query string or form body are ignored (MCP forbids them).
type Bearer struct {
	Verifier authn.Verifier
	// ResourceMetadataURL is the RFC 9728 protected resource metadata URL put in every challenge.
	ResourceMetadataURL string
	// Scope, if non-empty, is sent as the challenge's scope hint on 401 (the minimal set a
	// client should ask for first).
	Scope  string
	Logger *slog.Logger
	// Errors writes the bodies of refusals (nil: RFC 6750 OAuth error JSON, and a JSON-RPC
	// error for 503 and 429). The WWW-Authenticate challenge is the same either way.
	Errors ErrorWriter
	// Lookups, when set, limits per client address the tokens LookedUp reports as costing a
	// database lookup before anyone is authenticated (REST's API keys): each one the verifier
	// rejects is counted, and once an address has spent its budget its tokens are refused
	// with 429 before the lookup (lookuplimit.go).
	Lookups  *LookupLimit
	LookedUp func(token string) bool
	// RPCID, when set, returns the JSON-RPC id of the request (nil when it has none or the
	// body cannot be read), so that the JSON-RPC errors written here (503, 429) carry it. It
	// is called only on those paths, and must leave r.Body readable for nobody: the request
	// is answered.
	RPCID func(r *http.Request) json.RawMessage
}

// unavailableLog lets one "token verification unavailable" line through per interval, for
// the whole process (MCP and REST alike); unavailableRefused counts the refusals it stands for.
var (
	unavailableLog     = rate.NewLimiter(rate.Every(UnavailableLogInterval), 1)
	unavailableRefused atomic.Int64
)

// UnavailableLogInterval is the least time between two "token verification unavailable" lines.
const UnavailableLogInterval = 10 * time.Second

// Wrap returns next behind the bearer check.
func (b Bearer) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		values := r.Header.Values("Authorization")
		switch {
		case len(values) == 0:
			b.challenge(w, r, http.StatusUnauthorized, "", "authorization required")
			return
		case len(values) > 1:
			b.challenge(w, r, http.StatusBadRequest, "invalid_request", "more than one Authorization header")
			return
		}
		token, ok := parseBearer(values[0])
		if !ok {
			b.challenge(w, r, http.StatusUnauthorized, "invalid_token", "the credential is not a bearer token")
			return
		}
		looked := b.Lookups != nil && b.LookedUp != nil && b.LookedUp(token)
		if looked && !b.lookupAllowed(w, r) {
			return
		}
		p, err := b.Verifier.Verify(r.Context(), token)
		if err != nil {
			var denied *authn.DeniedError
			if errors.As(err, &denied) {
				// A valid token of an account that may not use this server: 403, and the log
				// says why at the default level (the operator links the account, or fixes
				// the provider's groups).
				b.logger().WarnContext(r.Context(), "valid access token refused: "+denied.Description, denied.LogAttrs...)
				b.deny(w, denied.Description)
				return
			}
			if errors.Is(err, authn.ErrInvalidToken) {
				if looked {
					if err := b.Lookups.Failed(r.Context(), r); err != nil {
						b.logger().WarnContext(r.Context(), "rate limiter unavailable", "error", err)
					}
				}
				b.logger().DebugContext(r.Context(), "bearer token rejected", "reason", err)
				b.challenge(w, r, http.StatusUnauthorized, "invalid_token", "the access token is invalid or expired")
				return
			}
			// An outage (the database or the provider down) fails every request alike: one
			// warning per interval says so, with how many were refused since the last one,
			// instead of an ERROR line per request.
			if n := unavailableRefused.Add(1); unavailableLog.Allow() {
				unavailableRefused.Add(-n)
				b.logger().WarnContext(r.Context(), "token verification unavailable: requests refused with 503", "error", err, "refused", n)
			}
			var ra interface{ RetryAfter() time.Duration } // a provider briefly unreachable
			if errors.As(err, &ra) {
				w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(ra.RetryAfter().Seconds()))))
			} else {
				w.Header().Set("Retry-After", "1") // the database, say: retry soon
			}
			const msg = "token verification is temporarily unavailable"
			if b.Errors != nil {
				b.Errors(w, http.StatusServiceUnavailable, EdgeUnavailable, msg)
				return
			}
			WriteRPCError(w, http.StatusServiceUnavailable, b.rpcID(r), RPCError{Code: CodeInternalError, Message: msg})
			return
		}
		next.ServeHTTP(w, r.WithContext(principal.With(r.Context(), p)))
	})
}

// lookupAllowed answers the request (and returns false) when its address has spent its budget
// of wrong credentials (429), or when the limiter's store fails (503, fail closed).
func (b Bearer) lookupAllowed(w http.ResponseWriter, r *http.Request) bool {
	d, err := b.Lookups.Allow(r.Context(), r)
	status, edge, msg := 0, "", ""
	switch {
	case err != nil:
		b.logger().WarnContext(r.Context(), "rate limiter unavailable", "error", err)
		w.Header().Set("Retry-After", "1")
		status, edge, msg = http.StatusServiceUnavailable, EdgeUnavailable, "the service is temporarily unavailable; retry after 1 s"
	case !d.Allowed:
		d.SetRetryAfter(w)
		status, edge = http.StatusTooManyRequests, EdgeRateLimited
		msg = fmt.Sprintf("too many invalid credentials from this address; retry after %d s", d.RetryAfterSeconds())
	default:
		return true
	}
	if b.Errors != nil {
		b.Errors(w, status, edge, msg)
	} else {
		WriteRPCError(w, status, b.rpcID(r), RPCError{Code: CodeInternalError, Message: msg})
	}
	return false
}

func (b Bearer) rpcID(r *http.Request) json.RawMessage {
	if b.RPCID == nil {
		return nil
	}
	return b.RPCID(r)
}

// deny answers a valid token of a caller who may not use this server: 403 with
// error="access_denied" (not insufficient_scope, which would send the client to re-authorize,
// and not invalid_token, which would send the person through the login again).
func (b Bearer) deny(w http.ResponseWriter, description string) {
	w.Header().Set("WWW-Authenticate", fmt.Sprintf("Bearer error=%q, error_description=%q", "access_denied", description))
	if b.Errors != nil {
		b.Errors(w, http.StatusForbidden, EdgeForbidden, description)
		return
	}
	writeOAuthError(w, http.StatusForbidden, "access_denied", description)
}

func (b Bearer) logger() *slog.Logger {
	if b.Logger != nil {
		return b.Logger
	}
	return slog.Default()
}

func (b Bearer) challenge(w http.ResponseWriter, r *http.Request, status int, code, description string) {
	var params []string
	if code != "" {
		params = append(params, fmt.Sprintf("error=%q", code), fmt.Sprintf("error_description=%q", description))
	}
	if b.Scope != "" {
		params = append(params, fmt.Sprintf("scope=%q", b.Scope))
	}
	params = append(params, fmt.Sprintf("resource_metadata=%q", ResourceMetadataURL(r.Context(), b.ResourceMetadataURL)))
	w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
	if b.Errors != nil {
		edge := EdgeUnauthorized
		if status == http.StatusBadRequest {
			edge = EdgeInvalidInput
		}
		b.Errors(w, status, edge, description)
		return
	}
	writeOAuthError(w, status, code, description)
}

// WriteInsufficientScope answers 403 with an RFC 6750 insufficient_scope challenge naming the
// scopes the operation needs (all of them at once, per MCP step-up authorization).
func WriteInsufficientScope(w http.ResponseWriter, resourceMetadataURL string, scopes ...string) {
	desc := SetInsufficientScope(w.Header(), resourceMetadataURL, scopes...)
	writeOAuthError(w, http.StatusForbidden, "insufficient_scope", desc)
}

// SetInsufficientScope sets the RFC 6750 insufficient_scope challenge of a 403 on h and returns
// its description, for transports that write their own body.
func SetInsufficientScope(h http.Header, resourceMetadataURL string, scopes ...string) string {
	scope := strings.Join(scopes, " ")
	desc := "this operation needs scope " + scope
	h.Set("WWW-Authenticate", fmt.Sprintf("Bearer error=%q, scope=%q, resource_metadata=%q, error_description=%q",
		"insufficient_scope", scope, resourceMetadataURL, desc))
	return desc
}

func writeOAuthError(w http.ResponseWriter, status int, code, description string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if code == "" {
		code = "unauthorized"
	}
	fmt.Fprintf(w, `{"error":%q,"error_description":%q}`, code, description)
}

// parseBearer extracts the token of "Bearer <token68>" (scheme case-insensitive, one space).
func parseBearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	for i := 0; i < len(token); i++ {
		c := token[i]
		isAlnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !isAlnum && !strings.ContainsRune("-._~+/", rune(c)) {
			// token68 allows trailing '=' padding only
			if c == '=' && strings.Trim(token[i:], "=") == "" {
				return token, true
			}
			return "", false
		}
	}
	return token, true
}
