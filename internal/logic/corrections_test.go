package logic_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/store"
)

// ids returns the uuids a query selects in the maintenance context, sorted.
func (e *env) ids(sql string, args ...any) []uuid.UUID {
	e.t.Helper()
	var out []uuid.UUID
	e.sys(func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		return err
	})
	slices.SortFunc(out, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// text returns one text value a query selects in the maintenance context ("<null>" for NULL).
func (e *env) text(sql string, args ...any) string {
	e.t.Helper()
	var s *string
	e.sys(func(ctx context.Context, tx pgx.Tx) error { return tx.QueryRow(ctx, sql, args...).Scan(&s) })
	if s == nil {
		return "<null>"
	}
	return *s
}

func sortedIDs(ids ...[]uuid.UUID) []uuid.UUID {
	var out []uuid.UUID
	for _, l := range ids {
		out = append(out, l...)
	}
	slices.SortFunc(out, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
	return slices.Compact(out)
}

// wantConflict fails unless err is an *errs.Conflict whose reason holds every fragment.
func wantConflict(t *testing.T, err error, fragments ...string) {
	t.Helper()
	var c *errs.Conflict
	if !errors.As(err, &c) {
		t.Fatalf("err = %v, want *errs.Conflict", err)
	}
	for _, f := range fragments {
		if !strings.Contains(c.Reason, f) {
			t.Errorf("reason %q does not say %q", c.Reason, f)
		}
	}
}

// wantForbidden fails unless err is the pipeline's *errs.Forbidden.
func wantForbidden(t *testing.T, err error) {
	t.Helper()
	var f *errs.Forbidden
	if !errors.As(err, &f) {
		t.Fatalf("err = %v, want *errs.Forbidden", err)
	}
}

// refusedToOthers: a volunteer and a guardian are refused capability id by the pipeline (no
// children:write), and, past the pipeline with every scope, by the database (nothing found to
// act on); a record of another church is not found.
func refusedToOthers(t *testing.T, e *env, id string, args, otherChurch map[string]any) {
	t.Helper()
	every := plus(store.RoleAdmin)
	for _, role := range []string{store.RoleVoluntario, store.RoleResponsavel} {
		_, err := e.invoke(e.a.as(role), id, args)
		wantForbidden(t, err)
		_, err = invokeWith(e, e.a.as(role), id, args, every)
		if !errors.Is(err, errs.ErrNotFound) {
			t.Errorf("%s past the pipeline: err = %v, want not found", role, err)
		}
	}
	_, err := e.invoke(e.a.as(store.RoleAdmin), id, otherChurch)
	wantNotFound(t, err)
}

// TestChildCorrect: each field is replaced on the child's own row (no second child, nothing
// else of the row touched), the name normalized as the importer does; the audit entry names
// the changed fields only; an unchanged correction says so; refusals name the field; a
// correction that duplicates a sibling record points to neemias_child_merge.
//
//	fixture: k1 (c1, 3 years, guardians g1 and g2), k3 (c1, 4 years, guardian g2)
func TestChildCorrect(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	e.neverShown("Corrigida", "amendoim", "asma")
	cadastro := a.as(store.RoleCadastro)
	born5 := todaySP().Time().AddDate(-5, 0, -1).Format(time.DateOnly)
	children := e.count(`SELECT count(*) FROM children`)
	row := func() string {
		return e.text(`SELECT concat_ws('|', name, birth_date, class_id, coalesce(allergies, '-'), coalesce(medical_notes, '-'), handle, archived_at)
			FROM children WHERE id = $1`, a.k1)
	}
	handle := a.k1Handle
	for _, tc := range []struct {
		name    string
		in      map[string]any
		changed []string
		want    func(before string) string // the row after, from the row before
	}{
		{"name in capitals, spaces", map[string]any{"name": "  ZZCANARY   CORRIGIDA DE SOUZA "}, []string{"name"},
			func(b string) string { return replaceField(b, 0, "Zzcanary Corrigida de Souza") }},
		{"surname first", map[string]any{"name": "Souza, Zzcanary Corrigida"}, []string{"name"},
			func(b string) string { return replaceField(b, 0, "Zzcanary Corrigida Souza") }},
		{"birth date", map[string]any{"birth_date": born5}, []string{"birth_date"},
			func(b string) string { return replaceField(b, 1, born5) }},
		{"class", map[string]any{"class_id": a.c2}, []string{"class_id"},
			func(b string) string { return replaceField(b, 2, a.c2.String()) }},
		{"allergies", map[string]any{"allergies": " amendoim,   dipirona "}, []string{"allergies"},
			func(b string) string { return replaceField(b, 3, "amendoim, dipirona") }},
		{"medical notes and allergies removed", map[string]any{"medical_notes": "asma", "allergies": ""}, []string{"allergies", "medical_notes"},
			func(b string) string { return replaceField(replaceField(b, 3, "-"), 4, "asma") }},
		{"the same values again", map[string]any{"medical_notes": "asma", "class_id": a.c2}, []string{},
			func(b string) string { return b }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := row()
			in := map[string]any{"child_id": a.k1}
			for k, v := range tc.in {
				in[k] = v
			}
			got := mustInvoke[capapi.ChildCorrectOutput](e, cadastro, capapi.CapChildCorrect, in)
			if got.ChildID != a.k1 || got.ChildHandle != handle || !slices.Equal(got.Changed, tc.changed) || got.CorrectedAt.IsZero() {
				t.Errorf("got %+v, want changed %v", got, tc.changed)
			}
			if after, want := row(), tc.want(before); after != want {
				t.Errorf("row after:\n  %s\nwant\n  %s", after, want)
			}
			wantAction := "child_correct.unchanged"
			if len(tc.changed) > 0 {
				wantAction = "child_correct:" + strings.Join(tc.changed, ":")
			}
			if au := e.lastAudit(); au.Capability != capapi.CapChildCorrect || au.Action != wantAction || !slices.Equal(au.Targets, []uuid.UUID{a.k1}) {
				t.Errorf("audit %+v, want action %s", au, wantAction)
			}
		})
	}
	if n := e.count(`SELECT count(*) FROM children`); n != children {
		t.Errorf("%d children, were %d: a correction added or removed one", n, children)
	}
	if n := e.count(`SELECT count(*) FROM checkins WHERE child_id = $1`, a.k1); n != 1 {
		t.Errorf("k1 has %d check-ins after the corrections, want its 1", n)
	}

	k1Born := e.text(`SELECT birth_date::text FROM children WHERE id = $1`, a.k1)
	k1Name := e.childName(a.k1)
	for _, tc := range []struct {
		name  string
		in    map[string]any
		field string // *errs.Invalid on it; "" for a conflict
	}{
		{"nothing to correct", map[string]any{"child_id": a.k3}, "child_id"},
		{"born in the future", map[string]any{"child_id": a.k3, "birth_date": todaySP().AddDays(1).String()}, "birth_date"},
		{"too old", map[string]any{"child_id": a.k3, "birth_date": todaySP().Time().AddDate(-19, 0, 0).Format(time.DateOnly)}, "birth_date"},
		{"another church's class", map[string]any{"child_id": a.k3, "class_id": e.b.c1}, "class_id"},
		{"a phone in the alerts", map[string]any{"child_id": a.k3, "allergies": "ligar 11 98765-4321"}, "allergies"},
		{"a blank name", map[string]any{"child_id": a.k3, "name": "  ,  "}, "name"},
		{"the sibling's name and birth date", map[string]any{"child_id": a.k3, "name": k1Name, "birth_date": k1Born}, ""},
	} {
		t.Run("refused/"+tc.name, func(t *testing.T) {
			before := e.text(`SELECT concat_ws('|', name, birth_date, class_id, allergies) FROM children WHERE id = $1`, a.k3)
			_, err := e.invoke(cadastro, capapi.CapChildCorrect, tc.in)
			if tc.field != "" {
				wantInvalid(t, err, tc.field)
			} else {
				wantConflict(t, err, "neemias_child_merge", a.k1.String(), a.k3.String())
			}
			if after := e.text(`SELECT concat_ws('|', name, birth_date, class_id, allergies) FROM children WHERE id = $1`, a.k3); after != before {
				t.Errorf("a refused correction changed the row: %s -> %s", before, after)
			}
		})
	}
	refusedToOthers(t, e, capapi.CapChildCorrect, map[string]any{"child_id": a.k3, "allergies": "leite"},
		map[string]any{"child_id": e.b.k1, "allergies": "leite"})
	if got := e.text(`SELECT coalesce(allergies, '-') FROM children WHERE id = $1`, a.k3); got != "-" {
		t.Errorf("a refused role corrected k3: allergies %q", got)
	}
}

// replaceField replaces the i-th |-separated field of row.
func replaceField(row string, i int, v string) string {
	f := strings.Split(row, "|")
	f[i] = v
	return strings.Join(f, "|")
}

// TestGuardianCorrect: name, phone (read as the importer reads it, stored in E.164) and a
// relationship are replaced on the guardian's own rows; a shared family phone is fine, but a
// phone and name that make the guardian another record's person are refused with a pointer to
// neemias_guardian_merge; bad input names its field.
//
//	fixture: g1 (the RESPONSAVEL's record) -> k1, k2; g2 -> k1 father, k3, k4
func TestGuardianCorrect(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	e.neverShown("8123-4567", "81234567", "Zzsilva")
	admin := a.as(store.RoleAdmin)
	row := func() string {
		return e.text(`SELECT concat_ws('|', g.name, g.phone, (SELECT relationship FROM guardian_children WHERE guardian_id = g.id AND child_id = $2))
			FROM guardians g WHERE g.id = $1`, a.g2, a.k1)
	}
	guardians := e.count(`SELECT count(*) FROM guardians`)
	for _, tc := range []struct {
		name    string
		in      map[string]any
		changed []string
		want    func(before string) string
	}{
		{"phone with the area code", map[string]any{"phone": "(11) 98123-4567"}, []string{"phone"},
			func(b string) string { return replaceField(b, 1, "+5511981234567") }},
		{"the same number before the ninth digit", map[string]any{"phone": "11 8123-4567"}, []string{},
			func(b string) string { return b }},
		{"name", map[string]any{"name": "ZZSILVA  DOS SANTOS"}, []string{"name"},
			func(b string) string { return replaceField(b, 0, "Zzsilva dos Santos") }},
		{"relationship", map[string]any{"relationship": "legal_guardian", "child_id": a.k1}, []string{"relationship"},
			func(b string) string { return replaceField(b, 2, "legal_guardian") }},
		{"the family's shared phone, another name", map[string]any{"phone": a.g1Phone}, []string{"phone"},
			func(b string) string { return replaceField(b, 1, "+5511900004242") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := row()
			in := map[string]any{"guardian_id": a.g2}
			for k, v := range tc.in {
				in[k] = v
			}
			got := mustInvoke[capapi.GuardianCorrectOutput](e, admin, capapi.CapGuardianCorrect, in)
			if got.GuardianID != a.g2 || !slices.Equal(got.Changed, tc.changed) {
				t.Errorf("got %+v, want changed %v", got, tc.changed)
			}
			if after, want := row(), tc.want(before); after != want {
				t.Errorf("row after:\n  %s\nwant\n  %s", after, want)
			}
			wantAction := "guardian_correct.unchanged"
			if len(tc.changed) > 0 {
				wantAction = "guardian_correct:" + strings.Join(tc.changed, ":")
			}
			if au := e.lastAudit(); au.Action != wantAction || au.Targets[0] != a.g2 {
				t.Errorf("audit %+v, want action %s", au, wantAction)
			}
		})
	}
	if n := e.count(`SELECT count(*) FROM guardians`); n != guardians {
		t.Errorf("%d guardians, were %d", n, guardians)
	}
	for _, tc := range []struct {
		name  string
		in    map[string]any
		field string // *errs.Invalid on it; "" for a conflict
		says  string
	}{
		{"nothing to correct", map[string]any{}, "guardian_id", "at least one field"},
		{"not a number of Brazil", map[string]any{"phone": "(00) 1234-5678"}, "phone", "invalid phone number for Brazil"},
		{"relationship without the child", map[string]any{"relationship": "mother"}, "child_id", "required with relationship"},
		{"child without the relationship", map[string]any{"child_id": a.k1}, "relationship", "missing"},
		{"a child not theirs", map[string]any{"relationship": "mother", "child_id": a.k2}, "child_id", "not a child this guardian is linked to"},
		{"the same person as g1", map[string]any{"name": a.g1Name}, "", "neemias_guardian_merge"},
	} {
		t.Run("refused/"+tc.name, func(t *testing.T) {
			before := row()
			in := map[string]any{"guardian_id": a.g2}
			for k, v := range tc.in {
				in[k] = v
			}
			_, err := e.invoke(admin, capapi.CapGuardianCorrect, in)
			if tc.field != "" {
				if inv := wantInvalid(t, err, tc.field); !strings.Contains(inv.Reason, tc.says) {
					t.Errorf("reason %q does not say %q", inv.Reason, tc.says)
				}
			} else {
				wantConflict(t, err, tc.says, a.g1.String(), a.g2.String())
			}
			if after := row(); after != before {
				t.Errorf("a refused correction changed the row: %s -> %s", before, after)
			}
		})
	}
	refusedToOthers(t, e, capapi.CapGuardianCorrect, map[string]any{"guardian_id": a.g2, "name": "Outro Nome"},
		map[string]any{"guardian_id": e.b.g2, "name": "Outro Nome"})
}

// TestChildMerge: the survivor keeps every row of both records (check-ins, guardian links,
// pick-up entries, consents: by id), an adult on both pick-up lists stays in force once, the
// duplicate row is gone and the audit entry points from it to the survivor; the refusals
// (itself, a shared check-in day, an archived survivor, disagreeing pick-up lists, another
// church, the roles without children:write) change nothing.
func TestChildMerge(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	cadastro := a.as(store.RoleCadastro)
	// k5, k1 enrolled twice: a check-in the day before the fixture's, guardians g1 (also k1's)
	// and g3 (new), consents of both, the fixture's trusted adult again and an adult of its own.
	k5, _ := e.addChild(a, "Zzcanary Sentinela Dup", a.c1, "")
	g3 := e.addGuardian(a, "Responsável Três", "+55 11 90000-0003", k5, "grandparent")
	e.exec(`INSERT INTO guardian_children (guardian_id, child_id, church_id, relationship) VALUES ($1, $2, $3, 'mother')`, a.g1, k5, a.id)
	e.exec(`INSERT INTO consent_records (church_id, guardian_id, child_id, text_version, legal_basis, granted_by) VALUES
		($1, $2, $4, 'v1', 'consent', $5), ($1, $3, $4, 'v2', 'consent', $5)`, a.id, a.g1, g3, k5, a.users[store.RoleCadastro])
	prev := a.day.AddDays(-1)
	e.exec(`INSERT INTO service_days (church_id, service_date) VALUES ($1, $2)`, a.id, prev.Time())
	e.exec(`INSERT INTO checkins (church_id, child_id, class_id, service_date, checked_in_by, pickup_code_salt, pickup_code_hash, checked_in_at, checked_out_at, checked_out_by)
		SELECT church_id, $2, class_id, $3, checked_in_by, pickup_code_salt, pickup_code_hash, $4, $5, $6 FROM checkins WHERE id = $1`,
		a.ck1, k5, prev.Time(), prev.Time().Add(12*time.Hour), prev.Time().Add(13*time.Hour), a.users[store.RoleVoluntario])
	e.exec(`INSERT INTO pickup_adults (church_id, child_id, name, relationship, authorized, created_by) VALUES
		($1, $2, $3, 'grandmother', true, $4), ($1, $2, 'Tio Dup', 'uncle', true, $4)`, a.id, k5, strings.ToUpper(trustedName), a.users[store.RoleAdmin])

	checkins := e.ids(`SELECT id FROM checkins WHERE child_id = ANY($1)`, []uuid.UUID{a.k1, k5})
	consents := e.ids(`SELECT id FROM consent_records WHERE child_id = ANY($1)`, []uuid.UUID{a.k1, k5})
	pickups := e.ids(`SELECT id FROM pickup_adults WHERE child_id = ANY($1)`, []uuid.UUID{a.k1, k5})
	dupTrusted := e.ids(`SELECT id FROM pickup_adults WHERE child_id = $1 AND name <> 'Tio Dup'`, k5)
	children := e.count(`SELECT count(*) FROM children`)

	snapshot := func() string {
		return e.text(`SELECT concat_ws('|', (SELECT count(*) FROM children), (SELECT count(*) FROM checkins), (SELECT count(*) FROM guardian_children),
			(SELECT count(*) FROM consent_records), (SELECT count(*) FROM pickup_adults WHERE removed_at IS NULL),
			(SELECT string_agg(child_id::text || ck.service_date, ',' ORDER BY ck.id) FROM checkins ck))`)
	}
	before := snapshot()
	e.exec(`INSERT INTO pickup_adults (church_id, child_id, name, relationship, authorized, note, created_by) VALUES ($1, $2, $3, 'grandmother', false, 'ordem judicial', $4)`,
		a.id, a.k3, trustedName, a.users[store.RoleAdmin])
	k2Archived := func(on bool) {
		if on {
			e.exec(`UPDATE children SET archived_at = now() WHERE id = $1`, a.k2)
		} else {
			e.exec(`UPDATE children SET archived_at = NULL WHERE id = $1`, a.k2)
		}
	}
	for _, tc := range []struct {
		name      string
		survivor  uuid.UUID
		duplicate uuid.UUID
		setup     func(bool)
		invalid   string   // the *errs.Invalid's field
		conflict  []string // the *errs.Conflict's words
	}{
		{"into itself", a.k1, a.k1, nil, "duplicate_id", nil},
		{"both checked in on one day", a.k1, a.k3, nil, "", []string{"both records were checked in on " + a.day.String(), "two children"}},
		{"an archived survivor", a.k2, k5, k2Archived, "", []string{"survivor is archived"}},
		{"an adult allowed on one list and refused on the other", k5, a.k3, nil, "", []string{"neemias_pickup_adult_remove"}},
	} {
		t.Run("refused/"+tc.name, func(t *testing.T) {
			if tc.setup != nil {
				tc.setup(true)
				defer tc.setup(false)
			}
			_, err := e.invoke(cadastro, capapi.CapChildMerge, map[string]any{"survivor_id": tc.survivor, "duplicate_id": tc.duplicate})
			if tc.invalid != "" {
				wantInvalid(t, err, tc.invalid)
			} else {
				wantConflict(t, err, tc.conflict...)
			}
			if got := err.Error(); strings.Contains(got, "Zzcanary") || strings.Contains(got, "Criança") {
				t.Errorf("the refusal names a child: %s", got)
			}
		})
	}
	e.exec(`DELETE FROM pickup_adults WHERE child_id = $1`, a.k3)
	if got := snapshot(); got != before {
		t.Fatalf("the refusals changed something:\n  %s\n  %s", before, got)
	}
	refusedToOthers(t, e, capapi.CapChildMerge, map[string]any{"survivor_id": a.k1, "duplicate_id": k5},
		map[string]any{"survivor_id": a.k1, "duplicate_id": e.b.k4})
	if got := snapshot(); got != before {
		t.Fatalf("a refused role changed something:\n  %s\n  %s", before, got)
	}

	got := mustInvoke[capapi.ChildMergeOutput](e, cadastro, capapi.CapChildMerge, map[string]any{"survivor_id": a.k1, "duplicate_id": k5})
	want := capapi.ChildMergeOutput{SurvivorID: a.k1, SurvivorHandle: a.k1Handle, DuplicateID: k5, CheckinsMoved: 1, GuardiansLinked: 1, ConsentsMoved: 2, PickupEntriesMoved: 2}
	got.MergedAt = time.Time{}
	if *got != want {
		t.Errorf("got  %+v\nwant %+v", *got, want)
	}
	for _, tc := range []struct {
		what      string
		got, want []uuid.UUID
	}{
		{"check-ins", e.ids(`SELECT id FROM checkins WHERE child_id = $1`, a.k1), checkins},
		{"consents", e.ids(`SELECT id FROM consent_records WHERE child_id = $1`, a.k1), consents},
		{"pick-up entries", e.ids(`SELECT id FROM pickup_adults WHERE child_id = $1`, a.k1), pickups},
		{"guardians", e.ids(`SELECT guardian_id FROM guardian_children WHERE child_id = $1`, a.k1), sortedIDs([]uuid.UUID{a.g1, a.g2, g3})},
		{"live entries", e.ids(`SELECT id FROM pickup_adults WHERE child_id = $1 AND removed_at IS NULL`, a.k1),
			e.ids(`SELECT id FROM pickup_adults WHERE child_id = $1 AND (id = $2 OR name = 'Tio Dup')`, a.k1, a.pa1)},
		{"closed entries", e.ids(`SELECT id FROM pickup_adults WHERE child_id = $1 AND removed_by = $2`, a.k1, a.users[store.RoleCadastro]), dupTrusted},
		{"the duplicate", e.ids(`SELECT id FROM children WHERE id = $1`, k5), nil},
		{"the duplicate's links", e.ids(`SELECT guardian_id FROM guardian_children WHERE child_id = $1`, k5), nil},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s of the survivor: %v, want %v", tc.what, tc.got, tc.want)
		}
	}
	if n := e.count(`SELECT count(*) FROM children`); n != children-1 {
		t.Errorf("%d children, want %d", n, children-1)
	}
	if au := e.lastAudit(); au.Action != "child_merge" || !slices.Equal(au.Targets, []uuid.UUID{a.k1, k5}) || au.Outcome != "allowed" {
		t.Errorf("audit %+v", au)
	}
	_, err := e.invoke(cadastro, capapi.CapChildMerge, map[string]any{"survivor_id": a.k1, "duplicate_id": k5})
	wantNotFound(t, err)
}

