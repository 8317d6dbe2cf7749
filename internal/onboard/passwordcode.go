package onboard

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/store"
)

// One-time set-password codes (migration 00008). The operator's `user add` and
// `user reset-password` issue one and print it once, as a link to the authorization server's
// /set-password page; the person opens it and chooses the password there. The operator never
// sees a password, and no password is ever on a command line. A code is 256 random bits
// (base64url, 43 characters), stored only as its SHA-256 hash, bound to one account, single
// use, and valid for a limited time; issuing a new one revokes the account's earlier unused
// ones.

// Lifetimes of a set-password code.
const (
	DefaultPasswordCodeTTL = 72 * time.Hour
	MinPasswordCodeTTL     = 5 * time.Minute
	MaxPasswordCodeTTL     = 30 * 24 * time.Hour
)

// PathSetPassword is the page of the authorization server that redeems a code.
const PathSetPassword = "/set-password"

// SetPasswordClientID is the client_id of the audit entries the set-password page writes.
const SetPasswordClientID = "neemias-set-password"

// AccountCapability is the audit_log.capability of what a person does to their own account
// outside any request (the set-password page).
const AccountCapability = "account"

// Audit actions of the codes.
const (
	ActionPasswordLinkIssue   = "user.password_link"
	ActionPasswordLinkUse     = "user.password_link.use"
	ActionPasswordLinkRefused = "user.password_link.refused"
	ActionSetPassword         = "user.set_password"
)

// codeBytes is the randomness of a code: 256 bits (the issue asks for at least 128).
const codeBytes = 32

// ErrPasswordCodeInvalid is any code that cannot set a password: unknown, malformed,
// tampered, expired, used, revoked, or of a disabled account. Its message says nothing about
// which, nor whether an account exists.
var ErrPasswordCodeInvalid = errors.New("the set-password link is invalid, has expired or was used already")

// PasswordCode is a code just issued. Code is the secret: show it once, never log it.
type PasswordCode struct {
	Code      string
	ExpiresAt time.Time
	User      User
}

// Link is the set-password page's address for the code, under publicURL (the server's
// --public-url, its issuer).
func (c PasswordCode) Link(publicURL string) string {
	return strings.TrimSuffix(publicURL, "/") + PathSetPassword + "?" + url.Values{"code": {c.Code}}.Encode()
}

