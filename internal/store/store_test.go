package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

var uuidOne = uuid.MustParse("00000000-0000-4000-8000-000000000001")

func TestCallerValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		c    store.Caller
		ok   bool
	}{
		{"anonymous", store.Anonymous, true},
		{"complete", store.Caller{ChurchID: uuidOne, UserID: uuidOne, Role: store.RoleVoluntario}, true},
		{"no church", store.Caller{UserID: uuidOne, Role: store.RoleAdmin}, false},
		{"no user", store.Caller{ChurchID: uuidOne, Role: store.RoleAdmin}, false},
		{"no role", store.Caller{ChurchID: uuidOne, UserID: uuidOne}, false},
		{"unknown role", store.Caller{ChurchID: uuidOne, UserID: uuidOne, Role: "admin"}, false},
		{"scopes", store.Caller{ChurchID: uuidOne, UserID: uuidOne, Role: store.RoleAdmin, Scopes: capability.NewScopeSet("roster:read", "children:read")}, true},
		{"unknown scope", store.Caller{ChurchID: uuidOne, UserID: uuidOne, Role: store.RoleAdmin, Scopes: capability.NewScopeSet("roster:read', true), set_config('role', 'postgres")}, false},
	}
	for _, tt := range tests {
		if err := tt.c.Validate(); (err == nil) != tt.ok {
			t.Errorf("%s: Validate() = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}

func TestOneCheckinPerChildPerDay(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	f := newChurchFixture(t, s, "igreja-a", false)
	salt := make([]byte, 16)
	hash := store.HashPickupCode(salt, "111111")
	// k1 is checked in on f.day already; a second check-in the same day, even in another
	// class, is refused by the database itself.
	err := s.InTx(context.Background(), f.caller(store.RoleAdmin), func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO checkins (church_id, child_id, class_id, service_date, checked_in_by, pickup_code_salt, pickup_code_hash)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, f.church, f.k1, f.class2, f.day, f.admin, salt, hash)
		return err
	})
	if !store.IsUniqueViolation(err, "checkins_child_date_key") {
		t.Fatalf("err = %v, want a violation of checkins_child_date_key", err)
	}
	var conflict *errs.Conflict
	if !errors.As(err, &conflict) {
		t.Errorf("err = %v, want it mapped to *errs.Conflict", err)
	}
}

func TestAuditLogIsAppendOnly(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	f := newChurchFixture(t, s, "igreja-a", false)
	ctx := context.Background()
	admin := f.caller(store.RoleAdmin)

	err := s.InTx(ctx, admin, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO audit_log (church_id, user_id, client_id, capability, action, target_ids, outcome, correlation_id)
			VALUES ($1, $2, 'client-1', 'neemias_checkin_register', 'call', ARRAY[$3::uuid], 'allowed', 'corr-1')`, f.church, f.admin, f.k1)
		return err
	})
	if err != nil {
		t.Fatalf("append as the app role: %v", err)
	}
	err = s.InTx(ctx, admin, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO audit_log (church_id, user_id, capability, action, outcome) VALUES ($1, $2, 'x', 'call', 'allowed')`, f.church, f.vol)
		return err
	})
	if !store.IsPermissionDenied(err) {
		t.Errorf("appending on behalf of another user: err = %v, want refused", err)
	}
	err = s.InTx(ctx, store.Anonymous, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO audit_log (capability, action, outcome) VALUES ('auth', 'token', 'denied')`)
		return err
	})
	if err != nil {
		t.Errorf("anonymous append without church or user: %v", err)
	}

	for _, stmt := range []string{
		`UPDATE audit_log SET outcome = 'denied'`,
		`DELETE FROM audit_log`,
		`TRUNCATE audit_log`,
	} {
		err := s.InTx(ctx, admin, func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, stmt)
			return err
		})
		if !store.IsPermissionDenied(err) {
			t.Errorf("app role %q: err = %v, want permission denied", stmt, err)
		}
		// Even the owner is stopped by the trigger.
		err = s.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, stmt)
			return err
		})
		if !store.IsPermissionDenied(err) {
			t.Errorf("owner %q: err = %v, want refused by the trigger", stmt, err)
		}
	}
	var n int
	err = s.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM audit_log`).Scan(&n)
	})
	if err != nil || n != 3 { // the fixture's, the admin's and the anonymous one
		t.Fatalf("audit entries = %d (err %v), want 3", n, err)
	}
}

