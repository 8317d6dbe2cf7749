package onboard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/internal/onboard"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// TestLinkGuardian: a RESPONSAVEL account is tied to one guardian record of its church, once;
// a guardian of another account, an account of another role or one linked already, and an
// unknown guardian are refused naming what to do, and change nothing.
func TestLinkGuardian(t *testing.T) {
	t.Parallel()
	st := storetest.NewSeeded(t, seed.Options{ChildrenPerChurch: 20, Months: 1})
	ctx := context.Background()
	one := func(sql string, args ...any) (id uuid.UUID) {
		t.Helper()
		if err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error { return tx.QueryRow(ctx, sql, args...).Scan(&id) }); err != nil {
			t.Fatal(err)
		}
		return id
	}
	free := one(`SELECT id FROM guardians WHERE church_id = $1 AND user_id IS NULL ORDER BY id LIMIT 1`, seed.DemoChurchID)
	free2 := one(`SELECT id FROM guardians WHERE church_id = $1 AND user_id IS NULL ORDER BY id DESC LIMIT 1`, seed.DemoChurchID)
	taken := one(`SELECT id FROM guardians WHERE user_id = $1`, seed.DemoResponsavelID)
	u, err := onboard.AddUser(ctx, st, seed.DemoChurchSlug, onboard.NewUser{Email: "mae.nova@demo.neemias.test", Role: "RESPONSAVEL"})
	if err != nil {
		t.Fatal(err)
	}
	changed, err := onboard.LinkGuardian(ctx, st, seed.DemoChurchSlug, u.Email, free)
	if err != nil || !changed {
		t.Fatalf("link: changed %v, %v", changed, err)
	}
	if got := one(`SELECT user_id FROM guardians WHERE id = $1`, free); got != u.ID {
		t.Errorf("guardian's user_id %s, want %s", got, u.ID)
	}
	if got := one(`SELECT church_id FROM audit_log WHERE action = 'guardian.link_account' AND $1 = ANY(target_ids)`, free); got == uuid.Nil {
		t.Error("the link was not audited")
	}
	if again, err := onboard.LinkGuardian(ctx, st, seed.DemoChurchSlug, u.Email, free); err != nil || again {
		t.Errorf("link again: changed %v, %v", again, err)
	}
	for _, tc := range []struct {
		name, email string
		guardian    uuid.UUID
		want        string
	}{
		{"a guardian of another account", u.Email, taken, "linked to another account already"},
		{"an account linked already", seed.DemoResponsavelEmail, free2, "one account is one guardian"},
		{"not a guardian's account", seed.DemoVoluntarioEmail, free, "only RESPONSAVEL accounts"},
		{"an unknown guardian", u.Email, uuid.New(), "no guardian"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := onboard.LinkGuardian(ctx, st, seed.DemoChurchSlug, tc.email, tc.guardian); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if got := one(`SELECT user_id FROM guardians WHERE id = $1`, taken); got != seed.DemoResponsavelID {
		t.Error("a refused link changed the demo guardian's account")
	}
}
