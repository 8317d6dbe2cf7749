// Package incident keeps the register of security incidents that LGPD art. 48 and Resolução
// CD/ANPD nº 15/2024 require: every incident, notified or not, kept at least five years, and
// what the notification to the ANPD and to the data subjects needs (within three business
// days of knowing).
//
// Where the incident has an actor the audit log knows (a stolen volunteer token, a leaked API
// key, an OAuth client), the reach is read from the log: the churches, the children and
// guardians among the records the actor's allowed entries name, and the kinds of data from the
// PII rules of the capabilities used, narrowed by the actor's role's scopes (one source: the
// spec). Where it has none (a lost backup, a leaked dump), the reach is every record of the
// churches named. The register holds counts, never names; the data subjects to tell are read
// from the live tables on request (Subjects).
//
// Every operation runs in the owner's maintenance transaction (store.InSystemTx); the tables
// are closed to requests' role (migration 00109).
package incident

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/store"
)

// Capability is the capability of the audit entries the register writes, one per church an
// incident reached.
const Capability = "incident"

// Basis says how an incident's reach was established.
type Basis string

const (
	// ByAudit: the allowed audit entries of an actor in a period.
	ByAudit Basis = "audit"
	// WholeChurch: every record of the churches named.
	WholeChurch Basis = "whole_church"
)

// Kinds of data an incident can reach beyond the spec's PII categories.
const (
	// KindReligious: any record of a church reveals its members' religious affiliation,
	// sensitive data under LGPD art. 5 II.
	KindReligious = "religious_affiliation"
	// KindChildShortName is a child's name as callers without children:read receive it.
	KindChildShortName = "child_short_name"
)

// Request is what the operator knows when recording an incident.
type Request struct {
	// RecordedBy names the person recording (the operator), required.
	RecordedBy string
	// Summary says what happened and how, required: no personal data in it.
	Summary string
	// Detected is when the controller learnt of it; it starts the notification period.
	Detected time.Time
	// From and Until bound when it happened; for ByAudit they bound the entries read.
	From, Until *time.Time
	// Churches are the churches concerned: for ByAudit an optional restriction (required with
	// ActorUser, whose account belongs to one church), for WholeChurch the churches reached.
	Churches []uuid.UUID
	// ActorUser and ActorClient name the suspected actor (ByAudit): either or both.
	ActorUser   uuid.UUID
	ActorClient string
	// WholeChurch: the incident reached every record of Churches.
	WholeChurch bool
	// Measures taken or to be taken, and the data protection officer's contact: optional,
	// can be completed later with FollowUp.
	Measures, DPO string
}

// ChurchReach is what an incident reached in one church.
type ChurchReach struct {
	ChurchID       uuid.UUID `json:"church_id"`
	Name           string    `json:"name"`
	Slug           string    `json:"slug"`
	Children       int       `json:"children"`
	Guardians      int       `json:"guardians"`
	AuditEntries   int       `json:"audit_entries"`
	ChildrenTotal  int       `json:"children_total"`
	GuardiansTotal int       `json:"guardians_total"`
}

// Incident is one entry of the register.
type Incident struct {
	ID                 uuid.UUID     `json:"id"`
	RecordedAt         time.Time     `json:"recorded_at"`
	RecordedBy         string        `json:"recorded_by"`
	Detected           time.Time     `json:"detected_at"`
	Deadline           time.Time     `json:"notification_deadline"`
	From               *time.Time    `json:"occurred_from,omitempty"`
	Until              *time.Time    `json:"occurred_until,omitempty"`
	Summary            string        `json:"summary"`
	ActorUser          *uuid.UUID    `json:"actor_user_id,omitempty"`
	ActorClient        string        `json:"actor_client_id,omitempty"`
	Basis              Basis         `json:"basis"`
	Kinds              []string      `json:"data_kinds"`
	RelevantRisk       bool          `json:"relevant_risk"`
	Measures           string        `json:"measures,omitempty"`
	DPO                string        `json:"dpo,omitempty"`
	ANPDNotifiedAt     *time.Time    `json:"anpd_notified_at,omitempty"`
	SubjectsNotifiedAt *time.Time    `json:"subjects_notified_at,omitempty"`
	NotNotifiedReason  string        `json:"not_notified_reason,omitempty"`
	Churches           []ChurchReach `json:"churches"`
}

