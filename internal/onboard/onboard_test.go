package onboard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/internal/onboard"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// auditActions returns the operator actions of the audit log, oldest first, as
// "church-slug action outcome client" strings.
func auditActions(t *testing.T, st *store.Store) []string {
	t.Helper()
	var out []string
	err := st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT coalesce(ch.slug, '-') || ' ' || a.action || ' ' || a.outcome || ' ' || a.client_id
				|| CASE WHEN a.user_id IS NULL THEN '' ELSE ' WITH-USER' END
			FROM audit_log a LEFT JOIN churches ch ON ch.id = a.church_id
			WHERE a.capability = 'operator' ORDER BY a.id`)
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

func TestOnboardChurch(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := onboard.CreateChurch(ctx, st, onboard.NewChurch{Name: "  Igreja   Central ", Slug: "central"})
	must(err)
	other, err := onboard.CreateChurch(ctx, st, onboard.NewChurch{Name: "Outra", Slug: "outra", TimeZone: "America/Manaus"})
	must(err)
	if other.TimeZone != "America/Manaus" {
		t.Errorf("time zone %q", other.TimeZone)
	}
	_, err = onboard.AddUser(ctx, st, "central", onboard.NewUser{Email: " Pastora@Central.Example ", Role: "admin"})
	must(err)
	_, err = onboard.AddUser(ctx, st, "central", onboard.NewUser{Email: "tio@central.example", Role: "VOLUNTARIO", DisplayName: "Tio João"})
	must(err)
	_, err = onboard.AddUser(ctx, st, "central", onboard.NewUser{Email: "sec@central.example", Role: "CADASTRO"})
	must(err)
	// The same email in another church is another account.
	_, err = onboard.AddUser(ctx, st, "outra", onboard.NewUser{Email: "tio@central.example", Role: "VOLUNTARIO"})
	must(err)
	_, err = onboard.AddClass(ctx, st, "central", onboard.NewClass{Name: "Primários", MinAge: 6, MaxAge: 8})
	must(err)
	changed, err := onboard.AssignVolunteer(ctx, st, "central", "tio@central.example", "Primários")
	must(err)
	again, err := onboard.AssignVolunteer(ctx, st, "central", "TIO@central.example", "Primários")
	must(err)
	if !changed || again {
		t.Errorf("assign: changed %v then %v, want true then false", changed, again)
	}
	must(onboard.SetPassword(ctx, st, "central", "pastora@central.example", "correct horse battery"))

	users, err := onboard.ListUsers(ctx, st, "central")
	must(err)
	var got []string
	for _, u := range users {
		got = append(got, u.Email+" "+u.Role+" "+u.DisplayName+map[bool]string{true: " pw", false: ""}[u.HasPassword])
	}
	want := []string{"pastora@central.example ADMIN pastora pw", "sec@central.example CADASTRO sec", "tio@central.example VOLUNTARIO Tio João"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("users:\n got %q\nwant %q", got, want)
	}
	classes, err := onboard.ListClasses(ctx, st, "central")
	must(err)
	if len(classes) != 1 || classes[0].Volunteers != 1 {
		t.Errorf("classes %+v", classes)
	}
	if cs, err := onboard.ListClasses(ctx, st, "outra"); err != nil || len(cs) != 0 {
		t.Errorf("the other church's classes: %v %v", cs, err)
	}

	// The local password works the way the login page checks it.
	var hash string
	must(st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT password_hash FROM users WHERE email = 'pastora@central.example'`).Scan(&hash)
	}))
	if ok, err := store.CheckPassword(hash, "correct horse battery"); !ok || err != nil {
		t.Errorf("password does not check: %v %v", ok, err)
	}

	changed, err = onboard.UnassignVolunteer(ctx, st, "central", "tio@central.example", "Primários")
	must(err)
	if !changed {
		t.Error("unassign changed nothing")
	}
	// The last ADMIN stays; another may go.
	if _, _, err := onboard.DisableUser(ctx, st, "central", "pastora@central.example"); err == nil || !strings.Contains(err.Error(), "last enabled ADMIN") {
		t.Errorf("disabling the last ADMIN: %v", err)
	}
	_, changed, err = onboard.DisableUser(ctx, st, "central", "sec@central.example")
	must(err)
	_, again, err = onboard.DisableUser(ctx, st, "central", "sec@central.example")
	must(err)
	if !changed || again {
		t.Errorf("disable: changed %v then %v", changed, again)
	}

	wantAudit := []string{
		"central church.create allowed neemias-mcp-cli",
		"outra church.create allowed neemias-mcp-cli",
		"central user.add allowed neemias-mcp-cli",
		"central user.add allowed neemias-mcp-cli",
		"central user.add allowed neemias-mcp-cli",
		"outra user.add allowed neemias-mcp-cli",
		"central class.add allowed neemias-mcp-cli",
		"central volunteer.assign allowed neemias-mcp-cli",
		"central user.set_password allowed neemias-mcp-cli",
		"central volunteer.unassign allowed neemias-mcp-cli",
		"central user.disable allowed neemias-mcp-cli",
	}
	if got := auditActions(t, st); strings.Join(got, "\n") != strings.Join(wantAudit, "\n") {
		t.Errorf("audit log:\n got %q\nwant %q", got, wantAudit)
	}
}

