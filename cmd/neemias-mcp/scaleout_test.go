package main

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/neemias/neemias-mcp/internal/oauth/oauthtest"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// TestScaleOut: three `serve` processes on one database behind a round-robin proxy, directly
// and with PgBouncer in transaction pooling mode between them and PostgreSQL: the OAuth flow
// with every step load-balanced, MCP calls across the three, 50 concurrent duplicate check-ins
// that leave one row, and one per-caller rate limit for the three (the buckets are rows).
func TestScaleOut(t *testing.T) {
	for _, via := range []string{"direct", "pgbouncer"} {
		t.Run(via, func(t *testing.T) {
			dbURL := storetest.NewDatabase(t)
			pool := storetest.Pool(t, dbURL)
			if _, err := seed.Run(t.Context(), pool, seed.Options{ChildrenPerChurch: 20, Months: 0}); err != nil {
				t.Fatal(err)
			}
			serveURL := dbURL
			if via == "pgbouncer" {
				serveURL = pgBouncer(t, dbURL)
			}
			const burst = 70
			c := startCluster(t, serveURL, 3, "--rate-limit", "0.01", "--rate-burst", "70", "--drain", "0s")
			base := c.proxy.URL
			client, tok := grantThrough(t, base, seed.DemoAdminEmail, "roster:read checkins:write")
			ref := oauthtest.Refresh(t, base, client, tok.RefreshToken, nil)
			if ref.Status != http.StatusOK {
				t.Fatalf("refresh: %+v", ref)
			}
			used := 0
			for range 6 { // two rounds over the three replicas
				if status, _, body := oauthtest.ReadRoster(t, base, ref.AccessToken); status != http.StatusOK || !strings.Contains(body, "total_children") {
					t.Fatalf("roster: %d %s", status, oauthtest.Snippet(body))
				}
				used++
			}

			kids := demoChildren(t, pool, 2)
			since := time.Now().Add(-time.Second)
			results := make([]rpcResult, 50)
			var wg sync.WaitGroup
			for i := range results {
				wg.Go(func() { results[i] = checkin(base, tok.AccessToken, kids[0]) })
			}
			wg.Wait()
			used += len(results)
			ids := map[string]int{}
			for i, r := range results {
				if !r.ok() {
					t.Fatalf("check-in %d: %d %v %s", i, r.Status, r.Err, oauthtest.Snippet(r.Text))
				}
				ids[r.CheckinID]++
			}
			var rows int
			if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM checkins WHERE child_id = $1 AND checked_in_at > $2`, kids[0], since).Scan(&rows); err != nil {
				t.Fatal(err)
			}
			if rows != 1 || len(ids) != 1 {
				t.Errorf("50 duplicate check-ins: %d rows, %d distinct ids; want 1 and 1", rows, len(ids))
			}

			// What is left of the caller's burst, over the three: exactly burst-used allowed.
			more := make([]rpcResult, 30)
			for i := range more {
				wg.Go(func() { more[i] = checkin(base, ref.AccessToken, kids[1]) })
			}
			wg.Wait()
			allowed, limited := 0, 0
			for _, r := range more {
				switch {
				case r.ok():
					allowed++
				case r.Status == http.StatusTooManyRequests && r.RetryAfter != "":
					limited++
				default:
					t.Errorf("over the limit: %d %v %s", r.Status, r.Err, oauthtest.Snippet(r.Text))
				}
			}
			if allowed != burst-used || limited != len(more)-(burst-used) {
				t.Errorf("%d allowed and %d limited of %d; want %d and %d (one burst of %d for the three replicas)",
					allowed, limited, len(more), burst-used, len(more)-(burst-used), burst)
			}
			if n := c.proxy.Failed.Load(); n != 0 {
				t.Errorf("the proxy failed %d requests", n)
			}
		})
	}
}

// load runs workers that check children in through base, one child each time, until stop is
// closed or the children run out; it returns every result with its start time.
type timed struct {
	rpcResult
	child uuid.UUID
	start time.Time
}

func load(base, token string, kids []uuid.UUID, workers int, pause time.Duration, stop <-chan struct{}) func() []timed {
	var (
		mu   sync.Mutex
		out  []timed
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := next.Add(1) - 1
				if int(i) >= len(kids) {
					return
				}
				start := time.Now()
				r := checkin(base, token, kids[i])
				mu.Lock()
				out = append(out, timed{rpcResult: r, child: kids[i], start: start})
				mu.Unlock()
				time.Sleep(pause)
			}
		})
	}
	return func() []timed { wg.Wait(); return out }
}

// checkSucceededOnce: every check-in a client saw succeed is in the database exactly once.
func checkSucceededOnce(t *testing.T, pool *pgxpool.Pool, results []timed) int {
	t.Helper()
	var ids []uuid.UUID
	for _, r := range results {
		if r.ok() {
			id, err := uuid.Parse(r.CheckinID)
			if err != nil {
				t.Fatalf("check-in id %q", r.CheckinID)
			}
			ids = append(ids, id)
		}
	}
	var found, dup int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM checkins WHERE id = ANY($1)`, ids).Scan(&found); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(context.Background(), `SELECT count(*) - count(DISTINCT (child_id, service_date)) FROM checkins`).Scan(&dup); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
	if found != len(ids) || len(slices.Compact(ids)) != len(ids) || dup != 0 {
		t.Errorf("%d check-ins seen to succeed, %d of them in the database, %d duplicate rows", len(ids), found, dup)
	}
	return len(ids)
}

// TestDatabaseRestartUnderLoad: three replicas on a private cluster the test stops (fast
// mode) and starts again under load. While it is down every request fails fast with a
// retryable error (503 or 429 with Retry-After, well within a second); within 2 s of its
// return they succeed again; every check-in a client saw succeed is in the database once.
func TestDatabaseRestartUnderLoad(t *testing.T) {
	pg := newPrivateCluster(t)
	ctx := t.Context()
	admin, err := pgx.Connect(ctx, pg.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE neemias"); err != nil {
		t.Fatal(err)
	}
	admin.Close(ctx)
	dbURL := pg.URL("neemias")
	if _, err := store.Migrate(ctx, dbURL); err != nil {
		t.Fatal(err)
	}
	pool := storetest.Pool(t, dbURL)
	if _, err := seed.Run(ctx, pool, seed.Options{ChildrenPerChurch: 1500, Months: 0}); err != nil {
		t.Fatal(err)
	}
	kids := demoChildren(t, pool, 1500)
	pool.Close()

	c := startCluster(t, dbURL, 3, "--rate-limit", "1000", "--rate-burst", "1000", "--drain", "0s")
	_, tok := grantThrough(t, c.proxy.URL, seed.DemoAdminEmail, "checkins:write")
	stop := make(chan struct{})
	wait := load(c.proxy.URL, tok.AccessToken, kids, 4, 20*time.Millisecond, stop)

	time.Sleep(1500 * time.Millisecond)
	stopping := time.Now()
	pg.stop(t)
	down := time.Now()
	time.Sleep(2 * time.Second)
	starting := time.Now()
	pg.start(t)
	up := time.Now()
	time.Sleep(3 * time.Second)
	close(stop)
	results := wait()
	t.Logf("stop took %s, start %s; %d requests", down.Sub(stopping).Round(time.Millisecond), up.Sub(starting).Round(time.Millisecond), len(results))

	var during, slow, after, recovered, cutOK, cutRetryable, cutOther int
	var lastFailure, firstOK time.Time
	var slowest time.Duration
	for _, r := range results {
		end := r.start.Add(r.Elapsed)
		switch {
		case r.start.After(down) && end.Before(starting):
			during++
			if !r.retryable() {
				t.Errorf("during the outage: %d Retry-After=%q %v %s", r.Status, r.RetryAfter, r.Err, oauthtest.Snippet(r.Text))
			}
			if r.Elapsed > time.Second {
				slow++
			}
			slowest = max(slowest, r.Elapsed)
		case r.start.After(up):
			after++
			if !r.ok() && r.start.After(lastFailure) {
				lastFailure = r.start
			}
			if r.ok() {
				recovered++
				if firstOK.IsZero() || end.Before(firstOK) {
					firstOK = end
				}
			}
		case r.start.Before(down) && end.After(stopping): // in flight when the database stopped
			switch {
			case r.ok():
				cutOK++
			case r.retryable():
				cutRetryable++
			default:
				cutOther++
				t.Errorf("in flight at the stop: neither done nor retryable: %d %v %s", r.Status, r.Err, oauthtest.Snippet(r.Text))
			}
		}
		if r.Elapsed > 5*time.Second {
			t.Errorf("a request took %s", r.Elapsed)
		}
	}
	if during == 0 || after == 0 {
		t.Fatalf("%d requests during the outage, %d after it: the load did not cover both", during, after)
	}
	if slow > 0 {
		t.Errorf("%d of %d requests during the outage took more than 1 s", slow, during)
	}
	recovery := time.Duration(0)
	if !lastFailure.IsZero() {
		recovery = lastFailure.Sub(up)
	}
	t.Logf("outage: %d requests, all retryable, the slowest in %s; in flight at the stop: %d ok, %d retryable, %d other; after: %d requests, %d ok, the first done %s after the database returned, the last failure %s after",
		during, slowest.Round(time.Millisecond), cutOK, cutRetryable, cutOther, after, recovered, firstOK.Sub(up).Round(time.Millisecond), recovery.Round(time.Millisecond))
	if recovery > 2*time.Second {
		t.Errorf("requests still failed %s after the database returned", recovery)
	}
	pool = storetest.Pool(t, dbURL)
	t.Logf("%d check-ins seen to succeed, each in the database once", checkSucceededOnce(t, pool, results))
}

// TestSIGTERMUnderLoad: a replica that gets SIGTERM under load answers /readyz with 503 at
// once, still serves what reaches it during the drain period, finishes what is in flight and
// exits cleanly; the proxy, following readiness, loses no request.
func TestSIGTERMUnderLoad(t *testing.T) {
	dbURL := storetest.NewDatabase(t)
	pool := storetest.Pool(t, dbURL)
	if _, err := seed.Run(t.Context(), pool, seed.Options{ChildrenPerChurch: 1500, Months: 0}); err != nil {
		t.Fatal(err)
	}
	kids := demoChildren(t, pool, 1500)
	c := startCluster(t, dbURL, 3, "--rate-limit", "1000", "--rate-burst", "1000", "--drain", "1500ms")
	_, tok := grantThrough(t, c.proxy.URL, seed.DemoAdminEmail, "checkins:write")
	stop := make(chan struct{})
	wait := load(c.proxy.URL, tok.AccessToken, kids[:1400], 4, 10*time.Millisecond, stop)

	time.Sleep(time.Second)
	victim := c.replicas[1]
	victim.signal(syscall.SIGTERM)
	flipped := time.Now()
	for {
		resp, err := http.Get(victim.base() + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable {
				break
			}
		}
		if time.Since(flipped) > time.Second {
			t.Fatalf("/readyz did not turn 503 within 1 s of SIGTERM (%v)", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("/readyz 503 %s after SIGTERM", time.Since(flipped).Round(time.Millisecond))
	// Requests that still reach the draining replica (within the first half of its 1.5 s
	// drain) are served.
	var direct []timed
	for _, k := range kids[1400:1410] {
		if time.Since(flipped) > 750*time.Millisecond && len(direct) > 0 {
			break
		}
		start := time.Now()
		direct = append(direct, timed{rpcResult: checkin(victim.base(), tok.AccessToken, k), child: k, start: start})
	}
	select {
	case <-victim.done:
		if victim.err != nil {
			t.Errorf("the replica exited with %v", victim.err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the replica did not exit within 15 s of SIGTERM")
	}
	exited := time.Since(flipped)
	time.Sleep(time.Second)
	close(stop)
	results := append(wait(), direct...)
	bad := 0
	for _, r := range results {
		if !r.ok() {
			bad++
			if bad <= 5 {
				t.Errorf("lost request: %d %v %s", r.Status, r.Err, oauthtest.Snippet(r.Text))
			}
		}
	}
	if !strings.Contains(victim.out.String(), "every request finished") {
		t.Errorf("the replica did not report a clean shutdown:\n%s", lastLines(victim.out.String(), 10))
	}
	t.Logf("%d requests, %d failed; the replica exited %s after SIGTERM", len(results), bad, exited.Round(time.Millisecond))
	checkSucceededOnce(t, pool, results)
	_ = url.Values{}
}
