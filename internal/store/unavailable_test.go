package store

import (
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/neemias/neemias-mcp/internal/errs"
)

func TestUnavailableErrorsAreRetryable(t *testing.T) {
	for _, err := range []error{
		&pgconn.PgError{Code: "57P01"}, &pgconn.PgError{Code: "57P03"}, &pgconn.PgError{Code: "08006"}, &pgconn.PgError{Code: "53300"},
		&pgconn.PgError{Code: "25006"}, // a write on a standby during a failover
		fmt.Errorf("store: acquire: %w", &net.OpError{Op: "dial", Err: errors.New("connection refused")}),
		fmt.Errorf("store: begin: %w", io.ErrUnexpectedEOF),
	} {
		if got := errs.KindOf(MapError(err)); got != errs.KindUnavailable {
			t.Errorf("%v: kind %v, want unavailable", err, got)
		}
	}
	for _, err := range []error{&pgconn.PgError{Code: "23505"}, &pgconn.PgError{Code: "42P01"}, errors.New("boom")} {
		if got := errs.KindOf(MapError(err)); got == errs.KindUnavailable {
			t.Errorf("%v: unavailable, want not", err)
		}
	}
}