// TestGuardianMerge: the survivor keeps the duplicate's children (a child of both once, with
// the survivor's relationship), consents, the restrictions naming them, their pick-ups and
// their login account, which then sees the survivor's children; two accounts, the same record
// twice, another church and the roles without children:write are refused.
func TestGuardianMerge(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	admin := a.as(store.RoleAdmin)
	// g3: g2's person again, with an account of their own, linked to k1 (as g2 is) and k2.
	account := uuid.New()
	e.exec(`INSERT INTO users (id, church_id, email, display_name, role) VALUES ($1, $2, 'resp2@zz-a.test', 'Resp Dois', 'RESPONSAVEL')`, account, a.id)
	g3 := e.addGuardian(a, "Responsável Dois", "+55 11 90000-0002", a.k1, "other")
	e.exec(`UPDATE guardians SET user_id = $1 WHERE id = $2`, account, g3)
	e.exec(`INSERT INTO guardian_children (guardian_id, child_id, church_id, relationship) VALUES ($1, $2, $3, 'father')`, g3, a.k2, a.id)
	e.exec(`INSERT INTO consent_records (church_id, guardian_id, child_id, text_version, legal_basis, granted_by) VALUES ($1, $2, $3, 'v1', 'consent', $4)`,
		a.id, g3, a.k2, a.users[store.RoleAdmin])
	e.exec(`INSERT INTO pickup_adults (church_id, child_id, guardian_id, name, relationship, authorized, note, created_by) VALUES
		($1, $2, $3, 'Responsável Dois', 'father', false, 'medida protetiva', $4)`, a.id, a.k3, g3, a.users[store.RoleAdmin])
	e.exec(`UPDATE checkins SET checked_out_at = checked_in_at + interval '1 hour', checked_out_by = $2, picked_up_by_guardian = $3, picked_up_by_name = 'Responsável Dois'
		WHERE id = $1`, a.ck2, a.users[store.RoleVoluntario], g3)

	consents := e.ids(`SELECT id FROM consent_records WHERE guardian_id = ANY($1)`, []uuid.UUID{a.g2, g3})
	restrictions := e.ids(`SELECT id FROM pickup_adults WHERE guardian_id = $1`, g3)
	snapshot := func() string {
		return e.text(`SELECT concat_ws('|', (SELECT count(*) FROM guardians), (SELECT string_agg(guardian_id::text || child_id, ',' ORDER BY guardian_id, child_id) FROM guardian_children),
			(SELECT string_agg(guardian_id::text, ',' ORDER BY id) FROM consent_records), (SELECT string_agg(user_id::text, ',' ORDER BY id) FROM guardians))`)
	}
	before := snapshot()
	for _, tc := range []struct {
		name                string
		survivor, duplicate uuid.UUID
		invalid             string
		conflict            string
	}{
		{"into itself", a.g2, a.g2, "duplicate_id", ""},
		{"two login accounts", a.g1, g3, "", "both guardian records have a login account"},
	} {
		t.Run("refused/"+tc.name, func(t *testing.T) {
			_, err := e.invoke(admin, capapi.CapGuardianMerge, map[string]any{"survivor_id": tc.survivor, "duplicate_id": tc.duplicate})
			if tc.invalid != "" {
				wantInvalid(t, err, tc.invalid)
			} else {
				wantConflict(t, err, tc.conflict, "neemias-mcp user disable")
			}
		})
	}
	refusedToOthers(t, e, capapi.CapGuardianMerge, map[string]any{"survivor_id": a.g2, "duplicate_id": g3},
		map[string]any{"survivor_id": a.g2, "duplicate_id": e.b.g2})
	if got := snapshot(); got != before {
		t.Fatalf("the refusals changed something:\n  %s\n  %s", before, got)
	}

	got := mustInvoke[capapi.GuardianMergeOutput](e, a.as(store.RoleCadastro), capapi.CapGuardianMerge, map[string]any{"survivor_id": a.g2, "duplicate_id": g3})
	got.MergedAt = time.Time{}
	want := capapi.GuardianMergeOutput{SurvivorID: a.g2, DuplicateID: g3, ChildrenLinked: 1, ConsentsMoved: 1, PickupEntriesMoved: 1, CheckinsMoved: 1, AccountMoved: true}
	if *got != want {
		t.Errorf("got  %+v\nwant %+v", *got, want)
	}
	for _, tc := range []struct {
		what      string
		got, want []uuid.UUID
	}{
		{"children", e.ids(`SELECT child_id FROM guardian_children WHERE guardian_id = $1`, a.g2), sortedIDs([]uuid.UUID{a.k1, a.k2, a.k3, a.k4})},
		{"consents", e.ids(`SELECT id FROM consent_records WHERE guardian_id = $1`, a.g2), consents},
		{"restrictions", e.ids(`SELECT id FROM pickup_adults WHERE guardian_id = $1`, a.g2), restrictions},
		{"pick-ups", e.ids(`SELECT id FROM checkins WHERE picked_up_by_guardian = $1`, a.g2), []uuid.UUID{a.ck2}},
		{"the account", e.ids(`SELECT user_id FROM guardians WHERE id = $1`, a.g2), []uuid.UUID{account}},
		{"the duplicate", e.ids(`SELECT id FROM guardians WHERE id = $1`, g3), nil},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s of the survivor: %v, want %v", tc.what, tc.got, tc.want)
		}
	}
	if rel := e.text(`SELECT relationship FROM guardian_children WHERE guardian_id = $1 AND child_id = $2`, a.g2, a.k1); rel != "father" {
		t.Errorf("k1's link to the survivor is %q, want the survivor's own (father)", rel)
	}
	if au := e.lastAudit(); au.Action != "guardian_merge" || !slices.Contains(au.Targets, g3) || !slices.Contains(au.Targets, account) {
		t.Errorf("audit %+v", au)
	}
	// The moved account sees the survivor's children (k4, in no class, is on no class list).
	p, _ := principal.From(a.as(store.RoleResponsavel))
	p.UserID = account
	list := mustInvoke[capapi.ClassListOutput](e, principal.With(context.Background(), p), capapi.CapClassList, map[string]any{"date": a.day.String()})
	var seen []string
	for _, cl := range list.Classes {
		for _, c := range cl.Children {
			seen = append(seen, c.Handle)
		}
	}
	slices.Sort(seen)
	wantSeen := []string{a.handles[a.k1], a.handles[a.k2], a.handles[a.k3]}
	slices.Sort(wantSeen)
	if !slices.Equal(seen, wantSeen) {
		t.Errorf("the moved account sees %v on the class list, want the survivor's children %v", seen, wantSeen)
	}
}

