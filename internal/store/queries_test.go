package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// The hand-written sqlc queries (queries/custom) run here as written, without the generated
// Go code (gen/ belongs to the generator pipeline): sqlc.arg(x) and sqlc.narg(x) become $n
// numbered by first appearance, as sqlc numbers them.

type customQuery struct {
	sql    string
	params []string
}

var (
	nameLine = regexp.MustCompile(`(?m)^-- name: (\w+) :\w+\s*$`)
	argRef   = regexp.MustCompile(`sqlc\.n?arg\((\w+)\)`)
)

func loadCustomQueries(t *testing.T) map[string]customQuery {
	t.Helper()
	files, err := filepath.Glob("../../queries/custom/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("custom queries: %v (%d files)", err, len(files))
	}
	return parseQueries(t, files)
}

func parseQueries(t *testing.T, files []string) map[string]customQuery {
	t.Helper()
	out := map[string]customQuery{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		locs := nameLine.FindAllStringSubmatchIndex(src, -1)
		for i, loc := range locs {
			end := len(src)
			if i+1 < len(locs) {
				end = locs[i+1][0]
			}
			name := src[loc[2]:loc[3]]
			body := src[loc[1]:end]
			var params []string
			index := map[string]int{}
			body = argRef.ReplaceAllStringFunc(body, func(m string) string {
				p := argRef.FindStringSubmatch(m)[1]
				if _, ok := index[p]; !ok {
					params = append(params, p)
					index[p] = len(params)
				}
				return "$" + itoa(index[p])
			})
			if _, dup := out[name]; dup {
				t.Fatalf("query %s defined twice", name)
			}
			out[name] = customQuery{sql: body, params: params}
		}
	}
	return out
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

type querier struct {
	t  *testing.T
	qs map[string]customQuery
}

func (q querier) args(name string, named map[string]any) (string, []any) {
	q.t.Helper()
	cq, ok := q.qs[name]
	if !ok {
		q.t.Fatalf("no custom query %s", name)
	}
	args := make([]any, len(cq.params))
	for i, p := range cq.params {
		v, ok := named[p]
		if !ok {
			q.t.Fatalf("%s: missing parameter %s", name, p)
		}
		args[i] = v
	}
	if len(named) != len(cq.params) {
		q.t.Fatalf("%s: parameters %v, given %d", name, cq.params, len(named))
	}
	return cq.sql, args
}

func (q querier) exec(ctx context.Context, tx pgx.Tx, name string, named map[string]any) error {
	sql, args := q.args(name, named)
	_, err := tx.Exec(ctx, sql, args...)
	return err
}

func (q querier) row(ctx context.Context, tx pgx.Tx, name string, named map[string]any, dest ...any) error {
	sql, args := q.args(name, named)
	return tx.QueryRow(ctx, sql, args...).Scan(dest...)
}

func (q querier) rows(ctx context.Context, tx pgx.Tx, name string, named map[string]any) ([][]any, error) {
	sql, args := q.args(name, named)
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func TestCustomQueriesCheckinAndCheckout(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	f := newChurchFixture(t, s, "igreja-a", false)
	q := querier{t, loadCustomQueries(t)}
	ctx := context.Background()
	day := f.day.AddDate(0, 0, 7)
	key, err := (&store.PickupKeys{Pool: s.Pool()}).Active(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// register checks a child in the way neemias_checkin_register does; it reports the
	// check-in id, whether it existed already, and the code when it did not.
	register := func(c store.Caller, child uuid.UUID) (id uuid.UUID, existed bool, code string, err error) {
		err = s.InTx(ctx, c, func(ctx context.Context, tx pgx.Tx) error {
			var cid uuid.UUID
			var class *uuid.UUID
			var handle, name string
			var clName *string
			if err := q.row(ctx, tx, "GetChildForCheckin", map[string]any{
				"church_id": c.ChurchID, "child_id": child, "role": c.Role, "user_id": c.UserID,
			}, &cid, &class, &handle, &name, &clName, new(*string), new(*string), new(*time.Time)); err != nil {
				return err
			}
			if len(handle) != 6 || name == "" {
				return errors.New("the child's handle and name are missing")
			}
			if class == nil {
				return &errs.Invalid{Field: "class_id", Reason: "the child has no class"}
			}
			if err := q.exec(ctx, tx, "EnsureServiceDay", map[string]any{"church_id": c.ChurchID, "service_date": day}); err != nil {
				return err
			}
			var salt, hash []byte
			var err error
			code, salt, hash, err = store.NewPickupCode(key)
			if err != nil {
				return err
			}
			var gotChild, gotClass uuid.UUID
			var date, at time.Time
			err = q.row(ctx, tx, "InsertCheckin", map[string]any{
				"church_id": c.ChurchID, "child_id": child, "class_id": *class, "service_date": day,
				"checked_in_by": c.UserID, "pickup_code_salt": salt, "pickup_code_hash": hash, "pickup_key_id": key.ID,
			}, &id, &gotChild, &gotClass, &date, &at)
			if errors.Is(err, pgx.ErrNoRows) {
				existed, code = true, ""
				var out *time.Time
				var clName string
				return q.row(ctx, tx, "GetCheckinByChildDate", map[string]any{
					"church_id": c.ChurchID, "child_id": child, "service_date": day,
				}, &id, &gotChild, &gotClass, &date, &at, &out, &clName)
			}
			return err
		})
		return id, existed, code, err
	}

	vol := f.caller(store.RoleVoluntario)
	id, existed, code, err := register(vol, f.k1)
	if err != nil || existed || code == "" {
		t.Fatalf("first check-in: id %v existed %v code %q err %v", id, existed, code, err)
	}
	id2, existed, code2, err := register(f.caller(store.RoleCadastro), f.k1)
	if err != nil || !existed || id2 != id || code2 != "" {
		t.Fatalf("retry: id %v (want %v) existed %v code %q err %v", id2, id, existed, code2, err)
	}
	if _, _, _, err := register(vol, f.k2); !errors.Is(err, errs.ErrNotFound) {
		t.Fatalf("volunteer checking in a child of another class: err = %v, want not found", err)
	}
	if _, _, _, err := register(f.caller(store.RoleResponsavel), f.k3); !errors.Is(err, errs.ErrNotFound) {
		t.Fatalf("guardian checking in another family's child: err = %v, want not found", err)
	}

	// checkout mirrors neemias_checkout_register; the adult taking the child is its guardian g1
	// (the logic checks the pick-up list first: internal/logic).
	checkout := func(c store.Caller, checkin uuid.UUID, code string) (attempts int32, locked bool, err error) {
		err = s.InTx(ctx, c, func(ctx context.Context, tx pgx.Tx) error {
			var (
				cid, child, class             uuid.UUID
				date, in                      time.Time
				salt, hash                    []byte
				kid                           *string
				failed                        int32
				lockedAt, outAt               *time.Time
				pickedUpBy                    *string
				releasedBy, handle, childName string
				className                     string
			)
			if err := q.row(ctx, tx, "GetCheckinForCheckout", map[string]any{
				"church_id": c.ChurchID, "checkin_id": checkin, "role": c.Role, "user_id": c.UserID,
			}, &cid, &child, &class, &date, &in, &salt, &hash, &kid, &failed, &lockedAt, &outAt,
				&pickedUpBy, &releasedBy, &handle, &childName, &className); err != nil {
				return err
			}
			attempts, locked = failed, lockedAt != nil
			if outAt != nil {
				return nil // idempotent: already picked up
			}
			if lockedAt != nil {
				return &errs.Conflict{Reason: "locked"}
			}
			if kid == nil || *kid != key.ID {
				return fmt.Errorf("the check-in's pick-up key is %v, want %s", kid, key.ID)
			}
			if !store.CheckPickupCode(&key, salt, hash, code) {
				if err := q.row(ctx, tx, "RecordFailedPickup", map[string]any{
					"church_id": c.ChurchID, "checkin_id": checkin, "max_attempts": int32(store.MaxPickupAttempts),
				}, &attempts, &lockedAt); err != nil {
					return err
				}
				locked = lockedAt != nil
				return store.CommitWith(&errs.Invalid{Field: "pickup_code", Reason: "does not match"})
			}
			var gotID, gotChild uuid.UUID
			var at *time.Time
			var released string
			if err := q.row(ctx, tx, "CompleteCheckout", map[string]any{
				"checked_out_by": c.UserID, "church_id": c.ChurchID, "checkin_id": checkin,
				"picked_up_by_guardian": f.g1, "picked_up_by_adult": nil, "picked_up_by_name": "Responsável Um",
			}, &gotID, &gotChild, &at, &released); err != nil {
				return err
			}
			if released != map[string]string{store.RoleAdmin: "Admin", store.RoleVoluntario: "Vol"}[c.Role] {
				return errors.New("released_by is not the releasing user's name: " + released)
			}
			return nil
		})
		return attempts, locked, err
	}

	wrong := "999999"
	if wrong == code {
		wrong = "888888"
	}
	if _, _, err := checkout(f.caller(store.RoleResponsavel), f.ck3, wrong); !errors.Is(err, errs.ErrNotFound) {
		t.Fatalf("guardian checking out another family's child: err = %v, want not found", err)
	}
	for i := 1; i <= store.MaxPickupAttempts-1; i++ {
		attempts, locked, err := checkout(vol, id, wrong)
		if _, ok := errs.AsInvalid(err); !ok || attempts != int32(i) || locked {
			t.Fatalf("wrong code #%d: attempts %d locked %v err %v", i, attempts, locked, err)
		}
	}
	if _, _, err := checkout(vol, id, code); err != nil {
		t.Fatalf("right code after %d wrong ones: %v", store.MaxPickupAttempts-1, err)
	}
	if _, _, err := checkout(vol, id, code); err != nil {
		t.Fatalf("checkout retry: %v", err)
	}
	// Who took the child is recorded next to who released them.
	err = s.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var guardian *uuid.UUID
		var adult *uuid.UUID
		var name string
		var by uuid.UUID
		if err := tx.QueryRow(ctx, `SELECT picked_up_by_guardian, picked_up_by_adult, picked_up_by_name, checked_out_by FROM checkins WHERE id = $1`, id).
			Scan(&guardian, &adult, &name, &by); err != nil {
			return err
		}
		if guardian == nil || *guardian != f.g1 || adult != nil || name != "Responsável Um" || by != f.vol {
			t.Errorf("recorded guardian %v adult %v name %q by %v", guardian, adult, name, by)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// Another child: five wrong codes lock it, and then even the right code is refused.
	id3, _, code3, err := register(f.caller(store.RoleAdmin), f.k3)
	if err != nil {
		t.Fatal(err)
	}
	for range store.MaxPickupAttempts {
		_, _, _ = checkout(f.caller(store.RoleAdmin), id3, wrong)
	}
	_, locked, err := checkout(f.caller(store.RoleAdmin), id3, code3)
	var conflict *errs.Conflict
	if !locked || !errors.As(err, &conflict) {
		t.Fatalf("after %d wrong codes: locked %v err %v, want locked conflict", store.MaxPickupAttempts, locked, err)
	}
}

func TestCustomQueriesEnrollAndClasses(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	f := newChurchFixture(t, s, "igreja-a", false)
	q := querier{t, loadCustomQueries(t)}
	ctx := context.Background()
	today := time.Date(2026, 6, 7, 0, 0, 0, 0, time.UTC)

	enroll := func(c store.Caller, birth time.Time) (child uuid.UUID, class *uuid.UUID, err error) {
		err = s.InTx(ctx, c, func(ctx context.Context, tx pgx.Tx) error {
			var cl struct {
				id       uuid.UUID
				name     string
				min, max int32
			}
			err := q.row(ctx, tx, "FindClassForAge", map[string]any{"church_id": c.ChurchID, "on_date": today, "birth_date": birth},
				&cl.id, &cl.name, &cl.min, &cl.max)
			switch {
			case err == nil:
				class = &cl.id
			case !errors.Is(err, pgx.ErrNoRows):
				return err
			}
			var created time.Time
			var gotClass *uuid.UUID
			if err := q.row(ctx, tx, "InsertChild", map[string]any{
				"church_id": c.ChurchID, "name": "Criança Nova", "birth_date": birth, "class_id": class, "created_by": c.UserID,
				"allergies": nil, "medical_notes": nil,
			}, &child, &gotClass, &created); err != nil {
				return err
			}
			var guardian uuid.UUID
			if err := q.row(ctx, tx, "InsertGuardian", map[string]any{
				"church_id": c.ChurchID, "user_id": nil, "name": "Responsável Novo", "phone": "+55 (00) 91234-5678",
			}, &guardian); err != nil {
				return err
			}
			if err := q.exec(ctx, tx, "LinkGuardianChild", map[string]any{
				"church_id": c.ChurchID, "guardian_id": guardian, "child_id": child, "relationship": "mother",
			}); err != nil {
				return err
			}
			var consent uuid.UUID
			var granted time.Time
			if err := q.row(ctx, tx, "InsertConsent", map[string]any{
				"church_id": c.ChurchID, "guardian_id": guardian, "child_id": child, "text_version": "v1",
				"legal_basis": "consent", "granted_by": c.UserID,
			}, &consent, &granted); err != nil {
				return err
			}
			return q.exec(ctx, tx, "InsertAudit", map[string]any{
				"church_id": c.ChurchID, "user_id": c.UserID, "client_id": "test-client",
				"capability": "neemias_child_enroll", "action": "call", "target_ids": []uuid.UUID{child, guardian, consent},
				"outcome": "allowed", "correlation_id": "corr-1",
			})
		})
		return child, class, err
	}

	_, class, err := enroll(f.caller(store.RoleCadastro), today.AddDate(-4, -2, 0))
	if err != nil {
		t.Fatalf("enroll: %v", err)
	}
	if class == nil || *class != f.class1 {
		t.Errorf("a 4-year-old placed in %v, want class1", class)
	}
	if _, class, err = enroll(f.caller(store.RoleAdmin), today.AddDate(-15, 0, 0)); err != nil || class != nil {
		t.Errorf("a 15-year-old: class %v err %v, want enrolled without class", class, err)
	}
	for _, role := range []string{store.RoleVoluntario, store.RoleResponsavel} {
		if _, _, err := enroll(f.caller(role), today.AddDate(-4, 0, 0)); !errors.Is(err, errs.ErrNotFound) {
			t.Errorf("%s enrolling: err = %v, want refused", role, err)
		}
	}

	listed := func(c store.Caller) int {
		var n int
		err := s.InTx(ctx, c, func(ctx context.Context, tx pgx.Tx) error {
			rows, err := q.rows(ctx, tx, "ListVisibleClasses", map[string]any{"church_id": c.ChurchID, "role": c.Role, "user_id": c.UserID})
			n = len(rows)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := listed(f.caller(store.RoleAdmin)); got != 2 {
		t.Errorf("admin lists %d classes, want 2", got)
	}
	if got := listed(f.caller(store.RoleVoluntario)); got != 1 {
		t.Errorf("volunteer lists %d classes, want 1", got)
	}
	err = s.InTx(ctx, f.caller(store.RoleVoluntario), func(ctx context.Context, tx pgx.Tx) error {
		c := f.caller(store.RoleVoluntario)
		rows, err := q.rows(ctx, tx, "CompleteClassIDs", map[string]any{
			"church_id": c.ChurchID, "prefix": strings.ToUpper(f.class1.String()[:4]), "role": c.Role, "user_id": c.UserID, "max_results": int32(10)})
		if err != nil {
			return err
		}
		if len(rows) != 1 {
			t.Errorf("completion of class1's prefix: %d results, want 1", len(rows))
		}
		var id uuid.UUID
		err = q.row(ctx, tx, "GetClass", map[string]any{"church_id": c.ChurchID, "class_id": f.class2, "role": c.Role, "user_id": c.UserID}, &id, new(string), new(int32), new(int32))
		if !errors.Is(err, pgx.ErrNoRows) {
			t.Errorf("volunteer GetClass of an unassigned class: err = %v, want no rows", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCustomQueriesUsers(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	f := newChurchFixture(t, s, "igreja-a", false)
	q := querier{t, loadCustomQueries(t)}
	ctx := context.Background()
	hash, err := store.HashPassword("segredo")
	if err != nil {
		t.Fatal(err)
	}
	err = s.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE users SET password_hash = $2 WHERE id = $1`, f.admin, hash)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Login happens before any caller context: as the anonymous caller.
	err = s.InTx(ctx, store.Anonymous, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := q.rows(ctx, tx, "LoginCandidates", map[string]any{"email": "  ADMIN@igreja-a.test "})
		if err != nil {
			return err
		}
		if len(rows) != 1 {
			t.Fatalf("login candidates: %d, want 1", len(rows))
		}
		got, _ := rows[0][4].(string)
		if ok, err := store.CheckPassword(got, "segredo"); !ok || err != nil {
			t.Errorf("password check: %v %v", ok, err)
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM users`).Scan(&n); err != nil || n != 0 {
			t.Errorf("anonymous sees %d users (err %v), want 0", n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.InTx(ctx, f.caller(store.RoleVoluntario), func(ctx context.Context, tx pgx.Tx) error {
		c := f.caller(store.RoleVoluntario)
		var id, church uuid.UUID
		var email, name, role string
		var disabled *time.Time
		if err := q.row(ctx, tx, "GetUser", map[string]any{"church_id": c.ChurchID, "user_id": c.UserID},
			&id, &church, &email, &name, &role, &disabled); err != nil {
			return err
		}
		if role != store.RoleVoluntario {
			t.Errorf("role %s", role)
		}
		err := q.row(ctx, tx, "GetUserByEmail", map[string]any{"church_id": c.ChurchID, "email": "admin@igreja-a.test"},
			&id, &church, &email, &name, &role, &disabled)
		if !errors.Is(err, pgx.ErrNoRows) {
			t.Errorf("a volunteer looking up the admin: err = %v, want no rows", err)
		}
		var slug, tz string
		var today time.Time
		if err := q.row(ctx, tx, "GetChurch", map[string]any{"church_id": c.ChurchID}, &id, &name, &slug, &tz, &today); err != nil {
			return err
		}
		if tz != "America/Sao_Paulo" || today.IsZero() {
			t.Errorf("church time zone %q, today %v", tz, today)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPickupAdultsUnderRowLevelSecurity: the pick-up list's policies (migration 00110) as the
// queries meet them: who may insert trusted adults and restrictions, that a guardian's
// transaction never reads a restriction while app_pickup_restriction still finds it for them,
// and that a check-in cannot name both a guardian and an entry as the adult who took the child.
func TestPickupAdultsUnderRowLevelSecurity(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	f := newChurchFixture(t, s, "igreja-a", false)
	q := querier{t, loadCustomQueries(t)}
	ctx := context.Background()
	insert := func(c store.Caller, child uuid.UUID, name string, authorized bool, note *string) (uuid.UUID, error) {
		var id uuid.UUID
		err := s.InTx(ctx, c, func(ctx context.Context, tx pgx.Tx) error {
			var ok bool
			var at time.Time
			return q.row(ctx, tx, "InsertPickupAdult", map[string]any{
				"church_id": c.ChurchID, "child_id": child, "user_id": c.UserID, "role": c.Role, "created_by": c.UserID,
				"name": name, "relationship": "aunt", "phone": nil, "authorized": authorized, "note": note,
			}, &id, &ok, &at)
		})
		return id, err
	}
	note := "Ordem judicial: chamar a coordenação"
	for _, tc := range []struct {
		name       string
		role       string
		child      uuid.UUID
		authorized bool
		ok         bool
	}{
		{"guardian, own child, trusted", store.RoleResponsavel, f.k1, true, true},
		{"guardian, own child, restriction", store.RoleResponsavel, f.k1, false, false},
		{"guardian, another's child", store.RoleResponsavel, f.k3, true, false},
		{"volunteer (no pickups:write)", store.RoleVoluntario, f.k1, true, false},
		{"cadastro, restriction", store.RoleCadastro, f.k3, false, true},
		{"admin, trusted", store.RoleAdmin, f.k3, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n *string
			if !tc.authorized {
				n = &note
			}
			_, err := insert(f.caller(tc.role), tc.child, "Tia "+strings.ReplaceAll(tc.name, ",", ""), tc.authorized, n)
			if tc.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.ok && err == nil {
				t.Fatal("allowed")
			}
		})
	}
	// A restriction on k1 by staff, then what each role reads of k1's list.
	if _, err := insert(f.caller(store.RoleAdmin), f.k1, "Carlos Restrito", false, &note); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		role         string
		restrictions int
	}{{store.RoleAdmin, 1}, {store.RoleVoluntario, 1}, {store.RoleResponsavel, 0}} {
		c := f.caller(tc.role)
		err := s.InTx(ctx, c, func(ctx context.Context, tx pgx.Tx) error {
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM pickup_adults WHERE child_id = $1 AND NOT authorized`, f.k1).Scan(&n); err != nil {
				return err
			}
			if n != tc.restrictions {
				t.Errorf("%s reads %d restrictions of k1, want %d", tc.role, n, tc.restrictions)
			}
			// The restriction binds every role; its note is for those who may read restrictions.
			var restricted bool
			var found string
			if err := q.row(ctx, tx, "PickupRestriction", map[string]any{"child_id": f.k1, "adult_name": "carlos  restrito", "role": tc.role}, &restricted, &found); err != nil {
				return err
			}
			wantNote := note
			if tc.restrictions == 0 {
				wantNote = ""
			}
			if !restricted || found != wantNote {
				t.Errorf("%s: PickupRestriction = %v %q, want restricted with note %q", tc.role, restricted, found, wantNote)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", tc.role, err)
		}
	}
	// A check-in names a guardian or an entry, not both.
	err := s.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var entry uuid.UUID
		if err := tx.QueryRow(ctx, `SELECT id FROM pickup_adults WHERE child_id = $1 AND authorized LIMIT 1`, f.k1).Scan(&entry); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE checkins SET picked_up_by_guardian = $2, picked_up_by_adult = $3, picked_up_by_name = 'Ambos'
			WHERE id = $1`, f.ck1, f.g1, entry)
		return err
	})
	var se *store.Error
	if !errors.As(err, &se) || se.Code != "23514" || se.Constraint != "checkins_picked_up_by_check" {
		t.Errorf("a check-in named both a guardian and an entry as who picked the child up: err = %v", err)
	}
}
