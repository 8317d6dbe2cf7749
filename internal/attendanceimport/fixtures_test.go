package attendanceimport_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/internal/attendanceimport"
	"github.com/neemias/neemias-mcp/internal/onboard"
	"github.com/neemias/neemias-mcp/internal/store"
)

// kid is a child of the fixture church.
type kid struct {
	name, birth string
	archived    bool
}

// fixtureKids are the children the fixtures name: two Ana Souza (the homonyms), names with
// accents, a child who has left (archived).
var fixtureKids = []kid{
	{"Ana Souza", "2019-03-14", false},
	{"Ana Souza", "2020-08-02", false},
	{"João Conceição", "2018-03-15", false},
	{"Cecília Fictícia", "2021-07-30", false},
	{"Bento Teste", "2017-01-05", false},
	{"Iaçanã Ávila", "2019-12-25", false},
	{"Davi Arquivado", "2016-05-05", true},
}

// church creates a church (time zone America/Sao_Paulo) with the usual classes, an archived
// one, and kids; it returns the children's handles by name and birth date.
func church(t testing.TB, st *store.Store, slug string, kids []kid) map[string]string {
	t.Helper()
	ctx := context.Background()
	if _, err := onboard.CreateChurch(ctx, st, onboard.NewChurch{Name: "Igreja " + slug, Slug: slug}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []onboard.NewClass{{Name: "Berçário", MinAge: 0, MaxAge: 2}, {Name: "Maternal", MinAge: 3, MaxAge: 5},
		{Name: "Primários", MinAge: 6, MaxAge: 8}, {Name: "Juniores", MinAge: 9, MaxAge: 11}, {Name: "Adolescentes", MinAge: 12, MaxAge: 14}} {
		if _, err := onboard.AddClass(ctx, st, slug, c); err != nil {
			t.Fatal(err)
		}
	}
	handles := map[string]string{}
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE classes SET archived_at = now() WHERE name = 'Adolescentes' AND church_id = (SELECT id FROM churches WHERE slug = $1)`, slug); err != nil {
			return err
		}
		var names, births []string
		var archived []bool
		for _, k := range kids {
			names, births, archived = append(names, k.name), append(births, k.birth), append(archived, k.archived)
		}
		rows, err := tx.Query(ctx, `INSERT INTO children (church_id, name, birth_date, archived_at)
			SELECT ch.id, u.name, u.birth::date, CASE WHEN u.archived THEN now() END
			FROM churches ch, unnest($2::text[], $3::text[], $4::bool[]) AS u(name, birth, archived) WHERE ch.slug = $1
			RETURNING name || ' ' || birth_date, handle`, slug, names, births, archived)
		if err != nil {
			return err
		}
		var key, h string
		_, err = pgx.ForEachRow(rows, []any{&key, &h}, func() error { handles[key] = h; return nil })
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return handles
}

// checkins is a church's check-ins row by row: child, day, class, check-in and check-out
// times in the church's zone, and who checked the child in (the import account or another).
func checkins(t testing.TB, st *store.Store, slug string) []string {
	t.Helper()
	var out []string
	err := st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			SELECT c.name || ' ' || ck.service_date || ' ' || cl.name || ' ' || to_char(ck.checked_in_at AT TIME ZONE ch.time_zone, 'HH24:MI')
			       || '-' || coalesce(to_char(ck.checked_out_at AT TIME ZONE ch.time_zone, 'HH24:MI'), '')
			       || CASE WHEN u.email = $2 THEN ' imported' ELSE ' live' END
			FROM checkins ck JOIN churches ch ON ch.id = ck.church_id JOIN children c ON c.id = ck.child_id
			JOIN classes cl ON cl.id = ck.class_id JOIN users u ON u.id = ck.checked_in_by
			WHERE ch.slug = $1 ORDER BY 1`, slug, attendanceimport.ImportAccountEmail)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// snapshot is every check-in, service day and account of a church with its ids and all its
// columns, to show that a run changed nothing.
func snapshot(t testing.TB, st *store.Store, slug string) []string {
	t.Helper()
	var out []string
	err := st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			SELECT 'checkin ' || row_to_json(ck)::text FROM checkins ck JOIN churches ch ON ch.id = ck.church_id WHERE ch.slug = $1
			UNION ALL SELECT 'day ' || row_to_json(sd)::text FROM service_days sd JOIN churches ch ON ch.id = sd.church_id WHERE ch.slug = $1
			UNION ALL SELECT 'user ' || u.id || ' ' || u.email || ' ' || u.role || ' ' || (u.disabled_at IS NOT NULL) FROM users u
				JOIN churches ch ON ch.id = u.church_id WHERE ch.slug = $1
			ORDER BY 1`, slug)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func importFile(t testing.TB, st *store.Store, path string, opts attendanceimport.Options) *attendanceimport.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return importBytes(t, st, b, opts)
}

func importBytes(t testing.TB, st *store.Store, b []byte, opts attendanceimport.Options) *attendanceimport.Report {
	t.Helper()
	rep, err := attendanceimport.Run(context.Background(), st, bytes.NewReader(b), opts)
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	return rep
}

// wantRefused checks the refused rows: each with the English reason containing want's text,
// and a Portuguese one.
func wantRefused(t *testing.T, rep *attendanceimport.Report, want map[int]string) {
	t.Helper()
	got := map[int]string{}
	for _, r := range rep.Refused {
		got[r.Line] = r.EN
		if r.PT == "" {
			t.Errorf("row %d: no Portuguese reason", r.Line)
		}
	}
	for line, w := range want {
		if !strings.Contains(got[line], w) {
			t.Errorf("row %d: refused with %q, want %q", line, got[line], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("refused rows %v, want those of %v", got, want)
	}
}

// noPII checks that the report, in every language, quotes none of the cells.
func noPII(t *testing.T, rep *attendanceimport.Report, cells ...string) {
	t.Helper()
	for _, lang := range []string{"", "pt", "en"} {
		var text bytes.Buffer
		if err := rep.WriteText(&text, lang); err != nil {
			t.Fatal(err)
		}
		for _, c := range cells {
			if strings.Contains(text.String(), c) {
				t.Errorf("the report (%q) quotes %q:\n%s", lang, c, text.String())
			}
		}
	}
}

// fixture imports a testdata file, checks the check-ins row by row, imports it again and
// checks that nothing changed and every imported row is now present.
func fixture(t *testing.T, st *store.Store, file string, opts attendanceimport.Options, want []string) *attendanceimport.Report {
	t.Helper()
	rep := importFile(t, st, "testdata/"+file, opts)
	if diff := cmp.Diff(want, checkins(t, st, opts.Church)); diff != "" {
		t.Errorf("%s: check-ins after the import (-want +got):\n%s", file, diff)
	}
	before := snapshot(t, st, opts.Church)
	again := importFile(t, st, "testdata/"+file, opts)
	if diff := cmp.Diff(before, snapshot(t, st, opts.Church)); diff != "" {
		t.Errorf("%s: re-importing changed rows (-before +after):\n%s", file, diff)
	}
	if again.Imported != 0 || again.ServiceDays != 0 || again.Present != rep.Imported+rep.Present || len(again.Refused) != len(rep.Refused) {
		t.Errorf("%s: re-import: imported %d, service days %d, present %d (want %d), refused %d (want %d)", file,
			again.Imported, again.ServiceDays, again.Present, rep.Imported+rep.Present, len(again.Refused), len(rep.Refused))
	}
	return rep
}

func date(s string) time.Time {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return d
}
