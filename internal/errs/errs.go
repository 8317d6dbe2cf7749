// Package errs holds the domain errors that hand-written capability logic returns. Generated
// glue and the protocol runtime map them to MCP results and HTTP statuses in one place; their
// messages are written for the agent and must never contain personal data.
package errs

import (
	"errors"
	"fmt"
)

var (
	// ErrNotFound: the record does not exist or the caller may not see it. The two cases are
	// deliberately indistinguishable (no existence leak).
	ErrNotFound = errors.New("not found")
	// ErrNotImplemented: a scaffolded stub that nobody has filled in yet.
	ErrNotImplemented = errors.New("not implemented")
	// ErrUnauthenticated: no verified caller on the context.
	ErrUnauthenticated = errors.New("unauthenticated")
)

// Invalid is a bad input the caller can fix: which field, and why. Reason must not quote the
// value when the field may hold personal data.
type Invalid struct {
	Field  string
	Reason string
}

func (e *Invalid) Error() string {
	if e.Field == "" {
		return "invalid input: " + e.Reason
	}
	return fmt.Sprintf("invalid input: %s: %s", e.Field, e.Reason)
}

// Invalidf builds an *Invalid with a formatted reason.
func Invalidf(field, format string, args ...any) *Invalid {
	return &Invalid{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Forbidden: the caller is authenticated but lacks Scope for the capability.
type Forbidden struct {
	Capability string
	Scope      string
}

func (e *Forbidden) Error() string {
	return fmt.Sprintf("capability %q requires scope %q", e.Capability, e.Scope)
}

// Conflict: the request cannot be applied in the current state (for example a check-out of a
// check-in that is locked after too many wrong pick-up codes). Reason is agent-facing.
type Conflict struct{ Reason string }

func (e *Conflict) Error() string { return "conflict: " + e.Reason }

// AsInvalid returns the *Invalid in err's chain, if any.
func AsInvalid(err error) (*Invalid, bool) {
	var v *Invalid
	ok := errors.As(err, &v)
	return v, ok
}
