package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Postgres is a [Store] in the rate_limits table (migration 00009), shared by every replica on
// the database. A request costs one statement, one round trip, outside any transaction: an
// upsert that advances the key's TAT only when the request is allowed, returning whether it
// was and, if not, the TAT it met. The database's clock decides, so the replicas' clocks need
// not agree.
type Postgres struct {
	Pool *pgxpool.Pool
	// Timeout bounds one statement (default 2 s): a database that hangs fails the limiter
	// rather than stalling the request.
	Timeout time.Duration
}

var _ Store = (*Postgres)(nil)

// takeSQL: $1 key, $2 emission interval and $3 burst tolerance, in seconds. The row is
// inserted (first request: always allowed) or advanced in place when the advanced TAT stays
// within the tolerance; the second column is the TAT of the statement's snapshot, read only to
// say how long a refused request must wait.
const takeSQL = `WITH up AS (
  INSERT INTO rate_limits AS r (key, tat) VALUES ($1, now() + make_interval(secs => $2))
  ON CONFLICT (key) DO UPDATE SET tat = greatest(r.tat, now()) + make_interval(secs => $2)
    WHERE greatest(r.tat, now()) + make_interval(secs => $2) <= now() + make_interval(secs => $3)
  RETURNING 1
)
SELECT EXISTS (SELECT FROM up), (SELECT extract(epoch FROM r.tat - now())::float8 FROM rate_limits r WHERE r.key = $1)`

const peekSQL = `SELECT extract(epoch FROM tat - now())::float8 FROM rate_limits WHERE key = $1`

func (p *Postgres) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	t := p.Timeout
	if t <= 0 {
		t = 2 * time.Second
	}
	return context.WithTimeout(ctx, t)
}

// Take implements [Store].
func (p *Postgres) Take(ctx context.Context, key string, l Limit) (Decision, error) {
	ctx, cancel := p.ctx(ctx)
	defer cancel()
	var (
		allowed bool
		ahead   *float64 // TAT - now, seconds
	)
	if err := p.Pool.QueryRow(ctx, takeSQL, rowKey(key), l.interval().Seconds(), l.tolerance().Seconds()).Scan(&allowed, &ahead); err != nil {
		return Decision{}, fmt.Errorf("ratelimit: %w", err)
	}
	if allowed {
		return Decision{Allowed: true}, nil
	}
	return refused(ahead, l), nil
}

// Peek implements [Store].
func (p *Postgres) Peek(ctx context.Context, key string, l Limit) (Decision, error) {
	ctx, cancel := p.ctx(ctx)
	defer cancel()
	var ahead []float64
	rows, err := p.Pool.Query(ctx, peekSQL, rowKey(key))
	if err != nil {
		return Decision{}, fmt.Errorf("ratelimit: %w", err)
	}
	for rows.Next() {
		var a float64
		if err := rows.Scan(&a); err != nil {
			rows.Close()
			return Decision{}, fmt.Errorf("ratelimit: %w", err)
		}
		ahead = append(ahead, a)
	}
	if err := rows.Err(); err != nil {
		return Decision{}, fmt.Errorf("ratelimit: %w", err)
	}
	if len(ahead) == 0 {
		return Decision{Allowed: true}, nil
	}
	now := time.Now()
	_, d := decide(now.Add(time.Duration(ahead[0]*float64(time.Second))), now, l)
	return d, nil
}

// maxKeyLen bounds rate_limits.key; longer keys (a caller whose client id is a long metadata
// document URL) are stored as their SHA-256.
const maxKeyLen = 200

func rowKey(key string) string {
	if len(key) <= maxKeyLen {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// refused is the decision for a refused request whose key's TAT was ahead of now by ahead
// seconds (nil: a concurrent first request inserted the row; wait one interval).
func refused(ahead *float64, l Limit) Decision {
	if ahead == nil {
		return Decision{RetryAfter: l.interval()}
	}
	now := time.Now()
	_, d := decide(now.Add(time.Duration(*ahead*float64(time.Second))), now, l)
	if d.Allowed { // refilled between the statement and now
		d = Decision{RetryAfter: time.Millisecond}
	}
	d.Allowed = false
	return d
}

// Cleanup deletes the rows whose bucket is full again (TAT in the past): the same as no row.
func (p *Postgres) Cleanup(ctx context.Context) (int64, error) {
	ctx, cancel := p.ctx(ctx)
	defer cancel()
	tag, err := p.Pool.Exec(ctx, `DELETE FROM rate_limits WHERE tat < now()`)
	if err != nil {
		return 0, fmt.Errorf("ratelimit: cleanup: %w", err)
	}
	return tag.RowsAffected(), nil
}

// RunCleanup runs Cleanup every interval (default a minute) until ctx ends. Every replica may
// run it; the deletes do not conflict with the upserts beyond a row lock.
func (p *Postgres) RunCleanup(ctx context.Context, every time.Duration, log *slog.Logger) {
	if every <= 0 {
		every = time.Minute
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := p.Cleanup(ctx); err != nil && ctx.Err() == nil && log != nil {
				log.Warn("rate limit clean-up failed", "err", err)
			}
		}
	}
}
