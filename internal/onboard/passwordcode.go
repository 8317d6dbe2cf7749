package onboard

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/internal/password"
	"github.com/neemias/neemias-mcp/internal/store"
)

// The operator's side of set-password codes (internal/password): `user add` and
// `user reset-password` issue one and print it once, as a link to the authorization server's
// /set-password page, where the person chooses the password.

// PasswordCode is a code just issued. Code is the secret: show it once, never log it.
type PasswordCode struct {
	Code      string
	ExpiresAt time.Time
	User      User
}

// Link is the set-password page's address for the code, under publicURL (the server's
// --public-url, its issuer).
func (c PasswordCode) Link(publicURL string) string { return password.Link(publicURL, c.Code) }

// CheckPublicURL accepts the absolute http(s) base URL a link is printed under.
func CheckPublicURL(publicURL string) (string, error) {
	u, err := url.Parse(strings.TrimSuffix(strings.TrimSpace(publicURL), "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("--public-url %q: give the server's base URL, as serve --public-url has it (for example https://mcp.igreja.example)", publicURL)
	}
	return u.String(), nil
}

// AddLocalUser is [AddUser] for an account that logs in with a local password: in the same
// transaction it issues the account's first set-password code, valid for ttl.
func AddLocalUser(ctx context.Context, st *store.Store, churchSlug string, in NewUser, ttl time.Duration) (User, PasswordCode, error) {
	if err := password.CheckCodeTTL(ttl); err != nil {
		return User{}, PasswordCode{}, err
	}
	var pc PasswordCode
	u, err := addUser(ctx, st, churchSlug, in, func(ctx context.Context, tx pgx.Tx, ch Church, u User) error {
		var err error
		pc, err = issueCode(ctx, tx, ch, u, ttl)
		return err
	})
	if err != nil {
		return User{}, PasswordCode{}, err
	}
	return u, pc, nil
}

// IssuePasswordCode issues a new set-password code for an enabled account (a forgotten
// password, a link that expired), revoking its earlier unused codes. The account's current
// password, if any, keeps working until the code is used.
func IssuePasswordCode(ctx context.Context, st *store.Store, churchSlug, email string, ttl time.Duration) (PasswordCode, error) {
	if err := password.CheckCodeTTL(ttl); err != nil {
		return PasswordCode{}, err
	}
	var pc PasswordCode
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		ch, err := ChurchBySlug(ctx, tx, churchSlug)
		if err != nil {
			return err
		}
		u, err := findUser(ctx, tx, ch, email)
		if err != nil {
			return err
		}
		pc, err = issueCode(ctx, tx, ch, u, ttl)
		return err
	})
	return pc, err
}

func issueCode(ctx context.Context, tx pgx.Tx, ch Church, u User, ttl time.Duration) (PasswordCode, error) {
	if u.DisabledAt != nil {
		return PasswordCode{}, fmt.Errorf("the account %q is disabled; a disabled account cannot log in", u.Email)
	}
	code, exp, err := password.IssueCode(ctx, tx, ch.ID, u.ID, ttl)
	if err != nil {
		return PasswordCode{}, err
	}
	if err := record(ctx, tx, ch.ID, password.ActionLinkIssue, u.ID); err != nil {
		return PasswordCode{}, err
	}
	return PasswordCode{Code: code, ExpiresAt: exp, User: u}, nil
}
