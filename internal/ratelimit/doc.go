// Package ratelimit is the rate limiting of the edge (/mcp and REST per user; /authorize,
// /token, /register and /login per client address) over a pluggable store: [Postgres] shares
// the limits across replicas (what `serve` uses: a client spread over three replicas gets the
// limit once, not three times), [Memory] keeps them in one process (tests and benchmarks
// only). The logic's limits (wrong pick-up codes, searches by name) use the same rate_limits
// table from inside their calls' transactions (migration 00102, internal/logic); the table of
// every limit, its key and its budget is docs/scale-out.md.
//
// Both implement the same token bucket, as GCRA (the generic cell rate algorithm): a key's
// state is one time, its theoretical arrival time (TAT); a request is allowed when the TAT,
// advanced by one emission interval, stays within the burst tolerance of now.
//
// Hand-written (nothing here is generated). The table is migration 00009_rate_limits.sql.
package ratelimit
