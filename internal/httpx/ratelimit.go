package httpx

import (
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/ratelimit"
)

// RateLimiter limits requests per authenticated user (church and user: every OAuth client and
// API key of one user shares the budget, so a user cannot multiply it by registering clients or
// creating keys), so one agent in a loop cannot saturate the database for everyone (MCP:
// servers MUST rate limit tool invocations). Over the limit: 429 with Retry-After and a
// JSON-RPC error body. It runs after authentication; unauthenticated requests never reach it.
//
// The buckets are in Store: ratelimit.Postgres shares them across replicas (what `serve` uses),
// nil keeps them in this process (ratelimit.Memory). A store that fails (the database is
// down) refuses the request with 503 and Retry-After: fail closed, and the request could not
// have been served anyway.
type RateLimiter struct {
	// PerSecond is the sustained rate; Burst the bucket size.
	PerSecond float64
	Burst     int
	// MaxKeys bounds the memory store's keys (default 10 000); unused with Store.
	MaxKeys int
	Store   ratelimit.Store
	Logger  *slog.Logger

	once sync.Once
	mem  *ratelimit.Memory
}

// Wrap returns next behind the limiter.
func (l *RateLimiter) Wrap(next http.Handler) http.Handler { return l.WrapWith(next, nil) }

// WrapWith is Wrap with refusals written by errs (nil: a JSON-RPC error). Wrapping several
// handlers with one limiter gives a caller one budget across them (MCP and REST share one).
func (l *RateLimiter) WrapWith(next http.Handler, errs ErrorWriter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := principal.From(r.Context())
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		key := "api:" + p.ChurchID.String() + "/" + p.UserID.String()
		d, err := l.store().Take(r.Context(), key, ratelimit.Limit{PerSecond: l.PerSecond, Burst: l.Burst})
		if err != nil {
			l.logger().WarnContext(r.Context(), "rate limiter unavailable", "error", err)
			w.Header().Set("Retry-After", "1")
			const msg = "the service is temporarily unavailable; retry after 1 s"
			if errs != nil {
				errs(w, http.StatusServiceUnavailable, EdgeUnavailable, msg)
				return
			}
			WriteRPCError(w, http.StatusServiceUnavailable, nil, RPCError{Code: CodeInternalError, Message: msg})
			return
		}
		if !d.Allowed {
			d.SetRetryAfter(w)
			msg := fmt.Sprintf("rate limit exceeded; retry after %d s", d.RetryAfterSeconds())
			if errs != nil {
				errs(w, http.StatusTooManyRequests, EdgeRateLimited, msg)
				return
			}
			WriteRPCError(w, http.StatusTooManyRequests, nil, RPCError{Code: CodeInternalError, Message: msg})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (l *RateLimiter) store() ratelimit.Store {
	if l.Store != nil {
		return l.Store
	}
	l.once.Do(func() { l.mem = &ratelimit.Memory{MaxKeys: l.MaxKeys} })
	return l.mem
}

func (l *RateLimiter) logger() *slog.Logger {
	if l.Logger != nil {
		return l.Logger
	}
	return slog.Default()
}
