package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// unfiltered are deliberately unfiltered queries: no church, no role filter. Row-level security
// alone decides what they return.
var unfiltered = []struct {
	name, sql string
}{
	{"churches", `SELECT count(*) FROM churches`},
	{"users", `SELECT count(*) FROM users`},
	{"classes", `SELECT count(*) FROM classes`},
	{"volunteer_assignments", `SELECT count(*) FROM volunteer_assignments`},
	{"children", `SELECT count(*) FROM children`},
	{"guardians", `SELECT count(*) FROM guardians`},
	{"guardian_children", `SELECT count(*) FROM guardian_children`},
	{"consent_records", `SELECT count(*) FROM consent_records`},
	{"service_days", `SELECT count(*) FROM service_days`},
	{"checkins", `SELECT count(*) FROM checkins`},
	{"audit_log", `SELECT count(*) FROM audit_log`},
	{"v_child_detail", `SELECT count(*) FROM v_child_detail`},
	{"v_checkins", `SELECT count(*) FROM v_checkins`},
	{"v_roster_counts", `SELECT coalesce(sum(children), 0) FROM v_roster_counts`},
	{"v_attendance_daily", `SELECT coalesce(sum(checkins), 0) FROM v_attendance_daily`},
}

func counts(t *testing.T, s *store.Store, c store.Caller) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	err := s.InTx(context.Background(), c, func(ctx context.Context, tx pgx.Tx) error {
		for _, q := range unfiltered {
			var n int64
			if err := tx.QueryRow(ctx, q.sql).Scan(&n); err != nil {
				return err
			}
			got[q.name] = n
		}
		return nil
	})
	if err != nil {
		t.Fatalf("counts as %s: %v", c.Role, err)
	}
	return got
}

