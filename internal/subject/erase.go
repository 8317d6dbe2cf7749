package subject

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/onboard"
	"github.com/neemias/neemias-mcp/internal/store"
)

// Plan is what an erasure changes (or, in a dry run, would change): ids and counts only.
type Plan struct {
	Guardians []uuid.UUID `json:"guardians"`
	Accounts  []uuid.UUID `json:"accounts"`
	// ChildrenAnonymized: every guardian of the child is erased; ChildrenUnlinked: the child
	// keeps another guardian and only loses the link.
	ChildrenAnonymized []uuid.UUID `json:"children_anonymized"`
	ChildrenUnlinked   []uuid.UUID `json:"children_unlinked"`
	// PickupEntries: entries of anonymized children's pick-up lists anonymized.
	PickupEntries int `json:"pickup_entries_anonymized"`
	// RestrictionsKept: restrictions against an erased guardian on a child who stays.
	RestrictionsKept int `json:"restrictions_kept"`
	// CheckinsKept: check-ins of anonymized children, kept as rows (counts).
	CheckinsKept int `json:"checkins_kept"`
	// ConsentsRevoked: active consents of the erased guardians, revoked and kept.
	ConsentsRevoked int  `json:"consents_revoked"`
	DryRun          bool `json:"dry_run"`
}

// Erase anonymizes guardian, and each child of theirs with no other guardian, in one
// transaction audited as subject.erase (see the package doc). With dryRun it writes nothing.
func Erase(ctx context.Context, st *store.Store, churchSlug string, guardian uuid.UUID, dryRun bool) (Plan, error) {
	var p Plan
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		ch, err := onboard.ChurchBySlug(ctx, tx, churchSlug)
		if err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM guardians WHERE church_id = $1 AND id = $2)`, ch.ID, guardian).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return errGuardian(guardian, ch.Slug)
		}
		p, err = erase(ctx, tx, ch.ID, []uuid.UUID{guardian}, "subject.erase", dryRun)
		return err
	})
	return p, err
}

// RetentionResult counts what a retention run erased (or would erase): never names.
type RetentionResult struct {
	Cutoff             time.Time `json:"cutoff"`
	Guardians          int       `json:"guardians"`
	ChildrenAnonymized int       `json:"children_anonymized"`
	ChildrenUnlinked   int       `json:"children_unlinked"`
	CheckinsKept       int       `json:"checkins_kept"`
	DryRun             bool      `json:"dry_run"`
}

// MinRetention is the shortest inactivity period [Retention] accepts, so that a typo never
// erases a church's active families.
const MinRetention = 30 * 24 * time.Hour

// Retention erases every guardian of the church whose record is older than the cutoff (now
// minus inactiveFor) and whose linked children were all enrolled before it and none checked in
// since; each erasure is audited as subject.retention. With dryRun it writes nothing.
func Retention(ctx context.Context, st *store.Store, churchSlug string, inactiveFor Period, dryRun bool) (RetentionResult, error) {
	cutoff := inactiveFor.Before(time.Now())
	if time.Since(cutoff) < MinRetention {
		return RetentionResult{}, fmt.Errorf("--inactive-for must be at least 30 days")
	}
	res := RetentionResult{Cutoff: cutoff.UTC(), DryRun: dryRun}
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		ch, err := onboard.ChurchBySlug(ctx, tx, churchSlug)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT g.id FROM guardians g
			WHERE g.church_id = $1 AND g.created_at < $2
			  AND NOT (g.name = $3 AND g.phone = $4)
			  AND NOT EXISTS (
				SELECT 1 FROM guardian_children gc JOIN children c ON c.id = gc.child_id AND c.church_id = gc.church_id
				WHERE gc.church_id = $1 AND gc.guardian_id = g.id
				  AND (c.created_at >= $2
				       OR EXISTS (SELECT 1 FROM checkins ck WHERE ck.church_id = $1 AND ck.child_id = c.id AND ck.checked_in_at >= $2)))
			ORDER BY g.id`, ch.ID, cutoff, Marker, PlaceholderPhone)
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		if err != nil || len(ids) == 0 {
			return err
		}
		p, err := erase(ctx, tx, ch.ID, ids, "subject.retention", dryRun)
		res.Guardians, res.ChildrenAnonymized, res.ChildrenUnlinked, res.CheckinsKept = len(p.Guardians), len(p.ChildrenAnonymized), len(p.ChildrenUnlinked), p.CheckinsKept
		return err
	})
	return res, err
}

// Period is a retention period in calendar units.
type Period struct {
	Days, Months, Years int
}

