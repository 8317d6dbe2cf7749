package logic

import (
	"context"
	"encoding/json"
	"log/slog"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/store"
)

// OnRefused is the pipeline's refusal hook (pipeline.Config.OnRefused): it writes the audit
// entry of a call the scope check refused before any handler ran. The entry is written before
// the refusal is returned to the caller; failing to write it is logged, and the refusal stands.
func (s *Service) OnRefused(ctx context.Context, capabilityID string, args json.RawMessage, cause error) {
	if err := s.AuditDenied(ctx, capabilityID, args, cause); err != nil {
		s.logger().LogAttrs(ctx, slog.LevelWarn, "audit entry not written",
			slog.String("capability", capabilityID), slog.String("error", err.Error()))
	}
}

// ops is the audit action of each capability.
var ops = map[string]string{
	capapi.CapRosterChildren:    "read",
	capapi.CapRosterChild:       "read",
	capapi.CapAttendanceSummary: "read",
	capapi.CapCheckinsByDate:    "read",
	capapi.CapCheckinRegister:   "checkin",
	capapi.CapCheckoutRegister:  "checkout",
	capapi.CapChildEnroll:       "enroll",
}

// idFields are the input fields whose values are record ids, safe for the audit log.
var idFields = []string{"id", "child_id", "checkin_id", "class_id"}

// AuditDenied records a call refused before it reached the Service ([Service.OnRefused] does it
// for the pipeline's scope check), with the raw arguments of the call.
// It writes, in a transaction of its own, an entry with outcome denied and action
// "<op>.forbidden" ("read.forbidden", "checkin.forbidden", ...), the caller on ctx (anonymous
// when there is none) and its OAuth client, and the record ids among the arguments (id,
// child_id, checkin_id, class_id); nothing else of the arguments. Errors the Service's own
// methods return are audited by them already: do not record those again. cause selects the
// action's reason the way the methods do (an *errs.Invalid gives "<op>.invalid" with outcome
// error); nil means forbidden.
func (s *Service) AuditDenied(ctx context.Context, capabilityID string, args json.RawMessage, cause error) error {
	if s.Store == nil {
		return errNoStore
	}
	op, ok := ops[capabilityID]
	if !ok {
		op = "call"
	}
	if capabilityID == "" || utf8.RuneCountInString(capabilityID) > 100 || !utf8.ValidString(capabilityID) {
		capabilityID = "unknown"
	}
	if cause == nil {
		cause = &errs.Forbidden{Capability: capabilityID}
	}
	caller := store.Anonymous
	w := who{}
	if c, err := callerOf(ctx); err == nil {
		w, caller = c, c.caller()
	} else if p, ok := principal.From(ctx); ok {
		w.ClientID = p.ClientID // an incomplete principal: anonymous, but keep the client
	}
	c := call{capID: capabilityID, op: op, audited: true}
	e := s.entry(ctx, w, c, &txState{targets: argIDs(args)}, cause)
	return audit.Record(ctx, s.Store, caller, e)
}

// argIDs returns the record ids among args: the well-known id fields holding valid UUIDs.
func argIDs(args json.RawMessage) []uuid.UUID {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return nil
	}
	var ids []uuid.UUID
	for _, f := range idFields {
		var s string
		if raw, ok := m[f]; ok && json.Unmarshal(raw, &s) == nil {
			if id, err := uuid.Parse(s); err == nil && len(s) == 36 {
				ids = append(ids, id)
			}
		}
	}
	return ids
}
