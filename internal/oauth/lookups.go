package oauth

import (
	"context"
	"fmt"
	"net/http"

	"github.com/neemias/neemias-mcp/internal/httpx"
	"github.com/neemias/neemias-mcp/internal/ratelimit"
)

// The login and consent pages look up the authorization request their id names before the
// browser is known to be the one that started it (its binding cookie is compared with the
// stored hash). A browser without the cookie costs nothing; ids and cookies that turn out
// wrong are counted per client address with the edge's limit of unauthenticated lookups
// (httpx.LookupLimit: the same buckets as REST's wrong API keys), and an address that has spent
// its budget is refused with 429 before the lookup.

// lookupsSpent is pendingRequest's refusal of an address over its budget.
type lookupsSpent struct{ d ratelimit.Decision }

func (e *lookupsSpent) Error() string {
	return fmt.Sprintf("too many wrong authorization request lookups from this address; retry after %d s", e.d.RetryAfterSeconds())
}

func (a *AS) lookups() *httpx.LookupLimit { return &httpx.LookupLimit{Store: a.limits} }

// lookupAllowed is nil when the request's address may have a request looked up; a
// *lookupsSpent when it may not; the store's failure otherwise (answered 503).
func (a *AS) lookupAllowed(ctx context.Context, r *http.Request) error {
	d, err := a.lookups().Allow(ctx, r)
	if err != nil {
		return err
	}
	if !d.Allowed {
		return &lookupsSpent{d: d}
	}
	return nil
}

// lookupFailed counts one wrong lookup of the request's address.
func (a *AS) lookupFailed(ctx context.Context, r *http.Request) {
	if err := a.lookups().Failed(ctx, r); err != nil {
		a.log.WarnContext(ctx, "rate limiter unavailable", "endpoint", "authorization request", "error", err)
	}
}
