package logic

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/store"
)

// who is the verified caller of a request.
type who struct{ principal.Principal }

// staff reports whether the caller is church staff (ADMIN, CADASTRO): the roles SQL's
// app_is_staff() names, who alone record or lift a pick-up restriction.
func (w who) staff() bool { return w.Role == store.RoleAdmin || w.Role == store.RoleCadastro }

// caller is the store context of the caller: row-level security and the generated queries'
// scope check (rf_has_scope, on its effective scopes) act on it.
func (w who) caller() store.Caller { return store.CallerFor(w.Principal) }

// callerOf returns the verified caller on ctx, or errs.ErrUnauthenticated when there is none or
// it is incomplete (no church, no user, unknown role): fail closed.
func callerOf(ctx context.Context) (who, error) {
	p, ok := principal.From(ctx)
	if !ok || p.ChurchID == uuid.Nil || p.UserID == uuid.Nil || !store.ValidRole(p.Role) {
		return who{}, errs.ErrUnauthenticated
	}
	return who{p}, nil
}

// call describes one capability invocation for [Service.run].
// newCall is the call of capability capID with its audit facts from the spec (the registry's
// Audit: action, whether every call is audited).
func newCall(capID string, in slog.LogValuer, targets ...uuid.UUID) call {
	c := call{capID: capID, op: "call", in: in, targets: targets}
	if cp, ok := capapi.Lookup(capID); ok {
		c.op, c.audited = cp.Audit.Action, cp.Audit.Always
	}
	return c
}

type call struct {
	capID string
	// op is the audit action of a successful call ("read", "checkin", ...); refusals append
	// the reason ("read.not_found").
	op string
	// audited: the capability touches child-level data or changes something, so every call,
	// allowed or not, is written to the audit log.
	audited bool
	// in is the decoded input, logged through its redacting LogValue.
	in slog.LogValuer
	// targets are the ids known before the call (the requested child, check-in, ...).
	targets []uuid.UUID
}

// txState is what a capability's body reports back to [Service.run] about one attempt of its
// transaction (store.InTx may run the body more than once).
type txState struct {
	// targets are the ids the audit entry names; the body appends those it learns.
	targets []uuid.UUID
	// action, when set, replaces the audit action (success: "checkin.repeat"; refusal:
	// "checkout.wrong_code").
	action string
	// outcome, when set, replaces the outcome [classify] would derive from the error.
	outcome audit.Outcome
	// commitOnError: the body's writes must stand although it fails (a wrong pick-up code
	// counts against the limit). The audit entry is then written in the same transaction.
	commitOnError bool
}

func (st *txState) add(ids ...uuid.UUID) { st.targets = append(st.targets, ids...) }

// body is a capability's work inside its transaction.
type body func(ctx context.Context, q *db.Queries, w who, st *txState) error

// run executes b for the caller of ctx in one store.InTx transaction and keeps the audit log:
//
//   - success: the entry (outcome allowed) is written in the same transaction, so an access to
//     child data never happens without its trace (a failing audit write fails the call);
//   - failure: the transaction rolls back (nothing the body wrote stands) and the entry
//     (denied or error) is written in a transaction of its own, unless the body asked for its
//     writes to be committed, in which case the entry commits with them.
func (s *Service) run(ctx context.Context, c call, b body) error {
	start := time.Now()
	w, err := callerOf(ctx)
	if err != nil {
		st := &txState{targets: c.targets}
		if c.audited && s.Store != nil {
			s.record(ctx, store.Anonymous, "", c, st, err)
		}
		s.logCall(ctx, c, nil, st, err, start)
		return err
	}
	if s.Store == nil {
		return errNoStore
	}
	var (
		last      txState
		bodyErr   error // the body's own error, on the last attempt
		auditedIn error // the body's error whose audit entry committed with its writes
	)
	err = s.Store.InTx(ctx, w.caller(), func(ctx context.Context, tx pgx.Tx) error {
		last = txState{targets: append([]uuid.UUID(nil), c.targets...)}
		auditedIn = nil
		q := db.New(tx)
		berr := b(ctx, q, w, &last)
		bodyErr = berr
		if berr == nil {
			if !c.audited {
				return nil
			}
			// Deferred: the row is sent with COMMIT, in one round trip, and still commits
			// or fails with the transaction.
			return audit.Insert(ctx, db.New(store.Deferred(tx)), w.caller(), s.entry(ctx, w, c, &last, nil))
		}
		if !last.commitOnError {
			return berr
		}
		if c.audited {
			if aerr := audit.Insert(ctx, db.New(store.Deferred(tx)), w.caller(), s.entry(ctx, w, c, &last, berr)); aerr != nil {
				return aerr
			}
		}
		auditedIn = berr
		return store.CommitWith(berr)
	})
	if err != nil && bodyErr == nil {
		// The body succeeded but the call did not (audit write, commit): what the body
		// reported about its outcome no longer holds.
		last.action, last.outcome = "", ""
	}
	if err != nil && c.audited && (auditedIn == nil || err != auditedIn) {
		s.record(ctx, w.caller(), w.ClientID, c, &last, err)
	}
	s.logCall(ctx, c, &w, &last, err, start)
	return err
}

