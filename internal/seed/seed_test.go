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
	// The report counts what is in the tables.
	var pickups, restrictions, trusted int64
	if err := pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE NOT authorized), count(*) FILTER (WHERE authorized)
		FROM pickup_adults`).Scan(&pickups, &restrictions, &trusted); err != nil {
		t.Fatal(err)
	}
	if r.PickupAdults != pickups || restrictions != 1 || trusted < 5 || trusted > r.Children/5 {
		t.Errorf("report %s: %d pick-up entries in the table, %d restrictions, %d trusted adults; want one restriction and a few trusted adults",
			r, pickups, restrictions, trusted)
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
		{"pick-up phones with a real area code", `SELECT count(*) FROM pickup_adults WHERE phone NOT LIKE '+55 (00) %'`},
		// Who took each child home: a guardian of the child or an authorized entry of its
		// list, under the name they have there; never both, never nobody.
		{"check-outs without who picked up", `SELECT count(*) FROM checkins WHERE picked_up_by_name IS NULL
			OR (picked_up_by_guardian IS NULL) = (picked_up_by_adult IS NULL)`},
		{"picked up by a guardian of another child", `SELECT count(*) FROM checkins ck JOIN guardians g ON g.id = ck.picked_up_by_guardian
			WHERE g.name <> ck.picked_up_by_name
			   OR NOT EXISTS (SELECT 1 FROM guardian_children gc WHERE gc.guardian_id = g.id AND gc.child_id = ck.child_id)`},
		{"picked up by an adult not on the list", `SELECT count(*) FROM checkins ck JOIN pickup_adults pa ON pa.id = ck.picked_up_by_adult
			WHERE pa.name <> ck.picked_up_by_name OR pa.child_id <> ck.child_id OR NOT pa.authorized OR pa.created_at > ck.checked_out_at`},
		{"picked up by a restricted adult", `SELECT count(*) FROM checkins ck JOIN pickup_adults r ON r.child_id = ck.child_id AND NOT r.authorized
			WHERE app_fold_name(r.name) = app_fold_name(ck.picked_up_by_name)`},
		{"restrictions without a note", `SELECT count(*) FROM pickup_adults WHERE NOT authorized AND coalesce(btrim(note), '') = ''`},
		{"pick-up entries that repeat a guardian", `SELECT count(*) FROM pickup_adults pa JOIN guardian_children gc ON gc.child_id = pa.child_id
			JOIN guardians g ON g.id = gc.guardian_id WHERE app_fold_name(g.name) = app_fold_name(pa.name)`},
		{"entries added by someone who may not", `SELECT count(*) FROM pickup_adults pa JOIN users u ON u.id = pa.created_by
			WHERE u.role NOT IN ('ADMIN', 'CADASTRO') AND (NOT pa.authorized OR u.role <> 'RESPONSAVEL'
			   OR NOT EXISTS (SELECT 1 FROM guardians g JOIN guardian_children gc ON gc.guardian_id = g.id
			                  WHERE g.user_id = u.id AND gc.child_id = pa.child_id))`},
		{"handles not drawn by app_child_handle from the top of its range", `SELECT count(*) FROM children c
			WHERE NOT EXISTS (SELECT 1 FROM generate_series(1073741823 - 299, 1073741823) n WHERE app_child_handle(n) = c.handle)`},
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

	// "Who picked up X?" answers for the demo guardian's children: by her, their father or
	// their grandmother, as on the list.
	var byGuardian, byTrusted int
	if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE ck.picked_up_by_guardian IS NOT NULL), count(*) FILTER (WHERE ck.picked_up_by_adult IS NOT NULL)
		FROM checkins ck JOIN guardian_children gc ON gc.child_id = ck.child_id JOIN guardians g ON g.id = gc.guardian_id
		WHERE g.user_id = $1`, seed.DemoResponsavelID).Scan(&byGuardian, &byTrusted); err != nil {
		t.Fatal(err)
	}
	if byGuardian == 0 || byTrusted == 0 {
		t.Errorf("the demo guardian's children were picked up %d times by a guardian, %d by their grandmother; want both", byGuardian, byTrusted)
	}
	// The restriction is on a child of Jardim, a class of the demo volunteer's.
	var class string
	if err := pool.QueryRow(ctx, `SELECT cl.name FROM pickup_adults r JOIN children c ON c.id = r.child_id JOIN classes cl ON cl.id = c.class_id
		WHERE NOT r.authorized`).Scan(&class); err != nil || class != "Jardim" {
		t.Errorf("the restriction's child is in %q (%v), want Jardim", class, err)
	}
	// Children enrolled through the app afterwards draw handles from the sequence: no clash.
	if _, err := pool.Exec(ctx, `INSERT INTO children (church_id, name, birth_date) SELECT $1, 'Criança Nova ' || n, DATE '2022-01-01'
		FROM generate_series(1, 50) n`, seed.DemoChurchID); err != nil {
		t.Errorf("children enrolled after the seed: %v", err)
	}
}

// fingerprint hashes every seeded table's full contents, in id order.
func fingerprint(t *testing.T, pool *pgxpool.Pool) map[string]string {
	t.Helper()
	tables := map[string]string{
		"churches": "id", "users": "id", "classes": "id", "volunteer_assignments": "user_id, class_id",
		"children": "id", "guardians": "id", "guardian_children": "guardian_id, child_id",
		"consent_records": "id", "pickup_adults": "id", "service_days": "id", "checkins": "id",
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
	type seen struct{ Churches, Children, Checkins, Guardians, Classes, Trusted, Restrictions int }
	look := func(role string, user [16]byte) seen {
		var v seen
		c := store.Caller{ChurchID: seed.DemoChurchID, UserID: user, Role: role}
		err := s.InTx(ctx, c, func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM churches), (SELECT count(*) FROM children),
				(SELECT count(*) FROM checkins), (SELECT count(*) FROM guardians),
				(SELECT count(DISTINCT class_id) FROM v_checkins),
				(SELECT count(*) FROM pickup_adults WHERE authorized), (SELECT count(*) FROM pickup_adults WHERE NOT authorized)`).
				Scan(&v.Churches, &v.Children, &v.Checkins, &v.Guardians, &v.Classes, &v.Trusted, &v.Restrictions)
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
	// The volunteer releases the children of Jardim and Primários: their trusted adults and the
	// restriction (on a child of Jardim).
	if admin.Restrictions != 1 || vol.Restrictions != 1 || vol.Trusted == 0 || vol.Trusted >= admin.Trusted {
		t.Errorf("pick-up entries: admin %+v, volunteer %+v; want the restriction for both, the volunteer's classes' trusted adults", admin, vol)
	}
	resp := look(store.RoleResponsavel, seed.DemoResponsavelID)
	if resp.Children != 2 || resp.Guardians != 2 || resp.Checkins == 0 {
		t.Errorf("demo guardian sees %+v, want their two children and those children's two guardians", resp)
	}
	if resp.Trusted != 2 || resp.Restrictions != 0 {
		t.Errorf("demo guardian sees %+v pick-up entries, want the grandmother on both children's lists and no restriction", resp)
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
