package store

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/neemias/neemias-mcp/internal/errs"
)

// Error is a database error with everything that could carry personal data removed: it keeps
// the SQLSTATE code and the names of the table and constraint, never PostgreSQL's message,
// detail or hint (those quote row values: "Key (email)=(...) already exists"). It unwraps to
// the domain error of internal/errs it stands for, if any, so errors.Is(err, errs.ErrNotFound)
// and errs.AsInvalid work on it.
type Error struct {
	// Code is the SQLSTATE, for example "23505".
	Code string
	// Table and Constraint name the schema objects involved, when PostgreSQL reports them.
	Table      string
	Constraint string
	// Kind is the domain error this maps to (errs.ErrNotFound, *errs.Invalid, *errs.Conflict),
	// or nil for an internal error.
	Kind error
}

func (e *Error) Error() string {
	s := "database error (SQLSTATE " + e.Code
	if e.Constraint != "" {
		s += fmt.Sprintf(", constraint %q", e.Constraint)
	} else if e.Table != "" {
		s += fmt.Sprintf(", table %q", e.Table)
	}
	s += ")"
	if e.Kind != nil {
		s += ": " + e.Kind.Error()
	}
	return s
}

// Unwrap returns the domain error, if any.
func (e *Error) Unwrap() error { return e.Kind }

// MapError translates a database error into a domain error and strips it of anything that may
// be personal data. Errors that did not come from the database pass through unchanged, as do
// errors MapError already produced; nil stays nil.
//
//	pgx.ErrNoRows                               errs.ErrNotFound
//	42501 row-level security / privilege        errs.ErrNotFound (no existence leak)
//	23505 unique violation                      *errs.Conflict
//	23503 foreign key violation                 *errs.Invalid
//	23502, 23514, 22xxx bad values              *errs.Invalid
//	40001, 40P01 after the retries              *errs.Conflict
//	no connection, 08xxx, 57P01-3, 53300        errs.ErrUnavailable (retryable; unavailable.go)
//	anything else from PostgreSQL               *Error without Kind (an internal error)
func MapError(err error) error {
	if err == nil {
		return nil
	}
	var already *Error
	if errors.As(err, &already) {
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return errs.ErrNotFound
	}
	if unavailable(err) {
		return asUnavailable(err)
	}
	var pg *pgconn.PgError
	if !errors.As(err, &pg) {
		return err
	}
	e := &Error{Code: pg.Code, Table: pg.TableName, Constraint: pg.ConstraintName}
	switch {
	case pg.Code == "42501":
		e.Kind = errs.ErrNotFound
	case pg.Code == "23505":
		e.Kind = &errs.Conflict{Reason: "a record with the same key already exists"}
	case pg.Code == "23503":
		e.Kind = &errs.Invalid{Reason: "refers to a record that does not exist"}
	case pg.Code == "23502", pg.Code == "23514":
		e.Kind = &errs.Invalid{Reason: "a value is missing or out of range"}
	case len(pg.Code) == 5 && pg.Code[:2] == "22":
		e.Kind = &errs.Invalid{Reason: "a value has the wrong format or is out of range"}
	case pg.Code == "40001", pg.Code == "40P01":
		e.Kind = &errs.Conflict{Reason: "concurrent update; try again"}
	}
	return e
}

// IsUniqueViolation reports whether err is a unique violation, of constraint when it is not
// empty. It sees through [MapError].
func IsUniqueViolation(err error, constraint string) bool {
	return hasCode(err, "23505", constraint)
}

// IsPermissionDenied reports whether err is a privilege or row-level security refusal
// (SQLSTATE 42501). It sees through [MapError].
func IsPermissionDenied(err error) bool { return hasCode(err, "42501", "") }

func hasCode(err error, code, constraint string) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Code == code && (constraint == "" || e.Constraint == constraint)
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == code && (constraint == "" || pg.ConstraintName == constraint)
	}
	return false
}
