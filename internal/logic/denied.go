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

// AuditDenied records a call refused before it reached the Service ([Service.OnRefused] does it
// for the pipeline's scope check), with the raw arguments of the call.
// It writes, in a transaction of its own, an entry with outcome denied and action
// "<op>.forbidden" ("read.forbidden", "checkin.forbidden", ...; op is the spec's audit action,
// "call" for an unknown capability), the caller on ctx (anonymous when there is none) and its
// OAuth client, and the record ids among the arguments (the capability's uuid inputs, from the
// spec); nothing else of the arguments. Errors the Service's own
// methods return are audited by them already: do not record those again. cause selects the
// action's reason the way the methods do (an *errs.Invalid gives "<op>.invalid" with outcome
// error); nil means forbidden.
func (s *Service) AuditDenied(ctx context.Context, capabilityID string, args json.RawMessage, cause error) error {
	if s.Store == nil {
		return errNoStore
	}
	c := newCall(capabilityID, nil)
	var idInputs []string
	if cp, ok := capapi.Lookup(capabilityID); ok {
		idInputs = cp.Audit.IDInputs
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
	c.capID, c.audited = capabilityID, true
	e := s.entry(ctx, w, c, &txState{targets: argIDs(args, idInputs)}, cause)
	return audit.Record(ctx, s.Store, caller, e)
}

// argIDs returns the record ids among args: the capability's id inputs (the spec's top-level
// uuid inputs, capability.Audit.IDInputs) holding valid UUIDs.
func argIDs(args json.RawMessage, idFields []string) []uuid.UUID {
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