func TestInTxCommitsOnlyOnSuccessOrCommitWith(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	f := newChurchFixture(t, s, "igreja-a", false)
	ctx := context.Background()
	bump := func(ret error) error {
		return s.InTx(ctx, f.caller(store.RoleCadastro), func(ctx context.Context, tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `UPDATE checkins SET failed_pickup_attempts = failed_pickup_attempts + 1 WHERE id = $1`, f.ck1); err != nil {
				return err
			}
			return ret
		})
	}
	wrong := &errs.Invalid{Field: "pickup_code", Reason: "does not match"}
	if err := bump(wrong); err != wrong {
		t.Fatalf("plain error: got %v", err)
	}
	if err := bump(store.CommitWith(wrong)); err != wrong {
		t.Fatalf("CommitWith: got %v, want the wrapped error itself", err)
	}
	if err := bump(nil); err != nil {
		t.Fatal(err)
	}
	var n int
	err := s.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT failed_pickup_attempts FROM checkins WHERE id = $1`, f.ck1).Scan(&n)
	})
	if err != nil || n != 2 {
		t.Fatalf("failed_pickup_attempts = %d (err %v), want 2: rolled back once, committed twice", n, err)
	}
	if store.CommitWith(nil) != nil {
		t.Error("CommitWith(nil) != nil")
	}
}

func TestErrorsCarryNoPersonalData(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	f := newChurchFixture(t, s, "igreja-a", false)
	ctx := context.Background()
	const secretName = "Fulana Secreta de Tal"
	const secretEmail = "admin@igreja-a.test"
	tests := []struct {
		name  string
		sql   string
		args  []any
		check func(error) bool
	}{
		{"unique violation quoting an email", `INSERT INTO users (church_id, email, display_name, role) VALUES ($1, $2, 'x', 'ADMIN')`,
			[]any{f.church, secretEmail}, func(err error) bool { var c *errs.Conflict; return errors.As(err, &c) }},
		{"check violation on a name", `INSERT INTO children (church_id, name, birth_date) VALUES ($1, $2, '1900-01-01')`,
			[]any{f.church, secretName}, func(err error) bool { _, ok := errs.AsInvalid(err); return ok }},
		{"bad input quoting the value", `SELECT $1::text::date`,
			[]any{secretName}, func(err error) bool { _, ok := errs.AsInvalid(err); return ok }},
		{"foreign key violation", `INSERT INTO guardian_children (guardian_id, child_id, church_id, relationship) VALUES ($1, $2, $3, 'other')`,
			[]any{uuid.New(), f.k1, f.church}, func(err error) bool { _, ok := errs.AsInvalid(err); return ok }},
		{"no rows", `SELECT name FROM children WHERE id = $1`, []any{uuid.New()},
			func(err error) bool { return errors.Is(err, errs.ErrNotFound) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
				var out any
				return tx.QueryRow(ctx, tt.sql+returningNothing(tt.sql), tt.args...).Scan(&out)
			})
			if err == nil {
				t.Fatal("no error")
			}
			if !tt.check(err) {
				t.Errorf("err = %v (%T): not the expected domain error", err, err)
			}
			for _, secret := range []string{secretName, secretEmail, "Fulana", "igreja-a.test"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error message %q contains personal data %q", err.Error(), secret)
				}
			}
		})
	}
}

// returningNothing makes an INSERT usable with QueryRow.
func returningNothing(sql string) string {
	if strings.HasPrefix(sql, "INSERT") {
		return " RETURNING 1"
	}
	return ""
}

func TestPasswordHash(t *testing.T) {
	t.Parallel()
	h, err := store.HashPassword("demo")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("hash %q: not an argon2id PHC string", h)
	}
	h2, _ := store.HashPassword("demo")
	if h == h2 {
		t.Error("two hashes of one password are equal: salt not random")
	}
	tests := []struct {
		encoded, password string
		want              bool
		wantErr           bool
	}{
		{h, "demo", true, false},
		{h, "Demo", false, false},
		{h, "", false, false},
		{"", "demo", false, false},
		{"$argon2i$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaA", "demo", false, true},
		{"$argon2id$v=19$m=99999999,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA", "demo", false, true},
		{"plain", "demo", false, true},
	}
	for _, tt := range tests {
		got, err := store.CheckPassword(tt.encoded, tt.password)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("CheckPassword(%q, %q) = %v, %v; want %v, err=%v", tt.encoded, tt.password, got, err, tt.want, tt.wantErr)
		}
	}
	if store.HashPasswordWithSalt("demo", []byte("0123456789abcdef")) != store.HashPasswordWithSalt("demo", []byte("0123456789abcdef")) {
		t.Error("HashPasswordWithSalt is not deterministic")
	}
}

// The login's stand-in for an unknown email must cost what a real hash costs: the same
// format and parameters (CheckPassword's work is set by them), and no password matches it.
func TestDummyPasswordHash(t *testing.T) {
	t.Parallel()
	real, err := store.HashPassword("demo")
	if err != nil {
		t.Fatal(err)
	}
	d, err := store.DummyPasswordHash()
	if err != nil {
		t.Fatal(err)
	}
	d2, _ := store.DummyPasswordHash()
	if d == d2 {
		t.Error("two dummy hashes are equal: not random")
	}
	params := func(h string) string { return h[:strings.LastIndex(h[:strings.LastIndex(h, "$")], "$")+1] }
	if params(d) != params(real) || len(d) != len(real) {
		t.Errorf("dummy hash %q: not in the format and parameters of a real one, %q", d, real)
	}
	for _, pw := range []string{"", "demo", "not a password"} {
		if ok, err := store.CheckPassword(d, pw); ok || err != nil {
			t.Errorf("CheckPassword(dummy, %q) = %v, %v; want false, nil", pw, ok, err)
		}
	}
}

func TestPickupCode(t *testing.T) {
	t.Parallel()
	key := store.PickupKey{ID: "00112233aabbccdd", Secret: bytes.Repeat([]byte{0x5a}, 32)}
	code, salt, hash, err := store.NewPickupCode(key)
	if err != nil {
		t.Fatal(err)
	}
	if len(code) != store.PickupCodeLen || len(salt) != 16 || len(hash) != 32 {
		t.Fatalf("code %d characters, salt %d bytes, hash %d bytes", len(code), len(salt), len(hash))
	}
	if !regexp.MustCompile(`^[A-Z]{3}-[0-9]{3}$`).MatchString(code) {
		t.Fatalf("code %q is not of the form ABC-234 (letters keep clients from sending a number)", code)
	}
	for _, typed := range []string{code, strings.ToLower(code), strings.ReplaceAll(code, "-", ""), " " + strings.ReplaceAll(code, "-", " ") + " "} {
		if !store.CheckPickupCode(&key, salt, hash, typed) {
			t.Errorf("the issued code typed as %q does not match", typed)
		}
	}
	// Keyed: neither the unkeyed check nor another key matches it.
	otherKey := store.PickupKey{ID: "ffeeddccbbaa9988", Secret: bytes.Repeat([]byte{0xa5}, 32)}
	if store.CheckPickupCode(nil, salt, hash, code) || store.CheckPickupCode(&otherKey, salt, hash, code) {
		t.Error("a keyed hash matches without its key")
	}
	// Unkeyed hashes of before migration 00103 (pickup_key_id NULL), digits-only codes
	// included, still match as they were, and only without a key.
	if !store.CheckPickupCode(nil, salt, store.HashPickupCode(salt, "048213"), "048213") {
		t.Error("an unkeyed digits-only code no longer matches")
	}
	if store.CheckPickupCode(&key, salt, store.HashPickupCode(salt, "048213"), "048213") {
		t.Error("an unkeyed hash matches under a key")
	}
	other := "000000"
	if other == code {
		other = "000001"
	}
	if store.CheckPickupCode(&key, salt, hash, other) || store.CheckPickupCode(&key, salt, hash, "") {
		t.Error("a wrong code matches")
	}
	_, salt2, hash2, _ := store.NewPickupCode(key)
	if string(salt) == string(salt2) || string(hash) == string(hash2) {
		t.Error("two check-ins share salt or hash")
	}
	if _, _, _, err := store.NewPickupCode(store.PickupKey{}); err == nil {
		t.Error("a code was issued without a key")
	}
	if s := fmt.Sprint(key); strings.Contains(s, string(key.Secret)) || !strings.Contains(s, key.ID) {
		t.Errorf("a key prints as %q", s)
	}
}

// TestPickupKeys: the keyring makes the first key once however many replicas ask at once, keeps
// the keys from the application role, and finds a key made after it last read (another
// replica's rotation) by id.
func TestPickupKeys(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	rings := make([]*store.PickupKeys, 8)
	keys := make([]store.PickupKey, len(rings))
	var wg sync.WaitGroup
	for i := range rings {
		rings[i] = &store.PickupKeys{Pool: st.Pool()}
		wg.Go(func() {
			k, err := rings[i].Active(ctx)
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	for _, k := range keys[1:] {
		if k.ID != keys[0].ID || !bytes.Equal(k.Secret, keys[0].Secret) || len(k.Secret) != 32 {
			t.Fatalf("replicas made different first keys: %s and %s", k.ID, keys[0].ID)
		}
	}
	// A new active key, made elsewhere: the first ring still hashes under its copy until
	// its TTL, and finds the new key by id.
	params, err := store.NewPickupKeyParams("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `UPDATE pickup_code_keys SET active = false`); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `INSERT INTO pickup_code_keys (kid, secret) VALUES ($1, $2)`, params.Kid, params.Secret); err != nil {
		t.Fatal(err)
	}
	if k, _ := rings[0].Active(ctx); k.ID != keys[0].ID {
		t.Errorf("the active key was read again before its TTL: %s", k.ID)
	}
	if k, err := rings[0].Get(ctx, params.Kid); err != nil || !bytes.Equal(k.Secret, params.Secret) {
		t.Errorf("the new key by id: %v, %v", k, err)
	}
	if k, _ := (&store.PickupKeys{Pool: st.Pool()}).Active(ctx); k.ID != params.Kid {
		t.Errorf("a fresh ring's active key is %s, want %s", k.ID, params.Kid)
	}
	if _, err := rings[0].Get(ctx, "0000000000000000"); !errors.Is(err, store.ErrNoPickupKey) {
		t.Errorf("an unknown key: %v", err)
	}
	// Requests cannot read the keys.
	err = st.InTx(ctx, store.Caller{ChurchID: uuid.New(), UserID: uuid.New(), Role: store.RoleAdmin}, func(ctx context.Context, tx pgx.Tx) error {
		var n int
		return tx.QueryRow(ctx, `SELECT count(*) FROM pickup_code_keys`).Scan(&n)
	})
	if !store.IsPermissionDenied(err) {
		t.Errorf("a request read pickup_code_keys: %v", err)
	}
}

// TestAnalyzeStale: tables with rows and no statistics are analyzed once, then left alone.
func TestAnalyzeStale(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	if _, err := st.Pool().Exec(ctx, `INSERT INTO churches (id, name, slug) VALUES (gen_random_uuid(), 'Igreja Teste', 'igreja-teste')`); err != nil {
		t.Fatalf("inserting a church: %v", err)
	}
	// pg_stat counters are flushed asynchronously; ask for them now.
	_, _ = st.Pool().Exec(ctx, `SELECT pg_stat_force_next_flush()`)
	n, err := store.AnalyzeStale(ctx, st.Pool())
	if err != nil {
		t.Fatal(err)
	}
	if n < 1 {
		t.Fatalf("analyzed %d tables, want at least churches", n)
	}
	_, _ = st.Pool().Exec(ctx, `SELECT pg_stat_force_next_flush()`)
	var analyzed bool
	if err := st.Pool().QueryRow(ctx, `SELECT last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE relname = 'churches'`).Scan(&analyzed); err != nil {
		t.Fatal(err)
	}
	if !analyzed {
		t.Error("churches still has no statistics")
	}
}

// TestHasScopeReadsTheCallersScopes: rf_has_scope (migration 00090) is true exactly for the
// effective scopes InTx puts in the transaction (app.scopes), and false when none are set (a caller without scopes, a system transaction): it fails closed.
func TestHasScopeReadsTheCallersScopes(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	has := func(c store.Caller, system bool, scope string) bool {
		t.Helper()
		var ok bool
		fn := func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT rf_has_scope($1)`, scope).Scan(&ok)
		}
		var err error
		if system {
			err = s.InSystemTx(ctx, fn)
		} else {
			err = s.InTx(ctx, c, fn)
		}
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	vol := store.Caller{ChurchID: uuidOne, UserID: uuidOne, Role: store.RoleVoluntario,
		Scopes: capability.NewScopeSet("roster:read", "children:read")}
	if !has(vol, false, "roster:read") {
		t.Error("a held scope of the role: rf_has_scope is false")
	}
	if has(vol, false, "attendance:read") {
		t.Error("a scope of the role the caller does not hold: rf_has_scope is true")
	}
	if !has(vol, false, "children:read") {
		// Effective scopes are bounded by the role where they are granted (scopes.Grant);
		// tests widen them on purpose to reach the row filters.
		t.Error("a held scope outside the role's: rf_has_scope is false")
	}
	if has(store.Caller{ChurchID: uuidOne, UserID: uuidOne, Role: store.RoleAdmin}, false, "roster:read") {
		t.Error("a caller without scopes: rf_has_scope is true")
	}
	if has(store.Anonymous, true, "roster:read") {
		t.Error("a system transaction: rf_has_scope is true")
	}
}

