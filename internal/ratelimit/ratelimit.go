package ratelimit

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"
)

// Limit is a sustained rate and a burst: Burst requests at once, then PerSecond.
type Limit struct {
	PerSecond float64
	Burst     int
}

// interval is the emission interval: the time one request's token takes to come back.
func (l Limit) interval() time.Duration {
	if l.PerSecond <= 0 {
		return time.Duration(math.MaxInt64 / 4)
	}
	return time.Duration(float64(time.Second) / l.PerSecond)
}

// tolerance is how far ahead of now the TAT may run: Burst intervals.
func (l Limit) tolerance() time.Duration {
	b := l.Burst
	if b < 1 {
		b = 1
	}
	return time.Duration(b) * l.interval()
}

// Interval is the emission interval: the time one unit takes to come back.
func (l Limit) Interval() time.Duration { return l.interval() }

// Tolerance is how far ahead of now a key's TAT may run: Burst intervals.
func (l Limit) Tolerance() time.Duration { return l.tolerance() }

// Decision is the answer for one request.
type Decision struct {
	Allowed bool
	// RetryAfter is how long until one request would be allowed (when refused).
	RetryAfter time.Duration
}

// RetryAfterSeconds is RetryAfter in whole seconds, at least 1: the Retry-After header.
func (d Decision) RetryAfterSeconds() int {
	s := int(math.Ceil(d.RetryAfter.Seconds()))
	if s < 1 {
		return 1
	}
	return s
}

// SetRetryAfter sets the Retry-After header of a refusal.
func (d Decision) SetRetryAfter(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(d.RetryAfterSeconds()))
}

// Store keeps the buckets.
type Store interface {
	// Take counts one request of key against l and says whether it is allowed; a refused
	// request is not counted.
	Take(ctx context.Context, key string, l Limit) (Decision, error)
	// Peek says whether one request of key would be allowed, counting nothing.
	Peek(ctx context.Context, key string, l Limit) (Decision, error)
}

// decide is GCRA on one TAT: allowed when max(tat, now) + interval ≤ now + tolerance; the
// new TAT when allowed, else the wait.
func decide(tat, now time.Time, l Limit) (newTAT time.Time, d Decision) {
	base := tat
	if base.Before(now) {
		base = now
	}
	next := base.Add(l.interval())
	if limit := now.Add(l.tolerance()); next.After(limit) {
		return tat, Decision{RetryAfter: next.Sub(limit)}
	}
	return next, Decision{Allowed: true}
}
