// Package ratelimit is the rate limiting of every surface (/mcp and REST per caller; /authorize,
// /token, /register and /login per client address; wrong pick-up codes per user) over a
// pluggable store: [Postgres] shares the limits across replicas (the default of `serve`: a
// client spread over three replicas gets the limit once, not three times), [Memory] keeps them
// in one process (tests, a single replica).
//
// Both implement the same token bucket, as GCRA (the generic cell rate algorithm): a key's
// state is one time, its theoretical arrival time (TAT); a request is allowed when the TAT,
// advanced by one emission interval, stays within the burst tolerance of now.
//
// Hand-written (nothing here is generated). The table is migration 00009_rate_limits.sql.
package ratelimit
