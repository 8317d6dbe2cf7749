package server

import (
	"context"

	"github.com/neemias/neemias-mcp/internal/ratelimit"
	"github.com/neemias/neemias-mcp/internal/store"
)

// limitStore is where every rate limit of the server keeps its buckets: Config.RateStore, or
// by default the rate_limits table, shared by every replica on the database, whose expired
// rows this replica deletes every minute until ctx ends.
func (c Config) limitStore(ctx context.Context, st *store.Store) ratelimit.Store {
	if c.RateStore != nil {
		return c.RateStore
	}
	pg := &ratelimit.Postgres{Pool: st.Pool()}
	go pg.RunCleanup(ctx, 0, c.Logger)
	return pg
}
