package store

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/neemias/neemias-mcp/internal/errs"
)

// unavailable reports whether err says the database cannot be reached or dropped the
// connection (restart, failover, a pooler without servers), or is a standby refusing a write
// (a proxy that still routes to a demoted primary or a node whose promotion is not done),
// rather than refusing the statement: such a request may be retried once the database is back.
func unavailable(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch {
		case strings.HasPrefix(pg.Code, "08"): // connection exception
			return true
		case pg.Code == "57P01", pg.Code == "57P02", pg.Code == "57P03": // admin/crash shutdown, cannot connect now
			return true
		case pg.Code == "53300": // too many connections
			return true
		case pg.Code == "25006": // read-only transaction: a standby (a failover or switchover under way)
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		strings.Contains(err.Error(), "conn closed") || strings.Contains(err.Error(), "closed pool")
}

// asUnavailable wraps err as errs.ErrUnavailable.
func asUnavailable(err error) error {
	return fmt.Errorf("%w: %w", errs.ErrUnavailable, err)
}
