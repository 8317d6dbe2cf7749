package seed_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// until pins the history so that runs on different days compare equal.
var until = time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC) // a Wednesday

func newPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	return storetest.Pool(t, storetest.NewDatabase(t))
}

var ignoreElapsed = cmpopts.IgnoreFields(seed.Report{}, "Elapsed")

func TestDemoSeedsOnceAndIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t)
	opts := seed.Options{Until: until}

	r, err := seed.Run(ctx, pool, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("demo seed: %s", r)
	if r.Churches != 1 || r.Classes != 6 || r.Children != seed.DefaultChildren || r.ChurchesSkipped != 0 {
		t.Errorf("report %s: want 1 church, 6 classes, %d children", r, seed.DefaultChildren)
	}
	if r.ServiceDays != 26 {
		t.Errorf("service days = %d, want the 26 Sundays of six months", r.ServiceDays)
	}
	if r.Consents != r.Children || r.GuardianLinks < r.Children || r.Guardians < r.Children/3 {
		t.Errorf("report %s: every child needs a consent and a guardian", r)
	}
	if r.Checkins < r.Children*r.ServiceDays/3 || r.Checkins > r.Children*r.ServiceDays {
		t.Errorf("checkins = %d: implausible attendance", r.Checkins)
	}
	if r.Users < 10 || r.VolunteerAssignments != 8 {
		t.Errorf("report %s: want staff, volunteers and guardian accounts", r)
	}

	again, err := seed.Run(ctx, pool, opts)
	if err != nil {
		t.Fatal(err)
	}
	if again.Rows() != 0 || again.ChurchesSkipped != 1 {
		t.Errorf("second run inserted %s, want a no-op", again)
	}

	// Invariants the schema cannot express.
	checks := []struct{ name, sql string }{
		{"children without a guardian", `SELECT count(*) FROM children c WHERE NOT EXISTS (SELECT 1 FROM guardian_children gc WHERE gc.child_id = c.id)`},
		{"children without consent", `SELECT count(*) FROM children c WHERE NOT EXISTS (SELECT 1 FROM consent_records cr WHERE cr.child_id = c.id)`},
		{"children outside their class's ages", `SELECT count(*) FROM children c JOIN classes cl ON cl.id = c.class_id
			WHERE date_part('year', age(DATE '2026-06-10', c.birth_date)) NOT BETWEEN cl.min_age AND cl.max_age`},
		{"open check-ins", `SELECT count(*) FROM checkins WHERE checked_out_at IS NULL`},
		{"check-ins before birth", `SELECT count(*) FROM checkins ck JOIN children c ON c.id = ck.child_id WHERE ck.service_date <= c.birth_date`},
		{"services not on a Sunday", `SELECT count(*) FROM service_days WHERE extract(dow FROM service_date) <> 0`},
		{"guardian accounts that are not RESPONSAVEL", `SELECT count(*) FROM guardians g JOIN users u ON u.id = g.user_id WHERE u.role <> 'RESPONSAVEL'`},
		{"phones with a real area code", `SELECT count(*) FROM guardians WHERE phone NOT LIKE '+55 (00) %'`},
	}
	for _, c := range checks {
		var n int
		if err := pool.QueryRow(ctx, c.sql).Scan(&n); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if n != 0 {
			t.Errorf("%s: %d", c.name, n)
		}
	}
	var last time.Time
	if err := pool.QueryRow(ctx, `SELECT max(service_date) FROM service_days`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 6, 7, 0, 0, 0, 0, time.UTC); !last.Equal(want) {
		t.Errorf("last service %s, want the Sunday before Until, %s", last, want)
	}
}

// fingerprint hashes every seeded table's full contents, in id order.
func fingerprint(t *testing.T, pool *pgxpool.Pool) map[string]string {
	t.Helper()
	tables := map[string]string{
		"churches": "id", "users": "id", "classes": "id", "volunteer_assignments": "user_id, class_id",
		"children": "id", "guardians": "id", "guardian_children": "guardian_id, child_id",
		"consent_records": "id", "service_days": "id", "checkins": "id",
	}
	out := map[string]string{}
	for tbl, order := range tables {
		var sum string
		if err := pool.QueryRow(context.Background(),
			"SELECT coalesce(md5(string_agg(t::text, '|' ORDER BY "+order+")), '') FROM "+tbl+" t").Scan(&sum); err != nil {
			t.Fatal(err)
		}
		out[tbl] = sum
	}
	return out
}

func TestSeedIsDeterministic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	opts := seed.Options{Churches: 2, Months: 2, ChildrenPerChurch: 60, Until: until}
	a, b := newPool(t), newPool(t)
	ra, err := seed.Run(ctx, a, opts)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := seed.Run(ctx, b, opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ra, rb, ignoreElapsed); diff != "" {
		t.Errorf("reports differ (-first +second):\n%s", diff)
	}
	if diff := cmp.Diff(fingerprint(t, a), fingerprint(t, b)); diff != "" {
		t.Errorf("table contents differ between two databases (-first +second):\n%s", diff)
	}

	// Another seed gives other data (the well-known demo ids stay).
	c := newPool(t)
	other := opts
	other.Seed = 42
	if _, err := seed.Run(ctx, c, other); err != nil {
		t.Fatal(err)
	}
	if fa, fc := fingerprint(t, a), fingerprint(t, c); fa["children"] == fc["children"] {
		t.Error("a different seed produced the same children")
	}
}

