package audit

import (
	"context"
	"fmt"
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/store"
)

// Outcome is the result an entry records; the values are those audit_log.outcome accepts.
type Outcome string

const (
	// Allowed: the access or change happened.
	Allowed Outcome = "allowed"
	// Denied: refused for lack of permission, including a record the caller may not see (which
	// the caller is told is not found) and a wrong pick-up code.
	Denied Outcome = "denied"
	// Error: refused for bad input or failed for an internal reason.
	Error Outcome = "error"
)

// Entry is one audit record. Caller (church and user) comes separately, from the transaction.
type Entry struct {
	// Capability is the spec id, for example "roster_child".
	Capability string
	// Action is what was attempted and, for a refusal, why: "read", "checkin.repeat",
	// "checkout.wrong_code", "read.not_found". Lower case, [a-z][a-z0-9_.:-]{0,63}.
	Action string
	// Targets are the ids of the records involved (children, check-ins, guardians, ...).
	Targets []uuid.UUID
	Outcome Outcome
	// ClientID is the OAuth client the caller acts through, if known.
	ClientID string
	// CorrelationID ties the entry to the request's log lines, if known.
	CorrelationID string
}

var actionRE = regexp.MustCompile(`^[a-z][a-z0-9_.:-]{0,63}$`)

// Column limits of audit_log; longer client and correlation ids are cut, not refused, so an
// odd client name never costs the audit entry.
const (
	maxCapability    = 100
	maxClientID      = 200
	maxCorrelationID = 100
)

// Validate reports whether e can be stored.
func (e Entry) Validate() error {
	if n := utf8.RuneCountInString(e.Capability); n < 1 || n > maxCapability {
		return fmt.Errorf("audit: capability must have 1 to %d characters", maxCapability)
	}
	if !actionRE.MatchString(e.Action) {
		return fmt.Errorf("audit: action %q is not of the form [a-z][a-z0-9_.:-]{0,63}", e.Action)
	}
	switch e.Outcome {
	case Allowed, Denied, Error:
	default:
		return fmt.Errorf("audit: unknown outcome %q", e.Outcome)
	}
	return nil
}

// Insert appends e within the transaction of q, which must act for caller (store.InTx):
// row-level security accepts only entries about the transaction's own church and user.
func Insert(ctx context.Context, q *db.Queries, caller store.Caller, e Entry) error {
	return InsertFor(ctx, q, caller.ChurchID, caller.UserID, e) // Anonymous: no church, no user
}

// recordTimeout bounds [Record] when it has to outlive a cancelled request.
const recordTimeout = 5 * time.Second

// Record appends e in a transaction of its own, acting for caller (store.Anonymous when the
// request has no verified caller). It is meant for refusals, so it is not cut short when ctx is
// cancelled (a client that gives up must not erase the trace of a denied access): it runs
// detached from ctx's cancellation, bounded by a few seconds.
func Record(ctx context.Context, st *store.Store, caller store.Caller, e Entry) error {
	if err := e.Validate(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	return st.InTx(ctx, caller, func(ctx context.Context, tx pgx.Tx) error {
		return Insert(ctx, db.New(tx), caller, e)
	})
}

func optional(s string, max int) *string {
	if s == "" {
		return nil
	}
	if utf8.RuneCountInString(s) > max {
		s = string([]rune(s)[:max])
	}
	return &s
}

// dedup drops nil and repeated ids, keeping the first occurrence's order; never nil, because
// target_ids is NOT NULL.
func dedup(ids []uuid.UUID) []uuid.UUID {
	out := make([]uuid.UUID, 0, len(ids))
	seen := make(map[uuid.UUID]struct{}, len(ids))
	for _, id := range ids {
		if _, dup := seen[id]; id == uuid.Nil || dup {
			continue
		}
		seen[id] = struct{}{}
		out = append(out, id)
	}
	return out
}

// OperatorClientID is the client_id of the entries an operator's command line writes
// ([InsertOperator]): it acts for no user, so the entry names the tool instead.
const OperatorClientID = "neemias-mcp-cli"

// InsertOperator appends e, an operator action on church (uuid.Nil: none, e.g. a refused
// church creation), within the maintenance transaction of q (store.InSystemTx, run as the
// schema owner): the entry has no user, and its client is [OperatorClientID] unless e names
// another. The application role could not write it (its policy requires the caller's own
// user), which is the point: only the owner's maintenance context acts without a user.
func InsertOperator(ctx context.Context, q *db.Queries, church uuid.UUID, e Entry) error {
	if e.ClientID == "" {
		e.ClientID = OperatorClientID
	}
	return InsertFor(ctx, q, church, uuid.Nil, e)
}

// OAuthCapability is the capability of the authorization server's entries (grants, consents,
// refreshes, reuse, revocations, login failures).
const OAuthCapability = "oauth"

// InsertFor appends e about church and user (uuid.Nil: unknown, e.g. a failed login) within
// the schema owner's transaction of q: the authorization server's events, written before any
// verified caller exists, and the operator's.
func InsertFor(ctx context.Context, q *db.Queries, church, user uuid.UUID, e Entry) error {
	if err := e.Validate(); err != nil {
		return err
	}
	p := db.InsertAuditParams{
		Capability:    e.Capability,
		Action:        e.Action,
		TargetIds:     dedup(e.Targets),
		Outcome:       string(e.Outcome),
		ClientID:      optional(e.ClientID, maxClientID),
		CorrelationID: optional(e.CorrelationID, maxCorrelationID),
	}
	if church != uuid.Nil {
		p.ChurchID = &church
	}
	if user != uuid.Nil {
		p.UserID = &user
	}
	if err := q.InsertAudit(ctx, p); err != nil {
		return fmt.Errorf("audit: insert: %w", err)
	}
	return nil
}