// Children and Guardians are the totals over the churches reached.
func (in Incident) Children() (n int) {
	for _, c := range in.Churches {
		n += c.Children
	}
	return n
}

// Guardians: see Children.
func (in Incident) Guardians() (n int) {
	for _, c := range in.Churches {
		n += c.Guardians
	}
	return n
}

// ErrNothingReached is returned when the audit log shows no allowed entry of the actor in the
// period: nothing is recorded, because a register entry with no reach would claim there was
// no breach. Record it with WholeChurch, or widen the period, if the operator knows better.
var ErrNothingReached = errors.New("the audit log has no allowed entry of that actor in that period: check the actor and --from/--until, or record it with --whole-church")

func (r *Request) validate() (Basis, error) {
	switch {
	case strings.TrimSpace(r.RecordedBy) == "":
		return "", errors.New("say who records the incident (--by)")
	case len(strings.TrimSpace(r.Summary)) < 10:
		return "", errors.New("describe what happened in --summary (at least 10 characters, no personal data)")
	case r.Detected.IsZero():
		return "", errors.New("say when the incident became known (--detected)")
	case r.Detected.After(time.Now().Add(time.Minute)):
		return "", errors.New("--detected is in the future")
	case r.From != nil && r.Until != nil && r.From.After(*r.Until):
		return "", errors.New("--from is after --until")
	case r.From != nil && r.From.After(r.Detected):
		return "", errors.New("--from is after --detected: an incident is known after it starts")
	}
	actor := r.ActorUser != uuid.Nil || r.ActorClient != ""
	switch {
	case actor && r.WholeChurch:
		return "", errors.New("give an actor (--actor-user, --actor-client) or --whole-church, not both")
	case actor && r.From == nil:
		return "", errors.New("with an actor, say from when the audit log is read (--from)")
	case r.ActorUser != uuid.Nil && len(r.Churches) != 1:
		return "", errors.New("--actor-user needs the one --church the account belongs to")
	case actor:
		return ByAudit, nil
	case r.WholeChurch && len(r.Churches) == 0:
		return "", errors.New("--whole-church needs the churches reached (--church, repeatable)")
	case r.WholeChurch:
		return WholeChurch, nil
	}
	return "", errors.New("say what the incident reached: a suspected actor (--actor-user and/or --actor-client, with --from) whose audit entries tell, or --whole-church with the churches")
}

// Record writes an incident to the register, with its reach, in one transaction, and an audit
// entry (action incident.recorded) in each church it reached.
func Record(ctx context.Context, st *store.Store, r Request) (Incident, error) {
	basis, err := r.validate()
	if err != nil {
		return Incident{}, err
	}
	var out Incident
	err = st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		q := db.New(tx)
		reach, kinds, err := measure(ctx, q, basis, r)
		if err != nil {
			return err
		}
		ins := db.InsertIncidentParams{
			RecordedBy: strings.TrimSpace(r.RecordedBy), DetectedAt: r.Detected, OccurredFrom: r.From,
			OccurredUntil: r.Until, Summary: strings.TrimSpace(r.Summary), ScopeBasis: string(basis),
			DataKinds: kinds, RelevantRisk: relevantRisk(kinds, reach),
			Measures: optional(r.Measures), Dpo: optional(r.DPO),
		}
		if r.ActorUser != uuid.Nil {
			ins.ActorUserID = &r.ActorUser
		}
		ins.ActorClientID = optional(r.ActorClient)
		row, err := q.InsertIncident(ctx, ins)
		if err != nil {
			return fmt.Errorf("record incident: %w", err)
		}
		for _, c := range reach {
			if err := q.InsertIncidentChurch(ctx, db.InsertIncidentChurchParams{
				IncidentID: row.ID, ChurchID: c.ChurchID, Children: int32(c.Children), Guardians: int32(c.Guardians),
				AuditEntries: int32(c.AuditEntries), ChildrenTotal: int32(c.ChildrenTotal), GuardiansTotal: int32(c.GuardiansTotal),
			}); err != nil {
				return fmt.Errorf("record incident's church: %w", err)
			}
			if err := audit.InsertOperator(ctx, q, c.ChurchID, audit.Entry{
				Capability: Capability, Action: "incident.recorded", Targets: []uuid.UUID{row.ID}, Outcome: audit.Allowed,
			}); err != nil {
				return err
			}
		}
		out, err = load(ctx, q, row.ID)
		return err
	})
	return out, err
}