// CheckPublicURL accepts the absolute http(s) base URL a link is printed under.
func CheckPublicURL(publicURL string) (string, error) {
	u, err := url.Parse(strings.TrimSuffix(strings.TrimSpace(publicURL), "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("--public-url %q: give the server's base URL, as serve --public-url has it (for example https://mcp.igreja.example)", publicURL)
	}
	return u.String(), nil
}

func checkCodeTTL(ttl time.Duration) error {
	if ttl < MinPasswordCodeTTL || ttl > MaxPasswordCodeTTL {
		return fmt.Errorf("--expires-in %s: a set-password link lives from %s to %s", ttl, MinPasswordCodeTTL, MaxPasswordCodeTTL)
	}
	return nil
}

// AddLocalUser is [AddUser] for an account that logs in with a local password: in the same
// transaction it issues the account's first set-password code, valid for ttl.
func AddLocalUser(ctx context.Context, st *store.Store, churchSlug string, in NewUser, ttl time.Duration) (User, PasswordCode, error) {
	if err := checkCodeTTL(ttl); err != nil {
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
	if err := checkCodeTTL(ttl); err != nil {
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
	q := db.New(tx)
	if _, err := q.RevokePasswordSetupCodes(ctx, db.RevokePasswordSetupCodesParams{ChurchID: ch.ID, UserID: u.ID}); err != nil {
		return PasswordCode{}, err
	}
	if _, err := q.PurgePasswordSetupCodes(ctx); err != nil {
		return PasswordCode{}, err
	}
	b := make([]byte, codeBytes)
	_, _ = rand.Read(b) // never fails (crypto/rand panics rather than return an error)
	code := base64.RawURLEncoding.EncodeToString(b)
	exp, err := q.InsertPasswordSetupCode(ctx, db.InsertPasswordSetupCodeParams{
		CodeHash: codeHash(code), ChurchID: ch.ID, UserID: u.ID, TtlSeconds: ttl.Seconds(),
	})
	if err != nil {
		return PasswordCode{}, err
	}
	if err := record(ctx, tx, ch.ID, ActionPasswordLinkIssue, u.ID); err != nil {
		return PasswordCode{}, err
	}
	return PasswordCode{Code: code, ExpiresAt: exp, User: u}, nil
}

func codeHash(code string) []byte {
	h := sha256.Sum256([]byte(code))
	return h[:]
}

// wellFormed reports whether code has the shape of an issued code; anything else is refused
// before it reaches the database.
func wellFormed(code string) bool {
	if len(code) != base64.RawURLEncoding.EncodedLen(codeBytes) {
		return false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(code)
	return err == nil && len(b) == codeBytes
}

// PasswordCodeAccount tells the set-password page whose password a usable code sets (the
// account's email, for the form), writing nothing; [ErrPasswordCodeInvalid] otherwise.
func PasswordCodeAccount(ctx context.Context, st *store.Store, code string) (email string, err error) {
	if !wellFormed(code) {
		return "", ErrPasswordCodeInvalid
	}
	err = st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		row, err := db.New(tx).GetPasswordSetupCode(ctx, codeHash(code))
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && !row.Usable) {
			return ErrPasswordCodeInvalid
		}
		email = row.Email
		return err
	})
	if errors.Is(err, ErrPasswordCodeInvalid) {
		return "", ErrPasswordCodeInvalid
	}
	return email, err
}

// RedeemPasswordCode sets the password of the code's account and uses the code up, in one
// transaction: the password is checked against the store's rules first (a refusal writes
// nothing), hashed with argon2id, the code marked used, the account's earlier codes revoked
// and its sessions ended (OAuth grants revoked with reason password_set, pending logins,
// login sessions and unredeemed authorization codes deleted), and the use audited as the user's own action.
// A code that cannot be used is [ErrPasswordCodeInvalid]; when it names an account (expired,
// used, revoked), the refusal is audited too.
func RedeemPasswordCode(ctx context.Context, st *store.Store, code, password string) error {
	if err := store.CheckNewPassword(password); err != nil {
		return err
	}
	if !wellFormed(code) {
		return ErrPasswordCodeInvalid
	}
	hash, err := store.HashPassword(password)
	if err != nil {
		return err
	}
	err = st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		q := db.New(tx)
		row, err := q.LockPasswordSetupCode(ctx, codeHash(code))
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrPasswordCodeInvalid
		}
		if err != nil {
			return err
		}
		if !row.Usable {
			if err := userAction(ctx, q, row.ChurchID, row.UserID, ActionPasswordLinkRefused, audit.Denied); err != nil {
				return err
			}
			return store.CommitWith(ErrPasswordCodeInvalid)
		}
		if n, err := q.UsePasswordSetupCode(ctx, codeHash(code)); err != nil {
			return err
		} else if n != 1 {
			return ErrPasswordCodeInvalid
		}
		if err := setPassword(ctx, q, row.ChurchID, row.UserID, hash); err != nil {
			return err
		}
		return userAction(ctx, q, row.ChurchID, row.UserID, ActionPasswordLinkUse, audit.Allowed)
	})
	if errors.Is(err, ErrPasswordCodeInvalid) {
		return ErrPasswordCodeInvalid
	}
	return err
}

// errDisabledMeanwhile is an account disabled between its check and the password's update.
var errDisabledMeanwhile = errors.New("the account is disabled; a disabled account cannot log in")

// setPassword stores hash as the account's password, revokes its other set-password codes
// and ends its sessions: whoever knew the old password (or held a session) is out.
func setPassword(ctx context.Context, q *db.Queries, church, user uuid.UUID, hash string) error {
	n, err := q.SetUserPasswordHash(ctx, db.SetUserPasswordHashParams{ChurchID: church, UserID: user, PasswordHash: hash})
	if err != nil {
		return err
	}
	if n != 1 {
		return errDisabledMeanwhile
	}
	if _, err := q.RevokePasswordSetupCodes(ctx, db.RevokePasswordSetupCodesParams{ChurchID: church, UserID: user}); err != nil {
		return err
	}
	if _, err := q.RevokeUserOAuthGrants(ctx, db.RevokeUserOAuthGrantsParams{ChurchID: church, UserID: user, Reason: "password_set"}); err != nil {
		return err
	}
	if _, err := q.DeleteUserOAuthLogins(ctx, db.DeleteUserOAuthLoginsParams{ChurchID: church, UserID: user}); err != nil {
		return err
	}
	// Its login sessions would end at their next use anyway (the password fingerprint no
	// longer matches); deleting them says so at once.
	if _, err := q.DeleteUserOAuthLoginSessions(ctx, db.DeleteUserOAuthLoginSessionsParams{ChurchID: church, UserID: user}); err != nil {
		return err
	}
	_, err = q.DeleteUserOAuthCodes(ctx, db.DeleteUserOAuthCodesParams{ChurchID: church, UserID: user})
	return err
}

func userAction(ctx context.Context, q *db.Queries, church, user uuid.UUID, action string, outcome audit.Outcome) error {
	return audit.InsertUserAction(ctx, q, church, user, audit.Entry{
		Capability: AccountCapability, Action: action, Targets: []uuid.UUID{user}, Outcome: outcome, ClientID: SetPasswordClientID,
	})
}
