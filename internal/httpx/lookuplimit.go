package httpx

import (
	"context"
	"net"
	"net/http"

	"github.com/neemias/neemias-mcp/internal/ratelimit"
)

// LookupLimit bounds, per client address, the credentials that cost a database lookup before
// anyone is authenticated and turn out to be wrong: a well-formed API key with a random id
// (REST), an authorization request id no browser of ours holds (the OAuth pages). Without it,
// anyone could make the server look up as many as they can send. Only refusals are counted,
// so automation with a good key is never slowed by its neighbours behind one address; once an
// address has spent its budget, its lookups are refused (429 with Retry-After) before they
// reach the database, until the bucket refills.
//
// The buckets are the server's rate-limit store (ratelimit.Postgres in `serve`: shared by the
// replicas), under keys of their own kind ("lookup:<address>"); a store that fails refuses
// (fail closed), as every limit of the edge does. A nil *LookupLimit limits nothing.
type LookupLimit struct {
	Store ratelimit.Store
	// Limit is the budget of wrong lookups (zero: DefaultLookupLimit).
	Limit ratelimit.Limit
}

// DefaultLookupLimit: 30 wrong credentials at once, then one every two seconds, per address.
var DefaultLookupLimit = ratelimit.Limit{PerSecond: 0.5, Burst: 30}

// lookupKeyPrefix is the kind of the limit's keys in the store.
const lookupKeyPrefix = "lookup:"

func (l *LookupLimit) limit() ratelimit.Limit {
	if l.Limit.PerSecond <= 0 {
		return DefaultLookupLimit
	}
	return l.Limit
}

// Allow says whether the request's address may have a credential looked up now, counting
// nothing. err is the store's failure (refuse: 503).
func (l *LookupLimit) Allow(ctx context.Context, r *http.Request) (ratelimit.Decision, error) {
	if l == nil {
		return ratelimit.Decision{Allowed: true}, nil
	}
	return l.Store.Peek(ctx, lookupKeyPrefix+ClientAddr(r), l.limit())
}

// Failed counts one wrong credential of the request's address.
func (l *LookupLimit) Failed(ctx context.Context, r *http.Request) error {
	if l == nil {
		return nil
	}
	_, err := l.Store.Take(ctx, lookupKeyPrefix+ClientAddr(r), l.limit())
	return err
}

// ClientAddr is the key of the per-address limits: the connection's peer, without its port.
// Behind a reverse proxy every request shares the proxy's address; the limits then apply to
// all together (as the OAuth endpoints' do).
func ClientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
