package incident_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/incident"
	"github.com/neemias/neemias-mcp/internal/logic"
	"github.com/neemias/neemias-mcp/internal/pipeline"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

func TestDeadline(t *testing.T) {
	sp, _ := time.LoadLocation("America/Sao_Paulo")
	for _, tc := range []struct {
		name, detected, want string
	}{
		{"friday: the weekend does not count", "2026-11-27T15:00:00-03:00", "2026-12-02"},
		{"late friday in UTC is still friday in Brasília", "2026-11-28T02:00:00Z", "2026-12-02"},
		{"thursday before Consciência Negra (Nov 20)", "2026-11-19T10:00:00-03:00", "2026-11-25"},
		{"Christmas in the way", "2026-12-23T09:00:00-03:00", "2026-12-29"},
		{"monday", "2026-11-30T08:00:00-03:00", "2026-12-03"},
		{"known on a sunday", "2026-11-29T20:00:00-03:00", "2026-12-02"},
		{"New Year (a friday holiday)", "2026-12-31T12:00:00-03:00", "2027-01-06"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := time.Parse(time.RFC3339, tc.detected)
			if err != nil {
				t.Fatal(err)
			}
			got := incident.Deadline(d).In(sp)
			if got.Format(time.DateOnly) != tc.want || got.Format("15:04:05") != "23:59:59" {
				t.Errorf("Deadline(%s) = %s, want the end of %s (Brasília)", tc.detected, got, tc.want)
			}
		})
	}
}

// call runs a capability as role of the demo church through the pipeline the transports use,
// so the audit entries are those a real call writes.
func call(t *testing.T, st *store.Store, user uuid.UUID, role, client, id string, args map[string]any) any {
	t.Helper()
	gate, err := pipeline.New(pipeline.Config{Catalog: capapi.Catalog(logic.New(st))})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := scopes.RoleScopes(role)
	ctx := principal.With(context.Background(), principal.Principal{UserID: user, ChurchID: seed.DemoChurchID, Role: role, Scopes: s, ClientID: client})
	raw, _ := json.Marshal(args)
	permit, err := gate.Authorize(ctx, id, raw)
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	res, err := gate.Invoke(ctx, permit, raw)
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	return res.Value
}

func scalar[T any](t *testing.T, st *store.Store, sql string, args ...any) (v T) {
	t.Helper()
	if err := st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, sql, args...).Scan(&v)
	}); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

