package logic_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/logic"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/tokens"
)

// storedCode is what checkins keeps of a pick-up code.
type storedCode struct {
	salt, hash []byte
	keyID      *string
}

func (e *env) storedCode(id uuid.UUID) storedCode {
	e.t.Helper()
	var s storedCode
	e.sys(func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT pickup_code_salt, pickup_code_hash FROM checkins WHERE id = $1`, id).Scan(&s.salt, &s.hash)
	})
	return s
}

// TestPickupCodesAreStoredUnderAKeyedHash (issue 24, finding 3): a reader of checkins cannot
// test pick-up codes offline. A new code is stored as HMAC-SHA256 under a server key
// (pickup_code_keys, which the application role cannot read) with the key's id, never as
// SHA-256(salt || code); a code issued before a rotation of the keys still releases its child;
// a code stored before keys existed (pickup_key_id NULL: the fixture's) still verifies.
func TestPickupCodesAreStoredUnderAKeyedHash(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	admin := a.as(store.RoleAdmin)
	checkin := func(child uuid.UUID) (uuid.UUID, string) {
		t.Helper()
		out := mustInvoke[capapi.CheckinRegisterOutput](e, admin, capapi.CapCheckinRegister, map[string]any{"child_id": child})
		return out.CheckinID, *out.PickupCode
	}
	before, beforeCode := checkin(a.k1)
	s := e.storedCode(before)
	unkeyed := sha256.Sum256(append(append([]byte{}, s.salt...), store.CanonicalPickupCode(beforeCode)...))
	if bytes.Equal(s.hash, unkeyed[:]) {
		t.Fatal("the stored hash is SHA-256(salt || code): anyone who reads checkins tests every code offline")
	}
	var kid string
	var secret []byte
	e.sys(func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT ck.pickup_key_id, k.secret FROM checkins ck JOIN pickup_code_keys k ON k.kid = ck.pickup_key_id
			WHERE ck.id = $1`, before).Scan(&kid, &secret)
	})
	mac := hmac.New(sha256.New, secret)
	mac.Write(s.salt)
	mac.Write([]byte(store.CanonicalPickupCode(beforeCode)))
	if !hmac.Equal(s.hash, mac.Sum(nil)) {
		t.Errorf("the stored hash is not HMAC-SHA256(key %s; salt || code)", kid)
	}

	// Requests cannot read the keys, whatever they may read of checkins.
	err := e.st.InTx(context.Background(), store.Caller{ChurchID: a.id, UserID: a.users[store.RoleAdmin], Role: store.RoleAdmin},
		func(ctx context.Context, tx pgx.Tx) error {
			var n int
			return tx.QueryRow(ctx, `SELECT count(*) FROM pickup_code_keys`).Scan(&n)
		})
	if !store.IsPermissionDenied(err) {
		t.Errorf("the application role read pickup_code_keys: %v", err)
	}

	// A rotation of the signing keys rotates the pick-up key: new codes go under the new key,
	// the code issued before it still releases its child.
	next, err := (&tokens.KeyStore{Pool: e.st.Pool()}).Rotate(context.Background(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// Another replica, started after the rotation, issues the next code; this one's cache has
	// not seen the new key yet when it checks that code out.
	out, err := logic.New(e.st).CheckinRegister(admin, &capapi.CheckinRegisterInput{ChildID: &a.k3})
	if err != nil {
		t.Fatal(err)
	}
	after, afterCode := out.CheckinID, *out.PickupCode
	var afterKid string
	e.sys(func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT pickup_key_id FROM checkins WHERE id = $1`, after).Scan(&afterKid)
	})
	if afterKid != next.ID || afterKid == kid {
		t.Errorf("after the rotation the code is under key %s; want the new key %s (the old one was %s)", afterKid, next.ID, kid)
	}
	_, err = e.invoke(admin, capapi.CapCheckoutRegister, map[string]any{"checkin_id": before, "pickup_code": wrongCode(beforeCode), "picked_up_by": a.g1Name})
	wantInvalid(t, err, "pickup_code")
	for _, c := range []struct {
		id          uuid.UUID
		code, adult string
	}{
		{before, beforeCode, a.g1Name},         // issued under the key rotated out
		{after, afterCode, "Responsável Dois"}, // under the new key
		{a.ck2, fixtureCode, a.g1Name},         // a legacy row: unkeyed, pickup_key_id NULL
	} {
		if _, err := e.invoke(admin, capapi.CapCheckoutRegister, map[string]any{"checkin_id": c.id, "pickup_code": c.code, "picked_up_by": c.adult}); err != nil {
			t.Errorf("check-out of %s with its code: %v", c.id, err)
		}
	}
}
