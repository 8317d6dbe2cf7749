package oauth

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// ipLimiter is a token bucket per client address, bounded in memory.
type ipLimiter struct {
	perSecond float64
	burst     int

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

const maxLimiterKeys = 10_000

func newIPLimiter(perSecond float64, burst int) *ipLimiter {
	return &ipLimiter{perSecond: perSecond, burst: burst, buckets: map[string]*rate.Limiter{}}
}

// allow takes a token for ip; when none is left it returns false and how long to wait.
func (l *ipLimiter) allow(ip string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[ip]
	if !ok {
		if len(l.buckets) >= maxLimiterKeys {
			// Drop the buckets that have refilled; their owners lose nothing.
			for k, v := range l.buckets {
				if v.TokensAt(now) >= float64(l.burst) {
					delete(l.buckets, k)
				}
			}
		}
		b = rate.NewLimiter(rate.Limit(l.perSecond), l.burst)
		l.buckets[ip] = b
	}
	res := b.ReserveN(now, 1)
	if !res.OK() {
		return false, time.Hour
	}
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return false, time.Duration(math.Ceil(d.Seconds())) * time.Second
	}
	return true, 0
}