// TestOnboardRefusals: what the spec's roles and the schema refuse is refused with a message
// that says what to do, and leaves nothing behind (no row, no audit entry).
func TestOnboardRefusals(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	if _, err := onboard.CreateChurch(ctx, st, onboard.NewChurch{Name: "Central", Slug: "central"}); err != nil {
		t.Fatal(err)
	}
	for _, step := range []func() error{
		func() error {
			_, err := onboard.AddUser(ctx, st, "central", onboard.NewUser{Email: "admin@c.example", Role: "ADMIN"})
			return err
		},
		func() error {
			_, err := onboard.AddUser(ctx, st, "central", onboard.NewUser{Email: "sec@c.example", Role: "CADASTRO"})
			return err
		},
		func() error {
			_, err := onboard.AddClass(ctx, st, "central", onboard.NewClass{Name: "Juniores", MinAge: 9, MaxAge: 11})
			return err
		},
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	before := len(auditActions(t, st))
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{"slug taken", func() error {
			_, err := onboard.CreateChurch(ctx, st, onboard.NewChurch{Name: "X", Slug: "central"})
			return err
		}, `a church with slug "central" exists already`},
		{"bad slug", func() error {
			_, err := onboard.CreateChurch(ctx, st, onboard.NewChurch{Name: "X", Slug: "Igreja Central"})
			return err
		}, "lower-case letters"},
		{"unknown time zone", func() error {
			_, err := onboard.CreateChurch(ctx, st, onboard.NewChurch{Name: "X", Slug: "x", TimeZone: "Brasil/Brasilia"})
			return err
		}, "not a known IANA time zone"},
		{"no name", func() error {
			_, err := onboard.CreateChurch(ctx, st, onboard.NewChurch{Name: "  ", Slug: "x"})
			return err
		}, "--name"},
		{"unknown church", func() error {
			_, err := onboard.AddUser(ctx, st, "nenhuma", onboard.NewUser{Email: "a@b.example", Role: "ADMIN"})
			return err
		}, `no church with slug "nenhuma"`},
		{"role not in the spec", func() error {
			_, err := onboard.AddUser(ctx, st, "central", onboard.NewUser{Email: "a@b.example", Role: "PASTOR"})
			return err
		}, "use one of ADMIN, CADASTRO, VOLUNTARIO, RESPONSAVEL"},
		{"not an email", func() error {
			_, err := onboard.AddUser(ctx, st, "central", onboard.NewUser{Email: "Ana <ana@b.example>", Role: "ADMIN"})
			return err
		}, "is not an email address"},
		{"email taken", func() error {
			_, err := onboard.AddUser(ctx, st, "central", onboard.NewUser{Email: "SEC@c.example", Role: "ADMIN"})
			return err
		}, `has an account with email "sec@c.example" already`},
		{"class name taken", func() error {
			_, err := onboard.AddClass(ctx, st, "central", onboard.NewClass{Name: "Juniores", MinAge: 9, MaxAge: 12})
			return err
		}, "has a class named"},
		{"age range upside down", func() error {
			_, err := onboard.AddClass(ctx, st, "central", onboard.NewClass{Name: "X", MinAge: 8, MaxAge: 6})
			return err
		}, "is above --max-age"},
		{"age out of range", func() error {
			_, err := onboard.AddClass(ctx, st, "central", onboard.NewClass{Name: "X", MinAge: 0, MaxAge: 30})
			return err
		}, "0 to 18"},
		{"assign a non-volunteer", func() error {
			_, err := onboard.AssignVolunteer(ctx, st, "central", "sec@c.example", "Juniores")
			return err
		}, "only VOLUNTARIO accounts are assigned"},
		{"assign an unknown account", func() error {
			_, err := onboard.AssignVolunteer(ctx, st, "central", "nobody@c.example", "Juniores")
			return err
		}, `has no account with email "nobody@c.example"`},
		{"short password", func() error {
			return onboard.SetPassword(ctx, st, "central", "admin@c.example", "curta")
		}, "at least 10 characters"},
		{"last admin", func() error {
			_, _, err := onboard.DisableUser(ctx, st, "central", "admin@c.example")
			return err
		}, "last enabled ADMIN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
	if after := len(auditActions(t, st)); after != before {
		t.Errorf("refused operations wrote %d audit entries", after-before)
	}
	users, err := onboard.ListUsers(ctx, st, "central")
	if err != nil || len(users) != 2 {
		t.Errorf("refusals left users behind: %d %v", len(users), err)
	}
}

// TestConsentTexts: a church registers versions of its consent term once each; they are
// listed oldest first, audited, and another church's texts are its own.
func TestConsentTexts(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	for _, slug := range []string{"central", "outra"} {
		if _, err := onboard.CreateChurch(ctx, st, onboard.NewChurch{Name: slug, Slug: slug}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := onboard.AddConsentText(ctx, st, "central", "termo-2025-01", "  Termo   LGPD 2025 "); err != nil {
		t.Fatal(err)
	}
	if _, err := onboard.AddConsentText(ctx, st, "central", "v2", "Termo LGPD 2026"); err != nil {
		t.Fatal(err)
	}
	if _, err := onboard.AddConsentText(ctx, st, "outra", "termo-2025-01", "Outro termo"); err != nil {
		t.Errorf("another church, the same version: %v", err)
	}
	for _, tc := range []struct{ version, title, want string }{
		{"termo-2025-01", "De novo", "already"},
		{"termo 2025", "Com espaço", "--version"},
		{"", "Vazio", "--version"},
		{"v3", " ", "--title"},
	} {
		if _, err := onboard.AddConsentText(ctx, st, "central", tc.version, tc.title); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("AddConsentText(%q, %q) = %v, want %q", tc.version, tc.title, err, tc.want)
		}
	}
	ts, err := onboard.ListConsentTexts(ctx, st, "central")
	if err != nil || len(ts) != 2 || ts[0].Version != "termo-2025-01" || ts[0].Title != "Termo LGPD 2025" || ts[1].Version != "v2" {
		t.Errorf("ListConsentTexts = %+v, %v", ts, err)
	}
}