// record writes the audit entry of a failed call in a transaction of its own. The call's own
// error is what the caller gets; a failing audit write is logged (without personal data).
func (s *Service) record(ctx context.Context, caller store.Caller, clientID string, c call, st *txState, cause error) {
	e := s.entry(ctx, who{principal.Principal{ClientID: clientID}}, c, st, cause)
	if err := audit.Record(ctx, s.Store, caller, e); err != nil {
		s.logger().LogAttrs(ctx, slog.LevelWarn, "audit entry not written",
			slog.String("capability", c.capID), slog.String("action", e.Action), slog.String("error", err.Error()))
	}
}

// describe is the audit action and outcome of a call that ended with cause (nil: success):
// derived from the error unless the body said more precisely.
func describe(c call, st *txState, cause error) (string, audit.Outcome) {
	action, outcome := classify(c.op, cause)
	if st.action != "" {
		action = st.action
	}
	if st.outcome != "" {
		outcome = st.outcome
	}
	return action, outcome
}

// entry builds the audit entry of a call that ended with cause (nil: success).
func (s *Service) entry(ctx context.Context, w who, c call, st *txState, cause error) audit.Entry {
	action, outcome := describe(c, st, cause)
	e := audit.Entry{
		Capability: c.capID,
		Action:     action,
		Targets:    st.targets,
		Outcome:    outcome,
		ClientID:   w.ClientID,
	}
	if s.CorrelationID != nil {
		e.CorrelationID = s.CorrelationID(ctx)
	}
	return e
}

// auditByKind is the audit log's table of the error kinds (errs.KindOf, the one classifier
// the transports map too): the suffix of the action and the outcome. A kind not listed (an
// internal error, an unavailable database, a stub) is "<op>.failed" with outcome error.
var auditByKind = map[errs.Kind]struct {
	suffix  string
	outcome audit.Outcome
}{
	errs.KindNotFound:        {".not_found", audit.Denied},
	errs.KindUnauthenticated: {".unauthenticated", audit.Denied},
	errs.KindForbidden:       {".forbidden", audit.Denied},
	errs.KindInvalid:         {".invalid", audit.Error},
	errs.KindConflict:        {".conflict", audit.Error},
}

// classify derives the audit action and outcome from a call's error, by its kind.
func classify(op string, err error) (string, audit.Outcome) {
	if err == nil {
		return op, audit.Allowed
	}
	if m, ok := auditByKind[errs.KindOf(err)]; ok {
		return op + m.suffix, m.outcome
	}
	return op + ".failed", audit.Error
}

// logCall writes one debug line per call: capability, redacted input, outcome, duration.
// Unexpected (internal) errors are logged at warning level; their text has been through
// store.MapError and carries no row values.
func (s *Service) logCall(ctx context.Context, c call, w *who, st *txState, err error, start time.Time) {
	action, outcome := describe(c, st, err)
	level := slog.LevelDebug
	attrs := []slog.Attr{
		slog.String("capability", c.capID),
		slog.String("outcome", string(outcome)),
		slog.String("action", action),
		slog.Duration("elapsed", time.Since(start)),
	}
	if c.in != nil {
		attrs = append(attrs, slog.Any("input", c.in))
	}
	if w != nil {
		attrs = append(attrs, slog.String("role", w.Role), slog.String("user_id", w.UserID.String()))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
		if a, _ := classify(c.op, err); strings.HasSuffix(a, ".failed") { // not a domain error
			level = slog.LevelWarn
		}
	}
	s.logger().LogAttrs(ctx, level, "capability call", attrs...)
}

// notFound turns "no row" into errs.ErrNotFound and leaves other errors alone.
func notFound(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return errs.ErrNotFound
	}
	return err
}
