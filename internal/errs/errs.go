// Package errs holds the domain errors that hand-written capability logic returns. Generated
// glue and the protocol runtime map them to MCP results and HTTP statuses in one place; their
// messages are written for the agent and must never contain personal data.
package errs

import (
	"errors"
	"fmt"
	"slices"
)

var (
	// ErrNotFound: the record does not exist or the caller may not see it. The two cases are
	// deliberately indistinguishable (no existence leak).
	ErrNotFound = errors.New("not found")
	// ErrNotImplemented: a scaffolded stub that nobody has filled in yet.
	ErrNotImplemented = errors.New("not implemented")
	// ErrUnauthenticated: no verified caller on the context.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrUnavailable: the database could not be reached or dropped the connection (a restart,
	// a failover). Retryable: the transports answer "retry shortly", never an internal error.
	ErrUnavailable = errors.New("temporarily unavailable")
)

// Invalid is a bad input the caller can fix: which field, and why. Reason must not quote the
// value when the field may hold personal data.
type Invalid struct {
	Field  string
	Reason string
	// Detail is for the caller only (the candidates an ambiguous name matched, as the caller
	// may see them): transports append it to the message, Error() leaves it out, so a log line
	// never carries it. Use [Shown] to render what the caller reads.
	Detail string
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
	// Granted are the scopes the caller's token holds: a step-up challenge asks for them plus
	// Scope, so a client that re-authorizes with exactly the challenge loses none.
	Granted []string
	// Unreachable: the caller's role can never hold Scope, so no step-up can help; transports
	// answer as if the capability did not exist (it is not listed either).
	Unreachable bool
}

// StepUpScopes are the scopes a step-up should request: Granted and Scope, sorted, once each.
func (e *Forbidden) StepUpScopes() []string {
	out := append([]string(nil), e.Granted...)
	if !slices.Contains(out, e.Scope) {
		out = append(out, e.Scope)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (e *Forbidden) Error() string {
	return fmt.Sprintf("capability %q requires scope %q", e.Capability, e.Scope)
}

// Conflict: the request cannot be applied in the current state (for example a check-out of a
// check-in that is locked after too many wrong pick-up codes). Reason is agent-facing.
type Conflict struct {
	Reason string
	// Detail is for the caller only (a restriction's note), as in [Invalid]: never in Error().
	Detail string
}

func (e *Conflict) Error() string { return "conflict: " + e.Reason }

// Shown is what the caller reads of a reason and its detail: the reason, then the detail after
// ": " when there is one. Transports build their messages with it; logs use Error().
func Shown(reason, detail string) string {
	if detail == "" {
		return reason
	}
	return reason + ": " + detail
}

// AsInvalid returns the *Invalid in err's chain, if any.
func AsInvalid(err error) (*Invalid, bool) {
	var v *Invalid
	ok := errors.As(err, &v)
	return v, ok
}

// ErrUnknownCapability: the capability named does not exist (or its scope is unknown, which
// fails closed the same way). Transports answer it as "not found", never as "forbidden".
var ErrUnknownCapability = errors.New("unknown capability")

// Kind is the class of an error as every transport sees it. The pipeline and the transports map
// errors by kind only ([KindOf]), each with one small table, so MCP and REST can never disagree
// about what an error is.
type Kind int

// The kinds, in the order [KindOf] tests them.
const (
	// KindInternal: anything not a domain error. Answered with a correlation id, never described.
	KindInternal Kind = iota
	// KindInvalid: bad input the caller can fix (*Invalid).
	KindInvalid
	// KindNotFound: the record does not exist or is hidden; also an unknown capability.
	KindNotFound
	// KindUnauthenticated: no verified caller.
	KindUnauthenticated
	// KindForbidden: authenticated, but a scope is missing (*Forbidden).
	KindForbidden
	// KindConflict: the state does not allow it (*Conflict).
	KindConflict
	// KindNotImplemented: a scaffolded stub nobody filled in.
	KindNotImplemented
	// KindUnavailable: the database is unreachable for now (ErrUnavailable); retryable.
	KindUnavailable
)

// Kinds lists every kind, for tests that check a transport maps them all.
func Kinds() []Kind {
	return []Kind{KindInternal, KindInvalid, KindNotFound, KindUnauthenticated, KindForbidden, KindConflict, KindNotImplemented, KindUnavailable}
}

var kindNames = [...]string{"internal", "invalid", "not_found", "unauthenticated", "forbidden", "conflict", "not_implemented", "unavailable"}

// String is the kind's stable snake_case name (logs, audit reasons, REST error codes).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "internal"
}

// KindOf classifies err. It is the one error classifier of the server; nil is KindInternal's
// caller's business (do not call it with nil).
func KindOf(err error) Kind {
	var (
		invalid   *Invalid
		forbidden *Forbidden
		conflict  *Conflict
	)
	switch {
	case errors.As(err, &invalid):
		return KindInvalid
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrUnknownCapability):
		return KindNotFound
	case errors.Is(err, ErrUnauthenticated):
		return KindUnauthenticated
	case errors.As(err, &forbidden):
		return KindForbidden
	case errors.As(err, &conflict):
		return KindConflict
	case errors.Is(err, ErrNotImplemented):
		return KindNotImplemented
	case errors.Is(err, ErrUnavailable):
		return KindUnavailable
	}
	return KindInternal
}
