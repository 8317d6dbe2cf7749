// Package password keeps a person's local password: the one-time set-password codes an
// operator issues (migration 00008) and the authorization server's /set-password page
// redeems, and the setting of a password, which ends every session of the account. The
// operator's commands (internal/onboard) issue codes and set passwords; the page
// (internal/oauth) reads and redeems codes; neither owns the other's part.
//
// A code is 256 random bits (base64url, 43 characters), stored only as its SHA-256 hash, bound
// to one account, single use, and valid for a limited time; issuing a new one revokes the
// account's earlier unused ones. The operator never sees a password, and no password is ever on
// a command line.
package password

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

// Lifetimes of a set-password code.
const (
	DefaultCodeTTL = 72 * time.Hour
	MinCodeTTL     = 5 * time.Minute
	MaxCodeTTL     = 30 * 24 * time.Hour
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
	ActionLinkIssue   = "user.password_link"
	ActionLinkUse     = "user.password_link.use"
	ActionLinkRefused = "user.password_link.refused"
	ActionSetPassword = "user.set_password"
)

// codeBytes is the randomness of a code: 256 bits (the issue asks for at least 128).
const codeBytes = 32

// ErrCodeInvalid is any code that cannot set a password: unknown, malformed, tampered,
// expired, used, revoked, or of a disabled account. Its message says nothing about which, nor
// whether an account exists.
var ErrCodeInvalid = errors.New("the set-password link is invalid, has expired or was used already")

// Link is the set-password page's address for code, under publicURL (the server's
// --public-url, its issuer).
func Link(publicURL, code string) string {
	return strings.TrimSuffix(publicURL, "/") + PathSetPassword + "?" + url.Values{"code": {code}}.Encode()
}

// CheckCodeTTL accepts a code lifetime between MinCodeTTL and MaxCodeTTL.
func CheckCodeTTL(ttl time.Duration) error {
	if ttl < MinCodeTTL || ttl > MaxCodeTTL {
		return fmt.Errorf("--expires-in %s: a set-password link lives from %s to %s", ttl, MinCodeTTL, MaxCodeTTL)
	}
	return nil
}

// IssueCode issues a code for the account user of church, valid for ttl, in the operator's
// transaction tx, revoking the account's earlier unused codes. The caller checks the account
// is enabled and audits the issue as its own action. The code is the secret: show it once,
// never log it.
func IssueCode(ctx context.Context, tx pgx.Tx, church, user uuid.UUID, ttl time.Duration) (code string, expires time.Time, err error) {
	q := db.New(tx)
	if _, err := q.RevokePasswordSetupCodes(ctx, db.RevokePasswordSetupCodesParams{ChurchID: church, UserID: user}); err != nil {
		return "", time.Time{}, err
	}
	if _, err := q.PurgePasswordSetupCodes(ctx); err != nil {
		return "", time.Time{}, err
	}
	b := make([]byte, codeBytes)
	_, _ = rand.Read(b) // never fails (crypto/rand panics rather than return an error)
	code = base64.RawURLEncoding.EncodeToString(b)
	expires, err = q.InsertPasswordSetupCode(ctx, db.InsertPasswordSetupCodeParams{
		CodeHash: codeHash(code), ChurchID: church, UserID: user, TtlSeconds: ttl.Seconds(),
	})
	if err != nil {
		return "", time.Time{}, err
	}
	return code, expires, nil
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

// CodeAccount tells the set-password page whose password a usable code sets (the
// account's email, for the form), writing nothing; [ErrCodeInvalid] otherwise.
func CodeAccount(ctx context.Context, st *store.Store, code string) (email string, err error) {
	if !wellFormed(code) {
		return "", ErrCodeInvalid
	}
	err = st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		row, err := db.New(tx).GetPasswordSetupCode(ctx, codeHash(code))
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && !row.Usable) {
			return ErrCodeInvalid
		}
		email = row.Email
		return err
	})
	if errors.Is(err, ErrCodeInvalid) {
		return "", ErrCodeInvalid
	}
	return email, err
}

// Redeem sets the password of the code's account and uses the code up, in one
// transaction: the password is checked against the store's rules first (a refusal writes
// nothing), hashed with argon2id, the code marked used, the account's earlier codes revoked
// and its sessions ended (OAuth grants revoked with reason password_set, pending logins,
// login sessions and unredeemed authorization codes deleted), and the use audited as the user's own action.
// A code that cannot be used is [ErrCodeInvalid]; when it names an account (expired,
// used, revoked), the refusal is audited too.
func Redeem(ctx context.Context, st *store.Store, code, password string) error {
	if err := store.CheckNewPassword(password); err != nil {
		return err
	}
	if !wellFormed(code) {
		return ErrCodeInvalid
	}
	hash, err := store.HashPassword(password)
	if err != nil {
		return err
	}
	err = st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		q := db.New(tx)
		row, err := q.LockPasswordSetupCode(ctx, codeHash(code))
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrCodeInvalid
		}
		if err != nil {
			return err
		}
		if !row.Usable {
			if err := userAction(ctx, q, row.ChurchID, row.UserID, ActionLinkRefused, audit.Denied); err != nil {
				return err
			}
			return store.CommitWith(ErrCodeInvalid)
		}
		if n, err := q.UsePasswordSetupCode(ctx, codeHash(code)); err != nil {
			return err
		} else if n != 1 {
			return ErrCodeInvalid
		}
		if err := Set(ctx, q, row.ChurchID, row.UserID, hash); err != nil {
			return err
		}
		return userAction(ctx, q, row.ChurchID, row.UserID, ActionLinkUse, audit.Allowed)
	})
	if errors.Is(err, ErrCodeInvalid) {
		return ErrCodeInvalid
	}
	return err
}

// errDisabledMeanwhile is an account disabled between its check and the password's update.
var errDisabledMeanwhile = errors.New("the account is disabled; a disabled account cannot log in")

// Set stores hash as the account's password, revokes its other set-password codes
// and ends its sessions: whoever knew the old password (or held a session) is out.
func Set(ctx context.Context, q *db.Queries, church, user uuid.UUID, hash string) error {
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