// measure finds what the incident reached, per church, and the kinds of data.
func measure(ctx context.Context, q *db.Queries, basis Basis, r Request) ([]ChurchReach, []string, error) {
	var (
		reach []ChurchReach
		kinds = map[string]bool{}
	)
	switch basis {
	case ByAudit:
		// No end: up to the transaction's now(), the entry's recorded_at, so Subjects reads
		// the same entries again.
		p := db.IncidentReachByAuditParams{Since: *r.From, Until: r.Until}
		if r.ActorUser != uuid.Nil {
			p.UserID = &r.ActorUser
		}
		p.ClientID = optional(r.ActorClient)
		if len(r.Churches) == 1 {
			p.ChurchID = &r.Churches[0]
		}
		rows, err := q.IncidentReachByAudit(ctx, p)
		if err != nil {
			return nil, nil, fmt.Errorf("read the audit log: %w", err)
		}
		var visible capability.ScopeSet
		known := false
		if r.ActorUser != uuid.Nil {
			u, err := q.GetUser(ctx, db.GetUserParams{ChurchID: r.Churches[0], UserID: r.ActorUser})
			if errors.Is(err, pgx.ErrNoRows) {
				return nil, nil, errors.New("--actor-user is not an account of that church")
			} else if err != nil {
				return nil, nil, fmt.Errorf("read the actor's account: %w", err)
			}
			visible, known = scopes.RoleScopes(u.Role)
		}
		for _, row := range rows {
			if len(r.Churches) > 1 && !slices.Contains(r.Churches, row.ChurchID) {
				continue
			}
			reach = append(reach, ChurchReach{ChurchID: row.ChurchID, Children: len(row.ChildIds),
				Guardians: len(row.GuardianIds), AuditEntries: int(row.Entries)})
			for _, id := range row.Capabilities {
				for _, k := range capabilityKinds(id, visible, known) {
					kinds[k] = true
				}
			}
		}
		if len(reach) == 0 {
			return nil, nil, ErrNothingReached
		}
	case WholeChurch:
		for _, id := range r.Churches {
			ids, err := q.ChurchRecordIDs(ctx, id)
			if err != nil {
				return nil, nil, fmt.Errorf("count the church's records: %w", err)
			}
			n, g := len(ids.ChildIds), len(ids.GuardianIds)
			reach = append(reach, ChurchReach{ChurchID: id, Children: n, Guardians: g, ChildrenTotal: n, GuardiansTotal: g})
		}
		for _, c := range capapi.Capabilities() {
			for _, f := range c.OutputPII {
				kinds[string(f.Category)] = true
			}
		}
	}
	// The totals the notification asks for (a whole church's reach is its totals, read above).
	if basis == ByAudit {
		for i := range reach {
			ids, err := q.ChurchRecordIDs(ctx, reach[i].ChurchID)
			if err != nil {
				return nil, nil, fmt.Errorf("count the church's records: %w", err)
			}
			reach[i].ChildrenTotal, reach[i].GuardiansTotal = len(ids.ChildIds), len(ids.GuardianIds)
		}
	}
	kinds[KindReligious] = true
	out := make([]string, 0, len(kinds))
	for k := range kinds {
		out = append(out, k)
	}
	slices.Sort(out)
	return reach, out, nil
}

// capabilityKinds are the kinds of personal data a capability returns: the categories of its
// output's PII rules. With the caller's scopes known, a field the scopes hide counts only as
// what they receive instead (a short name) or not at all; unknown (an OAuth client alone, a
// token's narrower scopes), every field counts, an upper bound. A capability the spec does not
// declare (an upstream tool, the authorization server) adds nothing: the scanner keeps personal
// data from upstreams, and the authorization server returns none.
func capabilityKinds(id string, visible capability.ScopeSet, known bool) []string {
	c, ok := capapi.Lookup(id)
	if !ok {
		return nil
	}
	var out []string
	for _, f := range c.OutputPII {
		switch {
		case !known || f.VisibleWith == "" || visible.Has(f.VisibleWith):
			out = append(out, string(f.Category))
		case f.Otherwise == "short_name":
			out = append(out, KindChildShortName)
		}
	}
	return out
}

