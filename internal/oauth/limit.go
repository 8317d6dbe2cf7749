package oauth

import (
	"context"
	"net/http"

	"github.com/neemias/neemias-mcp/internal/ratelimit"
)

// The per-address limits of the authorization server's endpoints (and, in lookups.go, of the
// authorization requests looked up by id for a browser). Their buckets are in
// Config.Limits (ratelimit.Postgres in `serve`: shared by every replica), keyed by the
// endpoint and the client address.
const (
	limitAuthorize = "authorize"
	limitToken     = "token"
	limitRegister  = "register"
	limitLogin     = "login"
	// limitRevoke is RFC 7009 revocation: a lookup of the token (and of the client) for
	// anyone who asks, limited as the token endpoint is, in buckets of its own.
	limitRevoke = "revoke"
)

func (a *AS) limitOf(name string) ratelimit.Limit {
	o := a.cfg.Options
	switch name {
	case limitAuthorize:
		return ratelimit.Limit{PerSecond: o.AuthorizePerMinute / 60, Burst: o.AuthorizeBurst}
	case limitToken, limitRevoke:
		return ratelimit.Limit{PerSecond: o.TokenPerMinute / 60, Burst: o.TokenBurst}
	case limitRegister:
		return ratelimit.Limit{PerSecond: o.RegistrationPerHour / 3600, Burst: o.RegistrationBurst}
	default:
		return ratelimit.Limit{PerSecond: o.LoginPerMinute / 60, Burst: o.LoginBurst}
	}
}

// allow takes a token of the named limit for the request's address. Refused, it sets
// Retry-After and returns the HTTP status to answer with: 429 over the limit, 503 when the
// store cannot be reached (the endpoint needs the database anyway; fail closed).
func (a *AS) allow(ctx context.Context, w http.ResponseWriter, r *http.Request, name string) (ok bool, status int) {
	d, err := a.limits.Take(ctx, name+":"+clientIP(r), a.limitOf(name))
	if err != nil {
		a.log.WarnContext(ctx, "rate limiter unavailable", "endpoint", name, "error", err)
		w.Header().Set("Retry-After", "1")
		return false, http.StatusServiceUnavailable
	}
	if !d.Allowed {
		d.SetRetryAfter(w)
		return false, http.StatusTooManyRequests
	}
	return true, 0
}

// limitedJSON refuses requests over the named limit with an OAuth JSON error (the token
// endpoint's shape).
func (a *AS) limitedJSON(name string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		if ok, status := a.allow(r.Context(), w, r, name); !ok {
			w.Header().Set("Cache-Control", "no-store")
			writeJSON(w, status, map[string]string{"error": "invalid_request", "error_description": limitMessage(status)})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func limitMessage(status int) string {
	if status == http.StatusTooManyRequests {
		return "too many requests from this address; retry later"
	}
	return "temporarily unavailable; retry later"
}

// limitPage refuses a browser request over the named limit with the error page; it reports
// whether the request may go on.
func (a *AS) limitPage(w http.ResponseWriter, r *http.Request, name string) bool {
	ok, status := a.allow(r.Context(), w, r, name)
	if ok {
		return true
	}
	if status == http.StatusTooManyRequests {
		a.errorPage(w, status, "Tentativas demais a partir deste endereço. Aguarde um pouco.", "Too many attempts from this address. Wait a little.")
	} else {
		a.errorPage(w, status, "Serviço temporariamente indisponível. Tente de novo em instantes.", "Temporarily unavailable. Try again in a moment.")
	}
	return false
}
