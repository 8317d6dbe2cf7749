package httpx

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/neemias/neemias-mcp/internal/principal"
)

// RateLimiter limits requests per authenticated caller (church, user and OAuth client), so one
// agent in a loop cannot saturate the database for everyone (MCP: servers MUST rate limit tool
// invocations). Over the limit: 429 with Retry-After and a JSON-RPC error body. It runs after
// authentication; unauthenticated requests never reach it.
//
// Each replica limits on its own: with N replicas a caller gets at most N times the rate, which
// is the usual trade for having no shared state.
type RateLimiter struct {
	// PerSecond is the sustained rate; Burst the bucket size.
	PerSecond float64
	Burst     int
	// MaxKeys bounds memory: when reached, idle buckets are dropped (default 10 000).
	MaxKeys int

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
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
		res := l.reserve(p.ChurchID.String()+"/"+p.UserID.String()+"/"+p.ClientID, time.Now())
		if !res.OK() || res.Delay() > 0 {
			delay := time.Duration(math.MaxInt64)
			if res.OK() {
				delay = res.Delay()
				res.Cancel() // we refuse the request, so give the token back
			}
			secs := int(math.Ceil(delay.Seconds()))
			if secs < 1 || delay == time.Duration(math.MaxInt64) {
				secs = 1
			}
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			msg := fmt.Sprintf("rate limit exceeded; retry after %d s", secs)
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

func (l *RateLimiter) reserve(key string, now time.Time) *rate.Reservation {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buckets == nil {
		l.buckets = map[string]*bucket{}
	}
	b, ok := l.buckets[key]
	if !ok {
		max := l.MaxKeys
		if max <= 0 {
			max = 10_000
		}
		if len(l.buckets) >= max {
			l.evict(now)
		}
		b = &bucket{lim: rate.NewLimiter(rate.Limit(l.PerSecond), l.Burst)}
		l.buckets[key] = b
	}
	b.seen = now
	return b.lim.ReserveN(now, 1)
}

// evict drops buckets idle long enough to have refilled; if none, the oldest half.
func (l *RateLimiter) evict(now time.Time) {
	refill := time.Duration(float64(l.Burst) / math.Max(l.PerSecond, 1e-9) * float64(time.Second))
	for k, b := range l.buckets {
		if now.Sub(b.seen) > refill {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) < l.MaxKeys/2 || l.MaxKeys == 0 {
		return
	}
	var cutoff time.Time
	for _, b := range l.buckets {
		if cutoff.IsZero() || b.seen.Before(cutoff) {
			cutoff = b.seen
		}
	}
	for k, b := range l.buckets {
		if !b.seen.After(cutoff) {
			delete(l.buckets, k)
		}
	}
}
