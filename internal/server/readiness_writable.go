package server

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

// notWritable is "" when the database the pool reaches accepts writes, otherwise the reason
// /readyz reports. Every call writes (its audit row, its rate-limit bucket), so a server that
// reaches only a standby cannot serve: during a failover or switchover a proxy may route to
// a node that is still in recovery (HAProxy follows Patroni's /primary, which answers 200 as
// soon as the promotion starts), and a demoted primary answers every read. Readiness says so,
// and the balancer keeps traffic off this replica until a primary answers (docs/scale-out.md).
func notWritable(ctx context.Context, pool *pgxpool.Pool) string {
	var readOnly string
	if err := pool.QueryRow(ctx, `SELECT current_setting('transaction_read_only')`).Scan(&readOnly); err != nil {
		return "unavailable"
	}
	if readOnly == "on" {
		return "read-only: a standby, or default_transaction_read_only; the server needs the primary"
	}
	return ""
}
