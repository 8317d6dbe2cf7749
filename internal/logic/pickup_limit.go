package logic

import (
	"context"
	"fmt"
	"time"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/ratelimit"
	"github.com/neemias/neemias-mcp/internal/store"
)

// PickupAttemptLimit is the wrong pick-up codes one user may enter across all check-ins: 10 at
// once, then one a minute. The lock after store.MaxPickupAttempts protects one check-in; this
// stops a caller from spreading guesses over many.
//
// How it is taken: a unit is reserved before a code is compared, in the check-out's own
// transaction (app_rate_take, migration 00102: the bucket's row stays locked until the
// transaction ends, so parallel attempts of one account cannot all see the same unit), kept
// when the code is wrong and given back when it is right, so volunteers releasing a whole class
// are never slowed.
//
// Why a spent budget never refuses a right code: anyone holding a volunteer's token could
// otherwise spend it with ten wrong codes and keep that volunteer from releasing any child.
// What it refuses is further wrong codes: a wrong code that finds the budget spent locks its
// check-in at once (instead of after 5), so past the budget a guesser gets one guess per open
// check-in, each of which then only staff can release, in person; the code of a check-in the
// guesser has not touched still releases its child.
var PickupAttemptLimit = ratelimit.Limit{PerSecond: 1.0 / 60, Burst: 10}

// FindLimit is the searches by name (neemias_child_find) one user may make: a few in a row,
// then one every few seconds, so the tool finds a child but cannot be used to list a church's
// children by trying every syllable.
var FindLimit = ratelimit.Limit{PerSecond: 1.0 / 3, Burst: 10}

// The caller buckets of migration 00102. Keyed by the caller context's church and user, never
// the OAuth client or API key: every client of one user shares them, as every replica does.
const (
	bucketPickup = "pickup"
	bucketFind   = "find"
)

// takeCallerLimit takes one unit of the caller's bucket within the transaction of q; the row
// stays locked until it ends, and a rollback gives the unit back.
func takeCallerLimit(ctx context.Context, q *db.Queries, bucket string, l ratelimit.Limit) (ratelimit.Decision, error) {
	r, err := q.TakeCallerRate(ctx, db.TakeCallerRateParams{
		Bucket: bucket, IntervalSecs: l.Interval().Seconds(), ToleranceSecs: l.Tolerance().Seconds(),
	})
	if err != nil {
		return ratelimit.Decision{}, fmt.Errorf("logic: %s limit: %w", bucket, err)
	}
	if r.Allowed {
		return ratelimit.Decision{Allowed: true}, nil
	}
	return ratelimit.Decision{RetryAfter: time.Duration(r.RetryAfterSecs * float64(time.Second))}, nil
}

// checkPickupCode compares code with the check-in's, in constant time, under the key its hash
// was made with (none: a hash of before migration 00103). A unit of the caller's wrong-code
// budget is taken before the comparison and given back when the code is right; overBudget
// reports a wrong code that found the budget spent (see PickupAttemptLimit for what follows).
func (s *Service) checkPickupCode(ctx context.Context, q *db.Queries, ck db.GetCheckinForCheckoutRow, code string) (right, overBudget bool, err error) {
	var key *store.PickupKey
	if ck.PickupKeyID != nil {
		k, err := s.pickupKeys().Get(ctx, *ck.PickupKeyID)
		if err != nil {
			return false, false, fmt.Errorf("logic: the pick-up key of check-in %s: %w", ck.ID, err)
		}
		key = &k
	}
	d, err := takeCallerLimit(ctx, q, bucketPickup, PickupAttemptLimit)
	if err != nil {
		return false, false, err
	}
	right = store.CheckPickupCode(key, ck.PickupCodeSalt, ck.PickupCodeHash, code)
	if right && d.Allowed {
		if err := q.RefundCallerRate(ctx, db.RefundCallerRateParams{
			Bucket: bucketPickup, IntervalSecs: PickupAttemptLimit.Interval().Seconds(),
		}); err != nil {
			return false, false, fmt.Errorf("logic: pick-up limit: %w", err)
		}
	}
	return right, !right && !d.Allowed, nil
}

// pickupKeys is the keyring of the pick-up codes (store.PickupKeys on the store's pool).
func (s *Service) pickupKeys() *store.PickupKeys {
	s.keysOnce.Do(func() { s.keys = &store.PickupKeys{Pool: s.Store.Pool()} })
	return s.keys
}