// relevantRisk: children's data or sensitive data (Res. 15/2024 art. 5 §1: both are criteria of
// relevant risk). A church's records always reveal religious affiliation, so any reach is.
func relevantRisk(kinds []string, reach []ChurchReach) bool {
	for _, c := range reach {
		if c.Children > 0 {
			return true
		}
	}
	return slices.Contains(kinds, KindReligious) || slices.Contains(kinds, string(capability.PIIHealth))
}

func optional(s string) *string {
	if s = strings.TrimSpace(s); s == "" {
		return nil
	}
	return &s
}

// Get reads one entry of the register.
func Get(ctx context.Context, st *store.Store, id uuid.UUID) (Incident, error) {
	var out Incident
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) (err error) {
		out, err = load(ctx, db.New(tx), id)
		return err
	})
	return out, err
}

func load(ctx context.Context, q *db.Queries, id uuid.UUID) (Incident, error) {
	row, err := q.GetIncident(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return Incident{}, fmt.Errorf("no incident %s in the register", id)
	} else if err != nil {
		return Incident{}, fmt.Errorf("read incident: %w", err)
	}
	in := Incident{
		ID: row.ID, RecordedAt: row.RecordedAt, RecordedBy: row.RecordedBy, Detected: row.DetectedAt,
		Deadline: Deadline(row.DetectedAt), From: row.OccurredFrom, Until: row.OccurredUntil, Summary: row.Summary,
		ActorUser: row.ActorUserID, ActorClient: deref(row.ActorClientID), Basis: Basis(row.ScopeBasis),
		Kinds: row.DataKinds, RelevantRisk: row.RelevantRisk, Measures: deref(row.Measures), DPO: deref(row.Dpo),
		ANPDNotifiedAt: row.AnpdNotifiedAt, SubjectsNotifiedAt: row.SubjectsNotifiedAt,
		NotNotifiedReason: deref(row.NotNotifiedReason),
	}
	chs, err := q.IncidentChurches(ctx, id)
	if err != nil {
		return Incident{}, fmt.Errorf("read incident's churches: %w", err)
	}
	for _, c := range chs {
		in.Churches = append(in.Churches, ChurchReach{ChurchID: c.ChurchID, Name: c.Name, Slug: c.Slug,
			Children: int(c.Children), Guardians: int(c.Guardians), AuditEntries: int(c.AuditEntries),
			ChildrenTotal: int(c.ChildrenTotal), GuardiansTotal: int(c.GuardiansTotal)})
	}
	return in, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Summary is one line of the register's list.
type Summary struct {
	ID                 uuid.UUID
	RecordedAt         time.Time
	Detected           time.Time
	Deadline           time.Time
	Summary            string
	RelevantRisk       bool
	Children           int
	Guardians          int
	ANPDNotifiedAt     *time.Time
	SubjectsNotifiedAt *time.Time
	NotNotified        bool
}

// List reads the register, oldest first, optionally from since on.
func List(ctx context.Context, st *store.Store, since *time.Time) ([]Summary, error) {
	var out []Summary
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := db.New(tx).ListIncidents(ctx, since)
		if err != nil {
			return fmt.Errorf("read the register: %w", err)
		}
		for _, r := range rows {
			out = append(out, Summary{ID: r.ID, RecordedAt: r.RecordedAt, Detected: r.DetectedAt,
				Deadline: Deadline(r.DetectedAt), Summary: r.Summary, RelevantRisk: r.RelevantRisk,
				Children: int(r.Children), Guardians: int(r.Guardians), ANPDNotifiedAt: r.AnpdNotifiedAt,
				SubjectsNotifiedAt: r.SubjectsNotifiedAt, NotNotified: r.NotNotifiedReason != nil})
		}
		return nil
	})
	return out, err
}