func TestSeedSeveralChurches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t)
	small := seed.Options{Months: 1, ChildrenPerChurch: 30, Until: until}

	one, err := seed.Run(ctx, pool, small)
	if err != nil {
		t.Fatal(err)
	}
	three := small
	three.Churches = 3
	r, err := seed.Run(ctx, pool, three)
	if err != nil {
		t.Fatal(err)
	}
	if r.Churches != 2 || r.ChurchesSkipped != 1 || r.Classes != 12 || r.Children != 60 {
		t.Errorf("Churches: 3 after 1: %s, want two more churches and the demo one skipped", r)
	}
	if again, err := seed.Run(ctx, pool, three); err != nil || again.Rows() != 0 || again.ChurchesSkipped != 3 {
		t.Errorf("Churches: 3 again: %s, %v; want a no-op", again, err)
	}
	var churches, slugs, admins int
	err = pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT slug),
		(SELECT count(*) FROM users WHERE role = 'ADMIN' AND email LIKE 'admin@%') FROM churches`).Scan(&churches, &slugs, &admins)
	if err != nil {
		t.Fatal(err)
	}
	if churches != 3 || slugs != 3 || admins != 3 {
		t.Errorf("churches %d, slugs %d, admins %d; want 3 each", churches, slugs, admins)
	}
	if one.Churches != 1 {
		t.Errorf("first run: %s", one)
	}
}

func TestDemoAccountsUnderRowLevelSecurity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewSeeded(t, seed.Options{Churches: 2, Until: until})
	type seen struct{ Churches, Children, Checkins, Guardians, Classes int }
	look := func(role string, user [16]byte) seen {
		var v seen
		c := store.Caller{ChurchID: seed.DemoChurchID, UserID: user, Role: role}
		err := s.InTx(ctx, c, func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM churches), (SELECT count(*) FROM children),
				(SELECT count(*) FROM checkins), (SELECT count(*) FROM guardians),
				(SELECT count(DISTINCT class_id) FROM v_checkins)`).Scan(&v.Churches, &v.Children, &v.Checkins, &v.Guardians, &v.Classes)
		})
		if err != nil {
			t.Fatalf("%s: %v", role, err)
		}
		return v
	}
	admin := look(store.RoleAdmin, seed.DemoAdminID)
	if admin.Churches != 1 || admin.Children != seed.DefaultChildren || admin.Classes != 6 {
		t.Errorf("demo admin sees %+v, want the whole demo church only", admin)
	}
	vol := look(store.RoleVoluntario, seed.DemoVoluntarioID)
	if vol.Classes != 2 || vol.Children == 0 || vol.Children >= admin.Children || vol.Checkins >= admin.Checkins {
		t.Errorf("demo volunteer sees %+v, want Jardim and Primários only", vol)
	}
	resp := look(store.RoleResponsavel, seed.DemoResponsavelID)
	if resp.Children != 2 || resp.Guardians != 2 || resp.Checkins == 0 {
		t.Errorf("demo guardian sees %+v, want their two children and those children's two guardians", resp)
	}

	// The demo accounts log in with the demo password, through the login function.
	for _, email := range []string{seed.DemoAdminEmail, seed.DemoCadastroEmail, seed.DemoVoluntarioEmail, seed.DemoResponsavelEmail} {
		err := s.InTx(ctx, store.Anonymous, func(ctx context.Context, tx pgx.Tx) error {
			var hash string
			if err := tx.QueryRow(ctx, `SELECT password_hash FROM app_login_candidates($1)`, email).Scan(&hash); err != nil {
				return err
			}
			if ok, err := store.CheckPassword(hash, seed.DemoPassword); !ok || err != nil {
				t.Errorf("%s: demo password rejected (%v)", email, err)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", email, err)
		}
	}
}

func TestOptionsAreValidated(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	for _, o := range []seed.Options{
		{Churches: -1}, {Churches: 10_001}, {Months: -1}, {Months: 241}, {ChildrenPerChurch: 1},
	} {
		if _, err := seed.Run(context.Background(), pool, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

// TestSeedScale measures a large run; it runs only when NEEMIAS_SEED_SCALE is set:
//
//	NEEMIAS_SEED_SCALE=100 go test ./internal/seed -run TestSeedScale -v -timeout 30m
func TestSeedScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("NEEMIAS_SEED_SCALE"))
	if n == 0 {
		t.Skip("set NEEMIAS_SEED_SCALE=<churches> to run")
	}
	pool := newPool(t)
	r, err := seed.Run(context.Background(), pool, seed.Options{Churches: n, Until: until})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("scale %d: %s (%.0f rows/s)", n, r, float64(r.Rows())/r.Elapsed.Seconds())
}

// TestSeedLeavesStatisticsCurrent: a seeded database has planner statistics for the tables it
// loaded (with autovacuum off, nothing else would ever make them).
func TestSeedLeavesStatisticsCurrent(t *testing.T) {
	t.Parallel()
	st := storetest.NewSeeded(t, seed.Options{ChildrenPerChurch: 20, Months: 1})
	ctx := context.Background()
	_, _ = st.Pool().Exec(ctx, `SELECT pg_stat_force_next_flush()`)
	var missing []string
	rows, err := st.Pool().Query(ctx, `SELECT relname FROM pg_stat_user_tables
		WHERE relname IN ('children', 'checkins', 'classes', 'guardians') AND last_analyze IS NULL AND last_autoanalyze IS NULL`)
	if err != nil {
		t.Fatal(err)
	}
	missing, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Errorf("no statistics after seeding for %v", missing)
	}
}