var periodRE = regexp.MustCompile(`^([1-9][0-9]{0,3})([dwmy])$`)

// ParsePeriod reads "90d", "12w", "24m" (months) or "2y".
func ParsePeriod(s string) (Period, error) {
	m := periodRE.FindStringSubmatch(s)
	if m == nil {
		return Period{}, fmt.Errorf("a period is a number and a unit: d (days), w (weeks), m (months) or y (years), such as 24m (got %q)", s)
	}
	n, _ := strconv.Atoi(m[1])
	switch m[2] {
	case "d":
		return Period{Days: n}, nil
	case "w":
		return Period{Days: 7 * n}, nil
	case "m":
		return Period{Months: n}, nil
	default:
		return Period{Years: n}, nil
	}
}

// Before returns t minus the period.
func (p Period) Before(t time.Time) time.Time { return t.AddDate(-p.Years, -p.Months, -p.Days) }

// erase plans and (unless dryRun) applies the erasure of guardians of church, in tx.
func erase(ctx context.Context, tx pgx.Tx, church uuid.UUID, guardians []uuid.UUID, action string, dryRun bool) (Plan, error) {
	p := Plan{DryRun: dryRun}
	rows, err := tx.Query(ctx, `SELECT id, user_id FROM guardians WHERE church_id = $1 AND id = ANY($2) ORDER BY id FOR UPDATE`, church, guardians)
	if err != nil {
		return p, err
	}
	type guardianRow struct {
		id   uuid.UUID
		user *uuid.UUID
	}
	gs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (guardianRow, error) {
		var g guardianRow
		return g, r.Scan(&g.id, &g.user)
	})
	if err != nil {
		return p, err
	}
	accountOf := map[uuid.UUID]uuid.UUID{}
	for _, g := range gs {
		p.Guardians = append(p.Guardians, g.id)
		if g.user != nil {
			p.Accounts = append(p.Accounts, *g.user)
			accountOf[g.id] = *g.user
		}
	}
	if len(p.Guardians) == 0 {
		return p, errors.New("no guardian to erase")
	}
	// The children, locked, and whether any guardian outside the set remains.
	rows, err = tx.Query(ctx, `SELECT c.id, NOT EXISTS (SELECT 1 FROM guardian_children o
				WHERE o.church_id = c.church_id AND o.child_id = c.id AND o.guardian_id <> ALL($2))
		FROM children c
		WHERE c.church_id = $1 AND c.id IN (SELECT child_id FROM guardian_children WHERE church_id = $1 AND guardian_id = ANY($2))
		ORDER BY c.id FOR UPDATE`, church, p.Guardians)
	if err != nil {
		return p, err
	}
	type childRow struct {
		id   uuid.UUID
		only bool
	}
	cs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (childRow, error) {
		var c childRow
		return c, r.Scan(&c.id, &c.only)
	})
	if err != nil {
		return p, err
	}
	for _, c := range cs {
		if c.only {
			p.ChildrenAnonymized = append(p.ChildrenAnonymized, c.id)
		} else {
			p.ChildrenUnlinked = append(p.ChildrenUnlinked, c.id)
		}
	}
	anon := nonNil(p.ChildrenAnonymized)
	counts := []struct {
		n   *int
		sql string
		arg []uuid.UUID
	}{
		{&p.PickupEntries, `SELECT count(*) FROM pickup_adults WHERE church_id = $1 AND child_id = ANY($2)`, anon},
		{&p.CheckinsKept, `SELECT count(*) FROM checkins WHERE church_id = $1 AND child_id = ANY($2)`, anon},
		{&p.ConsentsRevoked, `SELECT count(*) FROM consent_records WHERE church_id = $1 AND guardian_id = ANY($2) AND revoked_at IS NULL`, p.Guardians},
		{&p.RestrictionsKept, `SELECT count(*) FROM pickup_adults WHERE church_id = $1 AND guardian_id = ANY($2) AND child_id <> ALL($3)`, p.Guardians},
	}
	for _, c := range counts {
		args := []any{church, c.arg}
		if c.n == &p.RestrictionsKept {
			args = append(args, anon)
		}
		if err := tx.QueryRow(ctx, c.sql, args...).Scan(c.n); err != nil {
			return p, err
		}
	}
	if dryRun {
		return p, nil
	}

	// Each guardian's children, read before the links of the unlinked ones go.
	rows, err = tx.Query(ctx, `SELECT guardian_id, child_id FROM guardian_children WHERE church_id = $1 AND guardian_id = ANY($2) ORDER BY child_id`, church, p.Guardians)
	if err != nil {
		return p, err
	}
	kidsOf := map[uuid.UUID][]uuid.UUID{}
	var g, c uuid.UUID
	if _, err := pgx.ForEachRow(rows, []any{&g, &c}, func() error { kidsOf[g] = append(kidsOf[g], c); return nil }); err != nil {
		return p, err
	}
	accounts := nonNil(p.Accounts)
	steps := []struct {
		sql  string
		args []any
	}{
		// The guardians and their accounts.
		{`UPDATE guardians SET name = $3, phone = $4 WHERE church_id = $1 AND id = ANY($2)`, []any{church, p.Guardians, Marker, PlaceholderPhone}},
		{`UPDATE users SET display_name = $3, email = 'removido-' || id::text || '@removido.invalid', password_hash = NULL,
			disabled_at = coalesce(disabled_at, now()) WHERE church_id = $1 AND id = ANY($2)`, []any{church, accounts, Marker}},
		{`UPDATE oauth_grants SET revoked_at = now(), revoked_reason = 'user_disabled' WHERE church_id = $1 AND user_id = ANY($2) AND revoked_at IS NULL`, []any{church, accounts}},
		{`UPDATE api_keys SET revoked_at = now() WHERE church_id = $1 AND user_id = ANY($2) AND revoked_at IS NULL`, []any{church, accounts}},
		{`DELETE FROM oauth_login_sessions WHERE church_id = $1 AND user_id = ANY($2)`, []any{church, accounts}},
		{`DELETE FROM oauth_upstream_identities WHERE church_id = $1 AND user_id = ANY($2)`, []any{church, accounts}},
		{`DELETE FROM password_setup_codes WHERE church_id = $1 AND user_id = ANY($2)`, []any{church, accounts}},
		{`DELETE FROM oauth_codes WHERE church_id = $1 AND user_id = ANY($2)`, []any{church, accounts}},
		{`DELETE FROM oauth_auth_requests WHERE church_id = $1 AND user_id = ANY($2)`, []any{church, accounts}},
		{`UPDATE consent_records SET revoked_at = greatest(now(), granted_at) WHERE church_id = $1 AND guardian_id = ANY($2) AND revoked_at IS NULL`, []any{church, p.Guardians}},
		// Children who keep another guardian: only the link goes.
		{`DELETE FROM guardian_children WHERE church_id = $1 AND guardian_id = ANY($2) AND child_id = ANY($3)`, []any{church, p.Guardians, nonNil(p.ChildrenUnlinked)}},
		// Children whose guardians are all erased.
		{`UPDATE children SET name = $3, birth_date = make_date(extract(year FROM birth_date)::integer, 1, 1),
			allergies = NULL, medical_notes = NULL, archived_at = coalesce(archived_at, now())
			WHERE church_id = $1 AND id = ANY($2)`, []any{church, anon, Marker}},
		{`UPDATE pickup_adults p SET name = $3 || ' ' || n.n, relationship = $3, phone = NULL,
			note = CASE WHEN p.authorized THEN NULL ELSE $3 END
			FROM (SELECT id, row_number() OVER (PARTITION BY child_id ORDER BY created_at, id) AS n
			      FROM pickup_adults WHERE church_id = $1 AND child_id = ANY($2)) n
			WHERE p.id = n.id`, []any{church, anon, Marker}},
		// Who took the child home: an anonymized child's, or an erased guardian's name.
		{`UPDATE checkins SET picked_up_by_name = $4 WHERE church_id = $1 AND picked_up_by_name IS NOT NULL
			AND (child_id = ANY($2) OR picked_up_by_guardian = ANY($3))`, []any{church, anon, p.Guardians, Marker}},
	}
	for _, s := range steps {
		if _, err := tx.Exec(ctx, s.sql, s.args...); err != nil {
			return p, err
		}
	}
	// One entry per guardian, naming the guardian, the account and the children concerned.
	q := db.New(tx)
	for _, g := range p.Guardians {
		targets := []uuid.UUID{g}
		if a, ok := accountOf[g]; ok {
			targets = append(targets, a)
		}
		targets = append(targets, kidsOf[g]...)
		if err := audit.InsertOperator(ctx, q, church, audit.Entry{Capability: Capability, Action: action, Targets: targets, Outcome: audit.Allowed}); err != nil {
			return p, err
		}
	}
	return p, nil
}

func nonNil(ids []uuid.UUID) []uuid.UUID {
	if ids == nil {
		return []uuid.UUID{}
	}
	return ids
}