// TestConsentRevoke: a child without consent leaves the roster counts, the class list (but
// for a day they were checked in), child search and check-in; one guardian's revocation keeps
// a child another guardian consented for; a new consent through enrollment, or recorded by the
// import, brings the child back.
func TestConsentRevoke(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	admin := a.as(store.RoleAdmin)
	enrolled := func() int64 {
		return mustInvoke[capapi.RosterChildrenOutput](e, admin, capapi.CapRosterChildren, map[string]any{}).TotalChildren
	}
	onClassList := func(day string) bool {
		list := mustInvoke[capapi.ClassListOutput](e, admin, capapi.CapClassList, map[string]any{"date": day})
		for _, cl := range list.Classes {
			for _, c := range cl.Children {
				if c.Handle == a.k1Handle {
					return true
				}
			}
		}
		return false
	}
	found := func() bool {
		return len(mustInvoke[capapi.ChildFindOutput](e, admin, capapi.CapChildFind, map[string]any{"name": "sentinela"}).Children) == 1
	}
	listed := func(t *testing.T, want bool) {
		t.Helper()
		if got := onClassList(todaySP().String()); got != want {
			t.Errorf("on today's class list: %v, want %v", got, want)
		}
		if got := found(); got != want {
			t.Errorf("found by child_find: %v, want %v", got, want)
		}
		if !onClassList(a.day.String()) {
			t.Error("not on the class list of the day the child was checked in")
		}
	}
	all := enrolled()
	listed(t, true)

	wantInvalid(t, func() error {
		_, err := e.invoke(admin, capapi.CapConsentRevoke, map[string]any{"child_id": a.k1, "guardian_id": a.g2})
		return err
	}(), "guardian_id")
	refusedToOthers(t, e, capapi.CapConsentRevoke, map[string]any{"child_id": a.k1}, map[string]any{"child_id": e.b.k1})

	// g2 consents too: revoking g1's keeps k1 listed.
	e.exec(`INSERT INTO consent_records (church_id, guardian_id, child_id, text_version, legal_basis, granted_by) VALUES ($1, $2, $3, 'v1', 'consent', $4)`,
		a.id, a.g2, a.k1, a.users[store.RoleAdmin])
	one := mustInvoke[capapi.ConsentRevokeOutput](e, admin, capapi.CapConsentRevoke, map[string]any{"child_id": a.k1, "guardian_id": a.g1})
	if one.ConsentsRevoked != 1 || one.ConsentsLeft != 1 || !one.Listed || one.RevokedAt == nil {
		t.Errorf("one guardian's: %+v", one)
	}
	listed(t, true)

	got := mustInvoke[capapi.ConsentRevokeOutput](e, a.as(store.RoleCadastro), capapi.CapConsentRevoke, map[string]any{"child_id": a.k1})
	if got.ConsentsRevoked != 1 || got.ConsentsLeft != 0 || got.Listed || got.RevokedAt == nil || got.ChildHandle != a.k1Handle {
		t.Errorf("every guardian's: %+v", got)
	}
	if au := e.lastAudit(); au.Action != "consent_revoke" || au.Targets[0] != a.k1 || len(au.Targets) != 2 {
		t.Errorf("audit %+v", au)
	}
	if n := e.count(`SELECT count(*) FROM consent_records WHERE child_id = $1 AND revoked_at IS NOT NULL`, a.k1); n != 2 {
		t.Errorf("%d revoked records of k1, want 2 (kept as evidence)", n)
	}
	t.Run("revoked", func(t *testing.T) {
		listed(t, false)
		if n := enrolled(); n != all-1 {
			t.Errorf("roster counts %d children, want %d", n, all-1)
		}
		for _, args := range []map[string]any{{"child_id": a.k1}, {"child": a.k1Handle}} {
			_, err := e.invoke(admin, capapi.CapCheckinRegister, args)
			wantConflict(t, err, "consent for this child was revoked on "+todaySP().String(), "record a new consent")
		}
		_, err := e.invoke(admin, capapi.CapCheckinRegister, map[string]any{"child": strings.Fields(a.childName)[0]})
		wantInvalid(t, err, "child") // by name: not on the list, and the refusal names no one
		again := mustInvoke[capapi.ConsentRevokeOutput](e, admin, capapi.CapConsentRevoke, map[string]any{"child_id": a.k1})
		if again.ConsentsRevoked != 0 || again.Listed || again.RevokedAt == nil || !again.RevokedAt.Equal(*got.RevokedAt) {
			t.Errorf("again: %+v", again)
		}
		if au := e.lastAudit(); au.Action != "consent_revoke.repeat" {
			t.Errorf("audit %+v", au)
		}
	})
	t.Run("a new consent by enrollment", func(t *testing.T) {
		args := enrollArgs(e.text(`SELECT birth_date::text FROM children WHERE id = $1`, a.k1))
		args["name"] = a.childName
		args["guardian"] = map[string]any{"name": a.g1Name, "phone": a.g1Phone, "relationship": "mother"}
		out := mustInvoke[capapi.ChildEnrollOutput](e, a.as(store.RoleCadastro), capapi.CapChildEnroll, args)
		if out.ChildID != a.k1 || out.GuardianID != a.g1 || out.ClassID == nil || *out.ClassID != a.c1 {
			t.Errorf("enrolled %+v, want k1 with g1 again", out)
		}
		if au := e.lastAudit(); au.Action != "enroll.consent_again" {
			t.Errorf("audit %+v", au)
		}
		listed(t, true)
		if n := enrolled(); n != all {
			t.Errorf("roster counts %d children, want %d", n, all)
		}
		mustInvoke[capapi.CheckinRegisterOutput](e, admin, capapi.CapCheckinRegister, map[string]any{"child_id": a.k1})
	})
	t.Run("a new consent by the import", func(t *testing.T) {
		mustInvoke[capapi.ConsentRevokeOutput](e, admin, capapi.CapConsentRevoke, map[string]any{"child_id": a.k1})
		if found() {
			t.Fatal("found after the second revocation")
		}
		// What the roster import writes for a "Sim" consent cell, in its maintenance transaction.
		e.exec(`INSERT INTO consent_records (church_id, guardian_id, child_id, text_version, legal_basis) VALUES ($1, $2, $3, 'v2', 'consent')`, a.id, a.g2, a.k1)
		if !found() {
			t.Error("not found after the import recorded a consent")
		}
	})
}