func TestRowLevelSecurityPerRole(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	a := newChurchFixture(t, s, "igreja-a", false)
	b := newChurchFixture(t, s, "igreja-b", true) // one more child than a

	staffA := map[string]int64{
		"churches": 1, "users": 4, "classes": 2, "volunteer_assignments": 1, "children": 4,
		"guardians": 2, "guardian_children": 5, "consent_records": 4, "service_days": 1,
		"checkins": 3, "audit_log": 0, "v_child_detail": 5, "v_checkins": 3,
		"v_roster_counts": 3, "v_attendance_daily": 3,
	}
	adminA := clone(staffA)
	adminA["audit_log"] = 1
	adminB := clone(adminA)
	adminB["children"], adminB["guardian_children"], adminB["v_child_detail"], adminB["v_roster_counts"] = 5, 6, 6, 4

	tests := []struct {
		name   string
		caller store.Caller
		want   map[string]int64
	}{
		{"ADMIN sees the whole church and its audit log", a.caller(store.RoleAdmin), adminA},
		{"CADASTRO sees the whole church, no audit log", a.caller(store.RoleCadastro), staffA},
		{"VOLUNTARIO sees the assigned class only", a.caller(store.RoleVoluntario), map[string]int64{
			"churches": 1, "users": 1, "classes": 2, "volunteer_assignments": 1, "children": 2,
			"guardians": 2, "guardian_children": 2, "consent_records": 0, "service_days": 1,
			"checkins": 2, "audit_log": 0, "v_child_detail": 2, "v_checkins": 2,
			"v_roster_counts": 2, "v_attendance_daily": 2,
		}},
		{"RESPONSAVEL sees own children only", a.caller(store.RoleResponsavel), map[string]int64{
			"churches": 1, "users": 1, "classes": 2, "volunteer_assignments": 0, "children": 2,
			"guardians": 2, "guardian_children": 3, "consent_records": 2, "service_days": 1,
			"checkins": 2, "audit_log": 0, "v_child_detail": 3, "v_checkins": 2,
			"v_roster_counts": 2, "v_attendance_daily": 2,
		}},
		{"ADMIN of the other church sees only that church", b.caller(store.RoleAdmin), adminB},
		{"anonymous sees nothing", store.Anonymous, zero()},
		{"a user id of another church sees nothing of its own church's private rows",
			store.Caller{ChurchID: a.church, UserID: b.res, Role: store.RoleResponsavel}, map[string]int64{
				"churches": 1, "users": 0, "classes": 2, "volunteer_assignments": 0, "children": 0,
				"guardians": 0, "guardian_children": 0, "consent_records": 0, "service_days": 1,
				"checkins": 0, "audit_log": 0, "v_child_detail": 0, "v_checkins": 0,
				"v_roster_counts": 0, "v_attendance_daily": 0,
			}},
		{"an unknown church sees nothing",
			store.Caller{ChurchID: uuid.New(), UserID: a.admin, Role: store.RoleAdmin}, zero()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, counts(t, s, tt.caller)); diff != "" {
				t.Errorf("row counts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRowLevelSecurityNeverLeaksAcrossChurches(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	a := newChurchFixture(t, s, "igreja-a", false)
	b := newChurchFixture(t, s, "igreja-b", true)
	tables := []string{"users", "classes", "volunteer_assignments", "children", "guardians",
		"guardian_children", "consent_records", "service_days", "checkins", "audit_log",
		"v_child_detail", "v_checkins", "v_roster_counts", "v_attendance_daily"}
	for _, f := range []churchFixture{a, b} {
		other := b.church
		if f.church == b.church {
			other = a.church
		}
		for _, role := range store.Roles() {
			err := s.InTx(context.Background(), f.caller(role), func(ctx context.Context, tx pgx.Tx) error {
				for _, tbl := range tables {
					var n int64
					if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+tbl+" WHERE church_id = $1", other).Scan(&n); err != nil {
						return err
					}
					if n != 0 {
						t.Errorf("%s of one church sees %d rows of %s of the other", role, n, tbl)
					}
				}
				var n int64
				if err := tx.QueryRow(ctx, "SELECT count(*) FROM churches WHERE id = $1", other).Scan(&n); err != nil {
					return err
				}
				if n != 0 {
					t.Errorf("%s sees the other church", role)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestRowLevelSecurityWrites(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	a := newChurchFixture(t, s, "igreja-a", false)
	b := newChurchFixture(t, s, "igreja-b", true)
	salt := make([]byte, 16)
	hash := store.HashPickupCode(salt, "000000")
	day := a.day.AddDate(0, 0, 7)
	ensureDay := func(f churchFixture) {
		err := s.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO service_days (church_id, service_date) VALUES ($1, $2)`, f.church, day)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	ensureDay(a)
	ensureDay(b)
	insertCheckin := func(c store.Caller, church, child, class, by uuid.UUID) error {
		return s.InTx(context.Background(), c, func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO checkins (church_id, child_id, class_id, service_date, checked_in_by, pickup_code_salt, pickup_code_hash)
				VALUES ($1, $2, $3, $4, $5, $6, $7)`, church, child, class, day, by, salt, hash)
			return err
		})
	}
	tests := []struct {
		name               string
		caller             store.Caller
		church, child, cls uuid.UUID
		by                 uuid.UUID
		wantOK             bool
	}{
		{"volunteer, assigned class", a.caller(store.RoleVoluntario), a.church, a.k1, a.class1, a.vol, true},
		{"volunteer, class not assigned", a.caller(store.RoleVoluntario), a.church, a.k2, a.class2, a.vol, false},
		{"guardian, own child", a.caller(store.RoleResponsavel), a.church, a.k2, a.class2, a.res, true},
		{"guardian, someone else's child", a.caller(store.RoleResponsavel), a.church, a.k3, a.class1, a.res, false},
		{"cadastro, on behalf of another user", a.caller(store.RoleCadastro), a.church, a.k3, a.class1, a.admin, false},
		{"cadastro, own church", a.caller(store.RoleCadastro), a.church, a.k3, a.class1, a.cadastro, true},
		{"admin, into another church", a.caller(store.RoleAdmin), b.church, b.k1, b.class1, a.admin, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := insertCheckin(tt.caller, tt.church, tt.child, tt.cls, tt.by)
			if tt.wantOK && err != nil {
				t.Fatalf("insert refused: %v", err)
			}
			if !tt.wantOK {
				if err == nil {
					t.Fatal("insert accepted, want refused")
				}
				if !errors.Is(err, errs.ErrNotFound) || !store.IsPermissionDenied(err) {
					t.Fatalf("err = %v, want a row-level security refusal mapped to not found", err)
				}
			}
		})
	}

	t.Run("only staff enroll children", func(t *testing.T) {
		for _, role := range store.Roles() {
			err := s.InTx(context.Background(), a.caller(role), func(ctx context.Context, tx pgx.Tx) error {
				_, err := tx.Exec(ctx, `INSERT INTO children (church_id, name, birth_date) VALUES ($1, 'Nova Criança', '2020-01-01')`, a.church)
				return err
			})
			staff := role == store.RoleAdmin || role == store.RoleCadastro
			if staff != (err == nil) {
				t.Errorf("%s enrolling a child: err = %v", role, err)
			}
		}
	})

	t.Run("a guardian cannot check out another family's child", func(t *testing.T) {
		err := s.InTx(context.Background(), a.caller(store.RoleResponsavel), func(ctx context.Context, tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `UPDATE checkins SET checked_out_at = now(), checked_out_by = $2 WHERE id = $1`, a.ck3, a.res)
			if err != nil {
				return err
			}
			if tag.RowsAffected() != 0 {
				t.Errorf("updated %d rows", tag.RowsAffected())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	t.Run("the app role cannot change a pick-up code hash", func(t *testing.T) {
		err := s.InTx(context.Background(), a.caller(store.RoleAdmin), func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `UPDATE checkins SET pickup_code_hash = $2 WHERE id = $1`, a.ck1, hash)
			return err
		})
		if !store.IsPermissionDenied(err) {
			t.Fatalf("err = %v, want permission denied", err)
		}
	})

	t.Run("the app role cannot read password hashes", func(t *testing.T) {
		err := s.InTx(context.Background(), a.caller(store.RoleAdmin), func(ctx context.Context, tx pgx.Tx) error {
			var h *string
			return tx.QueryRow(ctx, `SELECT password_hash FROM users WHERE id = $1`, a.admin).Scan(&h)
		})
		if !store.IsPermissionDenied(err) {
			t.Fatalf("err = %v, want permission denied", err)
		}
	})
}

func clone(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func zero() map[string]int64 {
	m := map[string]int64{}
	for _, q := range unfiltered {
		m[q.name] = 0
	}
	return m
}
