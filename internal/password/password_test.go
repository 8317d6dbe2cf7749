package password_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/internal/onboard"
	"github.com/neemias/neemias-mcp/internal/password"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// codeState is what the database holds about a code: whether it is used or revoked, and
// whether the account has a password.
func codeState(t *testing.T, st *store.Store, code string) (used, revoked, hasPassword bool) {
	t.Helper()
	h := sha256.Sum256([]byte(code))
	err := st.Pool().QueryRow(context.Background(), `SELECT c.used_at IS NOT NULL, c.revoked_at IS NOT NULL, u.password_hash IS NOT NULL
		FROM password_setup_codes c JOIN users u ON u.id = c.user_id WHERE c.code_hash = $1`, h[:]).Scan(&used, &revoked, &hasPassword)
	if err != nil {
		t.Fatalf("code state: %v", err)
	}
	return used, revoked, hasPassword
}

// userActions are the audit entries of the set-password page: "action outcome client user".
func userActions(t *testing.T, st *store.Store, user uuid.UUID) []string {
	t.Helper()
	rows, err := st.Pool().Query(context.Background(), `SELECT action || ' ' || outcome || ' ' || client_id
		FROM audit_log WHERE capability = 'account' AND user_id = $1 AND target_ids = ARRAY[$1]::uuid[] ORDER BY id`, user)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPasswordCodes: a code is 256 random bits stored only as a hash, works once, and every
// refusal (expired, used, revoked by a newer code or by the operator's set-password,
// tampered, malformed, a disabled account) is the same error and writes no password; bad
// passwords are refused before anything is written.
func TestPasswordCodes(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	if _, err := onboard.CreateChurch(ctx, st, onboard.NewChurch{Name: "Central", Slug: "central"}); err != nil {
		t.Fatal(err)
	}
	if _, err := onboard.AddUser(ctx, st, "central", onboard.NewUser{Email: "admin@c.example", Role: "ADMIN"}); err != nil {
		t.Fatal(err)
	}
	n := 0
	add := func(t *testing.T) (onboard.User, onboard.PasswordCode) {
		t.Helper()
		n++
		u, pc, err := onboard.AddLocalUser(ctx, st, "central", onboard.NewUser{Email: "p" + string(rune('a'+n)) + "@c.example", Role: "CADASTRO"}, password.DefaultCodeTTL)
		if err != nil {
			t.Fatal(err)
		}
		return u, pc
	}

	t.Run("works once", func(t *testing.T) {
		u, pc := add(t)
		if len(pc.Code) != 43 || pc.ExpiresAt.Before(time.Now().Add(71*time.Hour)) || pc.User.ID != u.ID {
			t.Fatalf("code %d chars, expires %v", len(pc.Code), pc.ExpiresAt)
		}
		if got := pc.Link("https://mcp.c.example/"); got != "https://mcp.c.example/set-password?code="+pc.Code {
			t.Errorf("link %s", got)
		}
		var plain int
		if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM password_setup_codes WHERE encode(code_hash, 'escape') LIKE '%' || $1 || '%'`, pc.Code).Scan(&plain); err != nil || plain != 0 {
			t.Errorf("the code is stored in clear: %d %v", plain, err)
		}
		email, err := password.CodeAccount(ctx, st, pc.Code)
		if err != nil || email != u.Email {
			t.Fatalf("account of the code: %q %v", email, err)
		}
		if err := password.Redeem(ctx, st, pc.Code, "uma senha bem longa"); err != nil {
			t.Fatal(err)
		}
		if used, _, has := codeState(t, st, pc.Code); !used || !has {
			t.Errorf("after use: used %v, password %v", used, has)
		}
		if err := password.Redeem(ctx, st, pc.Code, "outra senha bem longa"); !errors.Is(err, password.ErrCodeInvalid) {
			t.Errorf("second use: %v", err)
		}
		if _, err := password.CodeAccount(ctx, st, pc.Code); !errors.Is(err, password.ErrCodeInvalid) {
			t.Errorf("account of a used code: %v", err)
		}
		want := []string{"user.password_link.use allowed neemias-set-password", "user.password_link.refused denied neemias-set-password"}
		if got := userActions(t, st, u.ID); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("user's audit entries %q, want %q", got, want)
		}
	})

	for _, tc := range []struct {
		name string
		// spoil turns a fresh code of a fresh account into one that must be refused.
		spoil func(t *testing.T, pc onboard.PasswordCode) string
	}{
		{"expired", func(t *testing.T, pc onboard.PasswordCode) string {
			h := sha256.Sum256([]byte(pc.Code))
			if _, err := st.Pool().Exec(ctx, `UPDATE password_setup_codes SET created_at = now() - interval '4 days',
				expires_at = now() - interval '1 second' WHERE code_hash = $1`, h[:]); err != nil {
				t.Fatal(err)
			}
			return pc.Code
		}},
		{"tampered", func(t *testing.T, pc onboard.PasswordCode) string {
			b := []byte(pc.Code)
			b[10] = map[bool]byte{true: 'B', false: 'A'}[b[10] == 'A']
			return string(b)
		}},
		{"truncated", func(t *testing.T, pc onboard.PasswordCode) string { return pc.Code[:42] }},
		{"padded", func(t *testing.T, pc onboard.PasswordCode) string { return pc.Code + "=" }},
		{"empty", func(t *testing.T, pc onboard.PasswordCode) string { return "" }},
		{"replaced by a newer link", func(t *testing.T, pc onboard.PasswordCode) string {
			if _, err := onboard.IssuePasswordCode(ctx, st, "central", pc.User.Email, time.Hour); err != nil {
				t.Fatal(err)
			}
			return pc.Code
		}},
		{"the operator set the password", func(t *testing.T, pc onboard.PasswordCode) string {
			if err := onboard.SetPassword(ctx, st, "central", pc.User.Email, "senha do operador"); err != nil {
				t.Fatal(err)
			}
			return pc.Code
		}},
		{"account disabled", func(t *testing.T, pc onboard.PasswordCode) string {
			if _, _, err := onboard.DisableUser(ctx, st, "central", pc.User.Email); err != nil {
				t.Fatal(err)
			}
			return pc.Code
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, pc := add(t)
			code := tc.spoil(t, pc)
			_, _, hadPassword := codeState(t, st, pc.Code)
			if _, err := password.CodeAccount(ctx, st, code); !errors.Is(err, password.ErrCodeInvalid) {
				t.Errorf("account of the code: %v", err)
			}
			err := password.Redeem(ctx, st, code, "uma senha bem longa")
			if !errors.Is(err, password.ErrCodeInvalid) || err.Error() != password.ErrCodeInvalid.Error() {
				t.Errorf("redeem: %v", err)
			}
			if used, _, has := codeState(t, st, pc.Code); used || has != hadPassword {
				t.Errorf("a refused code changed something: used %v, password %v (before %v)", used, has, hadPassword)
			}
			if got := userActions(t, st, u.ID); len(got) > 0 && got[len(got)-1] == "user.password_link.use allowed neemias-set-password" {
				t.Errorf("refusal audited as a use: %q", got)
			}
		})
	}

	for _, tc := range []struct {
		name, password string
		want           error
	}{
		{"too short", "curta-9ch", store.ErrPasswordTooShort},
		{"too long", strings.Repeat("x", store.MaxPasswordLen+1), store.ErrPasswordTooLong},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, pc := add(t)
			if err := password.Redeem(ctx, st, pc.Code, tc.password); !errors.Is(err, tc.want) {
				t.Errorf("err %v, want %v", err, tc.want)
			}
			if used, revoked, has := codeState(t, st, pc.Code); used || revoked || has {
				t.Errorf("a refused password wrote: used %v revoked %v password %v", used, revoked, has)
			}
		})
	}

	t.Run("issuing", func(t *testing.T) {
		for _, ttl := range []time.Duration{time.Minute, 31 * 24 * time.Hour} {
			if _, err := onboard.IssuePasswordCode(ctx, st, "central", "admin@c.example", ttl); err == nil || !strings.Contains(err.Error(), "--expires-in") {
				t.Errorf("ttl %s: %v", ttl, err)
			}
		}
		if _, _, err := onboard.AddLocalUser(ctx, st, "central", onboard.NewUser{Email: "x@c.example", Role: "ADMIN"}, time.Second); err == nil {
			t.Error("a user was added with a bad ttl")
		}
		if _, err := onboard.IssuePasswordCode(ctx, st, "central", "nobody@c.example", time.Hour); err == nil || !strings.Contains(err.Error(), "has no account") {
			t.Errorf("unknown account: %v", err)
		}
		if _, err := onboard.CheckPublicURL("mcp.c.example"); err == nil {
			t.Error("a relative public URL was accepted")
		}
		if u, err := onboard.CheckPublicURL("https://mcp.c.example/"); err != nil || u != "https://mcp.c.example" {
			t.Errorf("public URL %q %v", u, err)
		}
		var issued int
		if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE capability = 'operator' AND action = 'user.password_link'
			AND user_id IS NULL AND client_id = 'neemias-mcp-cli'`).Scan(&issued); err != nil || issued < n {
			t.Errorf("%d issuances audited as operator actions, want at least %d (%v)", issued, n, err)
		}
	})
}