// TestCallerRateLimits: the rate limits a request takes in its own transaction (migration
// 00102) reach only the caller's own buckets of the two names, keyed by church and user; a
// rollback takes nothing; a refund gives the unit back; the application role still cannot
// read or write rate_limits itself.
func TestCallerRateLimits(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	caller := store.Caller{ChurchID: uuid.New(), UserID: uuid.New(), Role: store.RoleVoluntario}
	take := func(c store.Caller, bucket string, keep bool) (db.TakeCallerRateRow, error) {
		var r db.TakeCallerRateRow
		err := st.InTx(ctx, c, func(ctx context.Context, tx pgx.Tx) error {
			var err error
			r, err = db.New(tx).TakeCallerRate(ctx, db.TakeCallerRateParams{Bucket: bucket, IntervalSecs: 60, ToleranceSecs: 120})
			if err == nil && !keep {
				err = errors.New("roll back")
			}
			return err
		})
		return r, err
	}
	if _, err := take(caller, "api", true); errs.KindOf(err) != errs.KindInvalid {
		t.Errorf("another limit's bucket: %v, want invalid", err)
	}
	if _, err := take(caller, "pickup", false); err == nil || err.Error() != "roll back" {
		t.Fatal(err)
	}
	for i, want := range []bool{true, true, false} { // burst 2: the rolled-back take took nothing
		if r, err := take(caller, "pickup", true); err != nil || r.Allowed != want || (!want && (r.RetryAfterSecs <= 0 || r.RetryAfterSecs > 60)) {
			t.Errorf("take %d: %+v %v, want allowed %v", i, r, err, want)
		}
	}
	if r, err := take(caller, "find", true); err != nil || !r.Allowed {
		t.Errorf("the caller's other bucket: %+v %v", r, err)
	}
	other := caller
	other.UserID = uuid.New()
	if r, err := take(other, "pickup", true); err != nil || !r.Allowed {
		t.Errorf("another user's bucket: %+v %v", r, err)
	}
	err := st.InTx(ctx, caller, func(ctx context.Context, tx pgx.Tx) error {
		return db.New(tx).RefundCallerRate(ctx, db.RefundCallerRateParams{Bucket: "pickup", IntervalSecs: 60})
	})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := take(caller, "pickup", true); err != nil || !r.Allowed {
		t.Errorf("after a refund: %+v %v", r, err)
	}
	var keys []string
	if err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT key FROM rate_limits ORDER BY key`)
		if err != nil {
			return err
		}
		keys, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"find:" + caller.ChurchID.String() + "/" + caller.UserID.String(),
		"pickup:" + caller.ChurchID.String() + "/" + caller.UserID.String(),
		"pickup:" + other.ChurchID.String() + "/" + other.UserID.String()}
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Errorf("rate_limits keys %q, want %q", keys, want)
	}
	err = st.InTx(ctx, caller, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM rate_limits`)
		return err
	})
	if !store.IsPermissionDenied(err) {
		t.Errorf("a request deleted rate_limits: %v", err)
	}
}
