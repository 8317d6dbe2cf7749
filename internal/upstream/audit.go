package upstream

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/pii"
	"github.com/neemias/neemias-mcp/internal/store"
)

// Caller is who a call is made for: the church whose known values are scanned for, and the
// user and OAuth client the audit entry names.
type Caller struct {
	ChurchID uuid.UUID
	UserID   uuid.UUID
	Role     string
	// ClientID is the OAuth client the user acts through, if known.
	ClientID string
	// CorrelationID ties the audit entry to the request's log lines, if known.
	CorrelationID string
}

// Outcome of one invocation.
type Outcome string

const (
	OutcomeAllowed Outcome = "allowed" // the upstream answered and the answer was returned
	OutcomeRefused Outcome = "refused" // refused before sending, or the answer was dropped
	OutcomeFailed  Outcome = "failed"  // the upstream could not be reached or failed
)

// Reason of a refusal.
type Reason string

const (
	ReasonNotAllowlisted Reason = "not_allowlisted" // unknown upstream or tool not exposed
	ReasonNotOffered     Reason = "not_offered"     // exposed, but the upstream does not list it
	ReasonPIIDetected    Reason = "pii_detected"    // personal data in the request or response
)

// Direction of a finding.
type Direction string

const (
	DirRequest  Direction = "request"
	DirResponse Direction = "response"
)

// Event is one audited invocation. It carries detectors and JSON paths, never a value.
type Event struct {
	Time     time.Time
	Caller   Caller
	Upstream string
	Tool     string
	Outcome  Outcome
	Reason   Reason // refusals only
	// Direction and Findings say where personal data was found (refused or redacted).
	Direction Direction
	Findings  []pii.Finding
	// Redacted is true when findings were redacted and the call went on.
	Redacted bool
	Attempts int
}

// Auditor records invocations. The server implements it with internal/audit ([DBAuditor]).
// An error from Record fails the call: nothing unaudited is returned.
type Auditor interface {
	Record(ctx context.Context, e Event) error
}

// AuditorFunc adapts a function to [Auditor].
type AuditorFunc func(ctx context.Context, e Event) error

// Record calls f.
func (f AuditorFunc) Record(ctx context.Context, e Event) error { return f(ctx, e) }

// DBAuditor writes events to the audit log (internal/audit) as the caller: capability
// "upstream:<id>/<tool>" ([CapabilityName]), action "call", "call.redacted.<direction>",
// "call.not_allowlisted", "call.not_offered", "call.pii_detected.<direction>.<detector>" or
// "call.failed"; outcome allowed, denied or error. Every event is also logged with its
// findings' paths (the audit row has no column for them). The calls refused before they
// reach the client are audited by the pipeline's refusal hook under the same capability:
// "call.forbidden" (scope) and "call.invalid" (arguments not an object); docs/privacy.md
// lists every action.
type DBAuditor struct {
	Store  *store.Store
	Logger *slog.Logger
}

// CapabilityName is the audit log's capability of tool of upstream, "upstream:<id>/<tool>"
// (cut to the column's 100 characters). Every audit row of an upstream call carries it, the
// pipeline's refusals too (internal/server maps the Neemias tool name to it), so that one
// filter on capability LIKE 'upstream:%' finds every attempt.
func CapabilityName(upstream, tool string) string {
	name := "upstream:" + upstream + "/" + tool
	if r := []rune(name); len(r) > 100 {
		name = string(r[:100])
	}
	return name
}

// Entry maps e to its audit entry.
func Entry(e Event) audit.Entry {
	en := audit.Entry{
		Capability:    CapabilityName(e.Upstream, e.Tool),
		ClientID:      e.Caller.ClientID,
		CorrelationID: e.Caller.CorrelationID,
	}
	switch e.Outcome {
	case OutcomeAllowed:
		en.Outcome, en.Action = audit.Allowed, "call"
		if e.Redacted {
			en.Action = "call.redacted." + string(e.Direction)
		}
	case OutcomeRefused:
		en.Outcome, en.Action = audit.Denied, "call."+string(e.Reason)
		if e.Reason == ReasonPIIDetected {
			en.Action += "." + string(e.Direction)
			if len(e.Findings) > 0 {
				en.Action += "." + string(e.Findings[0].Detector)
			}
		}
	default:
		en.Outcome, en.Action = audit.Error, "call.failed"
	}
	return en
}

// Record implements [Auditor].
func (a DBAuditor) Record(ctx context.Context, e Event) error {
	log := a.Logger
	if log == nil {
		log = slog.Default()
	}
	en := Entry(e)
	log.InfoContext(ctx, "upstream call", "upstream", e.Upstream, "tool", e.Tool, "outcome", string(e.Outcome),
		"reason", string(e.Reason), "direction", string(e.Direction), "findings", e.Findings, "attempts", e.Attempts,
		"church_id", e.Caller.ChurchID, "user_id", e.Caller.UserID, "client_id", e.Caller.ClientID)
	return audit.Record(ctx, a.Store, store.Caller{ChurchID: e.Caller.ChurchID, UserID: e.Caller.UserID, Role: e.Caller.Role}, en)
}
