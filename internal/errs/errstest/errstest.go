// Package errstest gives transports' tests one error of every kind (errs.KindOf), so each
// transport proves it maps all of them. The internal sample's text contains "SECRET", which no
// answer may repeat.
package errstest

import (
	"errors"

	"github.com/neemias/neemias-mcp/internal/errs"
)

// Sample returns an error of kind k, wrapped the way the store and the logic wrap them.
func Sample(k errs.Kind) error {
	switch k {
	case errs.KindInvalid:
		return &errs.Invalid{Field: "child_id", Reason: "must be a UUID"}
	case errs.KindNotFound:
		return errors.Join(errors.New("reading the child"), errs.ErrNotFound)
	case errs.KindUnauthenticated:
		return errs.ErrUnauthenticated
	case errs.KindForbidden:
		return &errs.Forbidden{Capability: "roster_child", Scope: "children:read"}
	case errs.KindConflict:
		return &errs.Conflict{Reason: "the check-in is locked"}
	case errs.KindNotImplemented:
		return errs.ErrNotImplemented
	case errs.KindUnavailable:
		return errors.Join(errors.New("store: acquire: dial tcp SECRET_HOST: connection refused"), errs.ErrUnavailable)
	}
	return errors.New("pgx: connection reset by peer SECRET_ROW_VALUE")
}
