package tokens

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestCheckCache: passes are remembered for the TTL, refusals never; Forget drops a grant's or
// a user's tokens; a check that was running when Forget came is not remembered; nil (TTL 0)
// checks every time.
func TestCheckCache(t *testing.T) {
	ctx := context.Background()
	refuse := errors.New("revoked")
	for _, tc := range []struct {
		name string
		ttl  time.Duration
		// between runs between the first and second check of token "a" (grant g1, user u1).
		between func(c *CheckCache)
		// verdict of the check function (nil: pass).
		verdict error
		want    int // calls of the check function for the two checks
	}{
		{name: "off", ttl: 0, want: 2},
		{name: "remembered", ttl: time.Minute, want: 1},
		{name: "refusal not remembered", ttl: time.Minute, verdict: refuse, want: 2},
		{name: "expired", ttl: 20 * time.Millisecond, between: func(*CheckCache) { time.Sleep(40 * time.Millisecond) }, want: 2},
		{name: "grant forgotten", ttl: time.Minute, between: func(c *CheckCache) { c.Forget("g1", "") }, want: 2},
		{name: "user forgotten", ttl: time.Minute, between: func(c *CheckCache) { c.Forget("", "u1") }, want: 2},
		{name: "another grant forgotten", ttl: time.Minute, between: func(c *CheckCache) { c.Forget("g2", "u2") }, want: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCheckCache(0, tc.ttl)
			calls := 0
			check := func(context.Context, *Claims) error { calls++; return tc.verdict }
			claims := &Claims{GrantID: "g1"}
			claims.Subject = "u1"
			k := tokenKey("a")
			for i := range 2 {
				if err := c.check(ctx, k, claims, check); !errors.Is(err, tc.verdict) {
					t.Fatalf("check %d: %v, want %v", i, err, tc.verdict)
				}
				if i == 0 && tc.between != nil {
					tc.between(c)
				}
			}
			if calls != tc.want {
				t.Errorf("%d lookups, want %d", calls, tc.want)
			}
		})
	}

	t.Run("racing a revocation", func(t *testing.T) {
		c := NewCheckCache(0, time.Minute)
		claims := &Claims{GrantID: "g1"}
		k := tokenKey("a")
		// The lookup read the grant before the revocation committed; Forget came meanwhile.
		_ = c.check(ctx, k, claims, func(context.Context, *Claims) error { c.Forget("g1", ""); return nil })
		if c.Len() != 0 {
			t.Fatalf("a pass that raced Forget was remembered")
		}
	})

	t.Run("bounded", func(t *testing.T) {
		c := NewCheckCache(3, time.Minute)
		for _, tok := range []string{"a", "b", "c", "d", "e"} {
			_ = c.check(ctx, tokenKey(tok), &Claims{}, func(context.Context, *Claims) error { return nil })
		}
		if c.Len() != 3 {
			t.Fatalf("%d entries, want 3", c.Len())
		}
	})
}