// TestRecordFromTheAuditLog: a volunteer's stolen session read the class list and an admin's
// leaked client read one child's record; each incident's reach is what those calls returned:
// the children and their guardians, the kinds of data the role could see (a volunteer gets
// short names, never birth dates or phones), and nothing of the other actor's reads.
func TestRecordFromTheAuditLog(t *testing.T) {
	st := storetest.NewSeeded(t, seed.Options{ChildrenPerChurch: 20, Months: 1})
	ctx := context.Background()
	start := scalar[time.Time](t, st, `SELECT now()`).Add(-time.Second)

	list := call(t, st, seed.DemoVoluntarioID, store.RoleVoluntario, "stolen-phone", capapi.CapClassList, map[string]any{}).(*capapi.ClassListOutput)
	if list.NextOffset != nil || list.TotalChildren == 0 {
		t.Fatalf("class list: %d children, next %v: the fixture wants one page", list.TotalChildren, list.NextOffset)
	}
	wantKids := scalar[int](t, st, `SELECT count(*) FROM children c JOIN volunteer_assignments v ON v.class_id = c.class_id
		WHERE v.user_id = $1 AND c.archived_at IS NULL`, seed.DemoVoluntarioID)
	wantGuardians := scalar[int](t, st, `SELECT count(DISTINCT gc.guardian_id) FROM children c
		JOIN volunteer_assignments v ON v.class_id = c.class_id JOIN guardian_children gc ON gc.child_id = c.id
		WHERE v.user_id = $1 AND c.archived_at IS NULL`, seed.DemoVoluntarioID)
	if int(list.TotalChildren) != wantKids {
		t.Fatalf("class list shows %d children, the volunteer's classes hold %d", list.TotalChildren, wantKids)
	}

	child := scalar[uuid.UUID](t, st, `SELECT id FROM children WHERE church_id = $1 AND archived_at IS NULL ORDER BY id LIMIT 1`, seed.DemoChurchID)
	childGuardians := scalar[int](t, st, `SELECT count(*) FROM guardian_children WHERE child_id = $1`, child)
	call(t, st, seed.DemoAdminID, store.RoleAdmin, "leaked-client", capapi.CapRosterChild, map[string]any{"id": child.String()})

	detected := time.Now()
	vol, err := incident.Record(ctx, st, incident.Request{
		RecordedBy: "Encarregada de dados", Summary: "Phone of a volunteer stolen with the client signed in",
		Detected: detected, From: &start, Churches: []uuid.UUID{seed.DemoChurchID},
		ActorUser: seed.DemoVoluntarioID, ActorClient: "stolen-phone",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(vol.Churches) != 1 || vol.Churches[0].Children != wantKids || vol.Churches[0].Guardians != wantGuardians || vol.Churches[0].AuditEntries != 1 {
		t.Errorf("volunteer's reach: %+v, want %d children, %d guardians, 1 entry", vol.Churches, wantKids, wantGuardians)
	}
	for _, k := range []string{incident.KindChildShortName, incident.KindReligious, "health", "guardian_name"} {
		if !slices.Contains(vol.Kinds, k) {
			t.Errorf("volunteer's kinds %v lack %s", vol.Kinds, k)
		}
	}
	for _, k := range []string{"child_name", "birth_date", "guardian_phone"} {
		if slices.Contains(vol.Kinds, k) {
			t.Errorf("volunteer's kinds %v claim %s, which the role never receives", vol.Kinds, k)
		}
	}
	if !vol.RelevantRisk || vol.Basis != incident.ByAudit || !vol.Deadline.Equal(incident.Deadline(detected)) {
		t.Errorf("risk %v basis %s deadline %s", vol.RelevantRisk, vol.Basis, vol.Deadline)
	}
	total := scalar[int](t, st, `SELECT count(*) FROM children WHERE church_id = $1`, seed.DemoChurchID)
	if vol.Churches[0].ChildrenTotal != total {
		t.Errorf("children total %d, the church has %d", vol.Churches[0].ChildrenTotal, total)
	}

	adm, err := incident.Record(ctx, st, incident.Request{
		RecordedBy: "Encarregada de dados", Summary: "Client secret of the admin's integration published",
		Detected: time.Now(), From: &start, ActorClient: "leaked-client",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := adm.Churches; len(c) != 1 || c[0].Children != 1 || c[0].Guardians != childGuardians {
		t.Errorf("leaked client's reach: %+v, want 1 child and %d guardians", c, childGuardians)
	}
	for _, k := range []string{"child_name", "birth_date", "guardian_name", "guardian_phone"} {
		if !slices.Contains(adm.Kinds, k) {
			t.Errorf("roster_child's kinds %v lack %s", adm.Kinds, k)
		}
	}

	// The guardians to tell: the recorded reach, read again.
	subjects, err := incident.Subjects(ctx, st, vol.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(subjects) != wantGuardians {
		t.Errorf("%d guardians to notify, want %d", len(subjects), wantGuardians)
	}
	var buf bytes.Buffer
	if err := incident.WriteSubjectsCSV(&buf, subjects); err != nil {
		t.Fatal(err)
	}
	if rows, err := csv.NewReader(&buf).ReadAll(); err != nil || len(rows) != wantGuardians+1 || rows[1][1] == "" || rows[1][2] == "" {
		t.Errorf("subjects CSV: %v, %v", err, rows)
	}

	// Each church reached has its audit entries.
	n := scalar[int](t, st, `SELECT count(*) FROM audit_log WHERE capability = 'incident' AND church_id = $1 AND $2 = ANY (target_ids)`, seed.DemoChurchID, vol.ID)
	if n != 2 { // recorded, subjects
		t.Errorf("%d audit entries of the incident, want 2", n)
	}

	// The report never quotes the records it counts.
	var rep bytes.Buffer
	if err := incident.WriteReport(&rep, vol, time.Now()); err != nil {
		t.Fatal(err)
	}
	names := scalar[[]string](t, st, `SELECT array_agg(name) FROM (SELECT name FROM children WHERE church_id = $1 UNION ALL SELECT name FROM guardians WHERE church_id = $1) n`, seed.DemoChurchID)
	for _, nm := range names {
		if strings.Contains(rep.String(), nm) {
			t.Fatalf("the report quotes a name")
		}
	}
	for _, want := range []string{"Notification deadline", "II. Data subjects reached", "[sensitive / sensível]", "XII."} {
		if !strings.Contains(rep.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, rep.String())
		}
	}

	// Nothing reached: nothing recorded.
	_, err = incident.Record(ctx, st, incident.Request{RecordedBy: "x", Summary: "a client that never called",
		Detected: time.Now(), From: &start, ActorClient: "never-seen"})
	if !errors.Is(err, incident.ErrNothingReached) {
		t.Errorf("an actor without entries: %v", err)
	}
}

// TestWholeChurchAndTheRegistersRules: a leaked dump reaches everyone; the entry's facts
// cannot change and it cannot be deleted for five years, its follow-up can be completed, and
// requests' role cannot see the register at all.
func TestWholeChurchAndTheRegistersRules(t *testing.T) {
	st := storetest.NewSeeded(t, seed.Options{ChildrenPerChurch: 10, Months: 1})
	ctx := context.Background()
	detected := time.Now().Add(-10 * 24 * time.Hour)
	in, err := incident.Record(ctx, st, incident.Request{RecordedBy: "TI", Summary: "Backup shared through a public link",
		Detected: detected, Churches: []uuid.UUID{seed.DemoChurchID}, WholeChurch: true})
	if err != nil {
		t.Fatal(err)
	}
	kids := scalar[int](t, st, `SELECT count(*) FROM children WHERE church_id = $1`, seed.DemoChurchID)
	adults := scalar[int](t, st, `SELECT count(*) FROM guardians WHERE church_id = $1`, seed.DemoChurchID)
	if c := in.Churches[0]; c.Children != kids || c.Guardians != adults || c.ChildrenTotal != kids || in.Basis != incident.WholeChurch {
		t.Errorf("whole church: %+v, want %d children and %d guardians", c, kids, adults)
	}
	if !slices.Contains(in.Kinds, "health") || !slices.Contains(in.Kinds, "guardian_phone") {
		t.Errorf("a dump holds every kind: %v", in.Kinds)
	}
	var rep bytes.Buffer
	if err := incident.WriteReport(&rep, in, time.Now()); err != nil || !strings.Contains(rep.String(), "OVERDUE") {
		t.Errorf("ten days after knowing, unnotified: the report must say overdue (%v):\n%s", err, rep.String())
	}

	notified := detected.Add(48 * time.Hour)
	up, err := incident.Update(ctx, st, in.ID, incident.FollowUp{Measures: "Link revoked; backups encrypted", ANPDNotifiedAt: &notified})
	if err != nil {
		t.Fatal(err)
	}
	if up.Measures != "Link revoked; backups encrypted" || up.ANPDNotifiedAt == nil || up.Summary != in.Summary {
		t.Errorf("follow-up: %+v", up)
	}
	before := detected.Add(-time.Hour)
	if _, err := incident.Update(ctx, st, in.ID, incident.FollowUp{SubjectsNotified: &before}); err == nil {
		t.Error("a notification before the incident was known is accepted")
	}
	if _, err := incident.Update(ctx, st, in.ID, incident.FollowUp{}); err == nil {
		t.Error("an empty follow-up is accepted")
	}

	for _, sql := range []string{
		`UPDATE incidents SET summary = 'nothing happened here' WHERE id = $1`,
		`UPDATE incidents SET detected_at = now() WHERE id = $1`,
		`UPDATE incident_churches SET children = 0 WHERE incident_id = $1`,
		`DELETE FROM incident_churches WHERE incident_id = $1`,
		`DELETE FROM incidents WHERE id = $1`,
	} {
		err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error { _, err := tx.Exec(ctx, sql, in.ID); return err })
		if err == nil {
			t.Errorf("%s: accepted", sql)
		}
	}
	err = st.InTx(ctx, store.Caller{ChurchID: seed.DemoChurchID, UserID: seed.DemoAdminID, Role: store.RoleAdmin},
		func(ctx context.Context, tx pgx.Tx) error {
			var n int
			return tx.QueryRow(ctx, `SELECT count(*) FROM incidents`).Scan(&n)
		})
	if err == nil {
		t.Error("a request's role reads the register")
	}
	list, err := incident.List(ctx, st, nil)
	if err != nil || len(list) != 1 || list[0].ID != in.ID || list[0].Children != kids {
		t.Errorf("list: %v %+v", err, list)
	}
}

func TestRequestRefusals(t *testing.T) {
	st := storetest.NewSeeded(t, seed.Options{ChildrenPerChurch: 2, Months: 1})
	now := time.Now()
	past, future := now.Add(-time.Hour), now.Add(time.Hour)
	ok := incident.Request{RecordedBy: "TI", Summary: "Something happened here", Detected: now}
	for _, tc := range []struct {
		name string
		edit func(*incident.Request)
		want string
	}{
		{"no reach", func(*incident.Request) {}, "say what the incident reached"},
		{"no recorder", func(r *incident.Request) { r.RecordedBy = " "; r.WholeChurch = true }, "--by"},
		{"short summary", func(r *incident.Request) { r.Summary = "oops"; r.WholeChurch = true }, "--summary"},
		{"future", func(r *incident.Request) { r.Detected = future; r.WholeChurch = true }, "future"},
		{"actor without --from", func(r *incident.Request) { r.ActorClient = "x" }, "--from"},
		{"actor and whole church", func(r *incident.Request) { r.ActorClient = "x"; r.From = &past; r.WholeChurch = true }, "not both"},
		{"whole church without churches", func(r *incident.Request) { r.WholeChurch = true }, "--church"},
		{"user without its church", func(r *incident.Request) { r.ActorUser = seed.DemoAdminID; r.From = &past }, "--church"},
		{"from after until", func(r *incident.Request) { r.From, r.Until = &now, &past; r.ActorClient = "x" }, "--from is after --until"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ok
			tc.edit(&r)
			_, err := incident.Record(context.Background(), st, r)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error naming %q", err, tc.want)
			}
		})
	}
	if l, err := incident.List(context.Background(), st, nil); err != nil || len(l) != 0 {
		t.Errorf("refused requests recorded something: %v %v", err, l)
	}
}
