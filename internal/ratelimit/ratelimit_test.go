package ratelimit_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neemias/neemias-mcp/internal/ratelimit"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// stores are the implementations under the same tests.
func stores(t testing.TB) map[string]ratelimit.Store {
	return map[string]ratelimit.Store{
		"memory":   &ratelimit.Memory{},
		"postgres": &ratelimit.Postgres{Pool: storetest.New(t).Pool()},
	}
}

func TestBurstThenRefusedWithRetryAfter(t *testing.T) {
	t.Parallel()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			l := ratelimit.Limit{PerSecond: 0.5, Burst: 3} // one every 2 s
			for i := range 3 {
				if d, err := s.Take(ctx, "k", l); err != nil || !d.Allowed {
					t.Fatalf("request %d: %+v %v", i, d, err)
				}
			}
			d, err := s.Take(ctx, "k", l)
			if err != nil || d.Allowed {
				t.Fatalf("4th request: %+v %v", d, err)
			}
			if d.RetryAfter <= 0 || d.RetryAfter > 2*time.Second || d.RetryAfterSeconds() != 2 {
				t.Errorf("retry after %s (%d s), want about 2 s", d.RetryAfter, d.RetryAfterSeconds())
			}
			if p, err := s.Peek(ctx, "k", l); err != nil || p.Allowed {
				t.Errorf("peek over the limit: %+v %v", p, err)
			}
			if p, err := s.Peek(ctx, "other", l); err != nil || !p.Allowed {
				t.Errorf("peek of a new key: %+v %v", p, err)
			}
			if d, err := s.Take(ctx, "other", l); err != nil || !d.Allowed {
				t.Errorf("another key has its own bucket: %+v %v", d, err)
			}
		})
	}
}

func TestRefillsAtTheRate(t *testing.T) {
	t.Parallel()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			l := ratelimit.Limit{PerSecond: 20, Burst: 1}
			if d, _ := s.Take(ctx, "k", l); !d.Allowed {
				t.Fatal("first request refused")
			}
			if d, _ := s.Take(ctx, "k", l); d.Allowed {
				t.Fatal("second request at once allowed")
			}
			time.Sleep(60 * time.Millisecond)
			if d, err := s.Take(ctx, "k", l); err != nil || !d.Allowed {
				t.Fatalf("after one interval: %+v %v", d, err)
			}
		})
	}
}

// TestConcurrentTakesAreCountedOnce: 200 concurrent requests on one key of burst 50 (no
// refill within the test) are allowed exactly 50 times, as three replicas would see it.
func TestConcurrentTakesAreCountedOnce(t *testing.T) {
	t.Parallel()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			l := ratelimit.Limit{PerSecond: 0.001, Burst: 50}
			var allowed atomic.Int64
			var wg sync.WaitGroup
			for range 200 {
				wg.Go(func() {
					d, err := s.Take(t.Context(), "shared", l)
					if err != nil {
						t.Error(err)
					}
					if d.Allowed {
						allowed.Add(1)
					}
				})
			}
			wg.Wait()
			if n := allowed.Load(); n != 50 {
				t.Errorf("%d allowed, want 50", n)
			}
		})
	}
}

func TestLongKeys(t *testing.T) {
	t.Parallel()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			l := ratelimit.Limit{PerSecond: 0.001, Burst: 1}
			long := "api:church/user/https://client.example/" + strings.Repeat("x", 2000)
			if d, err := s.Take(t.Context(), long, l); err != nil || !d.Allowed {
				t.Fatalf("first: %+v %v", d, err)
			}
			if d, err := s.Take(t.Context(), long, l); err != nil || d.Allowed {
				t.Fatalf("second: %+v %v", d, err)
			}
			if d, err := s.Take(t.Context(), long+"y", l); err != nil || !d.Allowed {
				t.Fatalf("another long key: %+v %v", d, err)
			}
		})
	}
}

func TestPostgresCleanupDeletesFullBuckets(t *testing.T) {
	t.Parallel()
	pg := &ratelimit.Postgres{Pool: storetest.New(t).Pool()}
	ctx := t.Context()
	fast := ratelimit.Limit{PerSecond: 100, Burst: 1}
	slow := ratelimit.Limit{PerSecond: 0.001, Burst: 1}
	for i := range 5 {
		if _, err := pg.Take(ctx, fmt.Sprint("fast", i), fast); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pg.Take(ctx, "slow", slow); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond)
	n, err := pg.Cleanup(ctx)
	if err != nil || n != 5 {
		t.Fatalf("cleanup deleted %d (%v), want the 5 refilled buckets", n, err)
	}
	if d, _ := pg.Take(ctx, "slow", slow); d.Allowed {
		t.Error("the bucket still in debt was deleted")
	}
}

func TestMemoryBoundsKeys(t *testing.T) {
	m := &ratelimit.Memory{MaxKeys: 100}
	for i := range 1000 {
		_, _ = m.Take(context.Background(), fmt.Sprint(i), ratelimit.Limit{PerSecond: 0.001, Burst: 5})
	}
	if n := m.Len(); n > 100 {
		t.Errorf("%d keys kept, want at most 100", n)
	}
}

// BenchmarkTake is the limiter's cost per request: go test ./internal/ratelimit -bench Take.
// The postgres case is one round trip to the database (loopback in the tests).
func BenchmarkTake(b *testing.B) {
	for name, s := range stores(b) {
		b.Run(name, func(b *testing.B) {
			l := ratelimit.Limit{PerSecond: 1e9, Burst: 1 << 30}
			ctx := context.Background()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					i++
					if _, err := s.Take(ctx, fmt.Sprint("caller-", i%64), l); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
