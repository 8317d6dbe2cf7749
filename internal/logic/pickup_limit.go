package logic

import (
	"context"
	"fmt"

	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/ratelimit"
)

// PickupAttemptLimit bounds the wrong pick-up codes one user may enter across all check-ins:
// 10 at once, then one a minute. The lock after store.MaxPickupAttempts protects one check-in;
// this stops a caller from spreading guesses over many (each wrong code of 1 000 000 costs a
// token; a right code costs none, so volunteers releasing a whole class are never slowed).
var PickupAttemptLimit = ratelimit.Limit{PerSecond: 1.0 / 60, Burst: 10}

// WithPickupLimiter keeps the wrong pick-up codes' buckets in store (internal/server passes
// the one the replicas share). Without it nothing but the per-check-in lock applies.
func WithPickupLimiter(store ratelimit.Store) Option {
	return func(s *Service) { s.pickupLimits = store }
}

func pickupKey(w who) string {
	return "pickup:" + w.ChurchID.String() + "/" + w.UserID.String()
}

// pickupAllowed refuses a pick-up attempt when the caller has no wrong-code token left; it
// counts nothing (only wrong codes are counted, by pickupWrong).
func (s *Service) pickupAllowed(ctx context.Context) error {
	if s.pickupLimits == nil {
		return nil
	}
	w, err := callerOf(ctx)
	if err != nil {
		return nil // run refuses it, audited
	}
	d, err := s.pickupLimits.Peek(ctx, pickupKey(w), PickupAttemptLimit)
	if err != nil {
		return fmt.Errorf("logic: pick-up attempt limit: %w", err)
	}
	if !d.Allowed {
		return &errs.Conflict{Reason: fmt.Sprintf("too many wrong pick-up codes from this account; retry after %d s", d.RetryAfterSeconds())}
	}
	return nil
}

// pickupWrong counts one wrong pick-up code against the caller.
func (s *Service) pickupWrong(ctx context.Context) {
	if s.pickupLimits == nil {
		return
	}
	w, err := callerOf(ctx)
	if err != nil {
		return
	}
	if _, err := s.pickupLimits.Take(ctx, pickupKey(w), PickupAttemptLimit); err != nil {
		s.logger().WarnContext(ctx, "counting a wrong pick-up code", "error", err)
	}
}