// FollowUp completes an entry: each field set replaces the recorded one; what was recorded
// about the incident itself cannot change (the database refuses it).
type FollowUp struct {
	Measures, DPO, NotNotifiedReason string
	ANPDNotifiedAt, SubjectsNotified *time.Time
}

// Update records a follow-up, audited in each church the incident reached.
func Update(ctx context.Context, st *store.Store, id uuid.UUID, f FollowUp) (Incident, error) {
	if f.Measures == "" && f.DPO == "" && f.NotNotifiedReason == "" && f.ANPDNotifiedAt == nil && f.SubjectsNotified == nil {
		return Incident{}, errors.New("nothing to record: give --measures, --dpo, --anpd-notified, --subjects-notified or --not-notified-reason")
	}
	var out Incident
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		q := db.New(tx)
		cur, err := load(ctx, q, id)
		if err != nil {
			return err
		}
		for _, t := range []*time.Time{f.ANPDNotifiedAt, f.SubjectsNotified} {
			if t != nil && t.Before(cur.Detected) {
				return errors.New("a notification date is before the incident became known")
			}
		}
		if _, err := q.UpdateIncidentFollowUp(ctx, db.UpdateIncidentFollowUpParams{ID: id,
			Measures: optional(f.Measures), Dpo: optional(f.DPO), NotNotifiedReason: optional(f.NotNotifiedReason),
			AnpdNotifiedAt: f.ANPDNotifiedAt, SubjectsNotifiedAt: f.SubjectsNotified}); err != nil {
			return fmt.Errorf("record follow-up: %w", err)
		}
		for _, c := range cur.Churches {
			if err := audit.InsertOperator(ctx, q, c.ChurchID, audit.Entry{
				Capability: Capability, Action: "incident.updated", Targets: []uuid.UUID{id}, Outcome: audit.Allowed,
			}); err != nil {
				return err
			}
		}
		out, err = load(ctx, q, id)
		return err
	})
	return out, err
}

// Subject is a guardian to tell of the incident, with the contact the church holds.
type Subject struct {
	Church   string
	Name     string
	Phone    string
	Children string
}

// Subjects reads the guardians an incident reached, for the notification of the data
// subjects: personal data, so the caller writes it only to a private file. The reach is read
// again (the audit log is append-only, so it is the one recorded); an erased guardian is
// listed with the erasure's marker. Audited (incident.subjects) in each church.
func Subjects(ctx context.Context, st *store.Store, id uuid.UUID) ([]Subject, error) {
	var out []Subject
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		q := db.New(tx)
		in, err := load(ctx, q, id)
		if err != nil {
			return err
		}
		var ids []uuid.UUID
		for _, c := range in.Churches {
			switch in.Basis {
			case ByAudit:
				until := in.RecordedAt
				if in.Until != nil {
					until = *in.Until
				}
				p := db.IncidentReachByAuditParams{Since: *in.From, Until: &until, UserID: in.ActorUser,
					ClientID: optional(in.ActorClient), ChurchID: &c.ChurchID}
				rows, err := q.IncidentReachByAudit(ctx, p)
				if err != nil {
					return fmt.Errorf("read the audit log: %w", err)
				}
				for _, r := range rows {
					ids = append(ids, r.GuardianIds...)
				}
			case WholeChurch:
				r, err := q.ChurchRecordIDs(ctx, c.ChurchID)
				if err != nil {
					return fmt.Errorf("read the church's guardians: %w", err)
				}
				ids = append(ids, r.GuardianIds...)
			}
			if err := audit.InsertOperator(ctx, q, c.ChurchID, audit.Entry{
				Capability: Capability, Action: "incident.subjects", Targets: []uuid.UUID{id}, Outcome: audit.Allowed,
			}); err != nil {
				return err
			}
		}
		rows, err := q.GuardiansToNotify(ctx, ids)
		if err != nil {
			return fmt.Errorf("read the guardians: %w", err)
		}
		for _, r := range rows {
			out = append(out, Subject{Church: r.ChurchName, Name: r.Name, Phone: r.Phone, Children: r.Children})
		}
		return nil
	})
	return out, err
}
