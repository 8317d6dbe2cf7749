// Package apikey is the church API keys of REST automation (n8n, scripts): each acts as one
// account of its church, with scopes within that account's role, and is accepted on /api/v1
// only; the MCP endpoint refuses it with a 401 that says MCP needs OAuth. A key reads
// nmk_<id>_<secret>: the id finds the row, the secret (32 random bytes) is compared by its
// SHA-256 in constant time. Only the hash is stored; the key is shown once. Revoking a key,
// disabling its account or reaching its expiry refuses it on the next request (no cache).
// Hand-written.
package apikey

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/authn"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/store"
)

// Prefix starts every key: how the edge tells a key from an OAuth token.
const Prefix = "nmk_"

// ClientPrefix prefixes the client id an API key's calls are audited under ("apikey:<id>").
const ClientPrefix = "apikey:"

// Is reports whether token has the form of an API key (not whether it is valid).
func Is(token string) bool { return strings.HasPrefix(token, Prefix) }

// Key is a stored key, without its secret.
type Key struct {
	ID        uuid.UUID
	Name      string
	Scopes    capability.ScopeSet
	Email     string // of the account it acts as
	Role      string
	CreatedAt time.Time
	ExpiresAt *time.Time
	RevokedAt *time.Time
}

// New describes a key to create.
type New struct {
	Church, User uuid.UUID
	Name         string
	// Scopes requested; empty means all of the account's role. Each must be within the role.
	Scopes []string
	// TTL, when positive, makes the key expire.
	TTL time.Duration
}

// Create stores a new key for n and returns it with its secret form, the only time it exists.
func Create(ctx context.Context, st *store.Store, n New) (Key, string, error) {
	if l := len(strings.TrimSpace(n.Name)); l < 1 || l > 100 {
		return Key{}, "", errors.New("apikey: --name must have 1 to 100 characters")
	}
	id := uuid.New()
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return Key{}, "", fmt.Errorf("apikey: %w", err)
	}
	token := Prefix + hex.EncodeToString(id[:]) + "_" + base64.RawURLEncoding.EncodeToString(secret)
	hash := sha256.Sum256(secret)
	var k Key
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		q := db.New(tx)
		u, err := q.OAuthUser(ctx, n.User)
		if errors.Is(err, pgx.ErrNoRows) || err == nil && u.ChurchID != n.Church {
			return errors.New("apikey: no such account in this church")
		}
		if err != nil {
			return err
		}
		if u.DisabledAt != nil {
			return errors.New("apikey: the account is disabled")
		}
		role, _ := scopes.RoleScopes(u.Role)
		granted := role
		if len(n.Scopes) > 0 {
			granted = capability.NewScopeSet(n.Scopes...)
			for _, s := range granted.List() {
				if !role.Has(s) {
					return fmt.Errorf("apikey: the account's role %s cannot hold scope %q; it may hold: %s", u.Role, s, role)
				}
			}
		}
		var exp *time.Time
		if n.TTL > 0 {
			t := time.Now().Add(n.TTL)
			exp = &t
		}
		if err := q.InsertAPIKey(ctx, db.InsertAPIKeyParams{ID: id, ChurchID: n.Church, UserID: n.User, Name: strings.TrimSpace(n.Name),
			Scopes: granted.List(), SecretHash: hash[:], ExpiresAt: exp}); err != nil {
			return err
		}
		k = Key{ID: id, Name: strings.TrimSpace(n.Name), Scopes: granted, Role: u.Role, CreatedAt: time.Now(), ExpiresAt: exp}
		return audit.InsertOperator(ctx, q, n.Church, audit.Entry{Capability: "api_key", Action: "apikey.created", Targets: []uuid.UUID{id, n.User}, Outcome: audit.Allowed})
	})
	if err != nil {
		return Key{}, "", err
	}
	return k, token, nil
}

// List returns a church's keys, oldest first.
func List(ctx context.Context, st *store.Store, church uuid.UUID) ([]Key, error) {
	var out []Key
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := db.New(tx).ListAPIKeys(ctx, church)
		for _, r := range rows {
			out = append(out, Key{ID: r.ID, Name: r.Name, Scopes: capability.NewScopeSet(r.Scopes...), Email: r.Email, Role: r.Role,
				CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, RevokedAt: r.RevokedAt})
		}
		return err
	})
	return out, err
}

// Revoke revokes a church's key; false when there is no such unrevoked key.
func Revoke(ctx context.Context, st *store.Store, church, id uuid.UUID) (bool, error) {
	var n int64
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		q := db.New(tx)
		if n, err = q.RevokeAPIKey(ctx, db.RevokeAPIKeyParams{ChurchID: church, ID: id}); err != nil || n == 0 {
			return err
		}
		return audit.InsertOperator(ctx, q, church, audit.Entry{Capability: "api_key", Action: "apikey.revoked", Targets: []uuid.UUID{id}, Outcome: audit.Allowed})
	})
	return n == 1, err
}

// parse splits a key into its id and secret.
func parse(token string) (uuid.UUID, []byte, bool) {
	rest, ok := strings.CutPrefix(token, Prefix)
	if !ok {
		return uuid.Nil, nil, false
	}
	idHex, secretB64, ok := strings.Cut(rest, "_")
	if !ok || len(idHex) != 32 {
		return uuid.Nil, nil, false
	}
	raw, err := hex.DecodeString(idHex)
	if err != nil {
		return uuid.Nil, nil, false
	}
	id, err := uuid.FromBytes(raw)
	if err != nil {
		return uuid.Nil, nil, false
	}
	secret, err := base64.RawURLEncoding.DecodeString(secretB64)
	if err != nil || len(secret) != 32 {
		return uuid.Nil, nil, false
	}
	return id, secret, true
}

// Verifier verifies API keys against the store (authn.Verifier). Every refusal wraps
// authn.ErrInvalidToken; a database failure does not (the edge answers 503).
type Verifier struct{ Store *store.Store }

var _ authn.Verifier = Verifier{}

// Verify returns the principal of a valid key: its account's user and church, the account's
// current role, the key's scopes within that role, client "apikey:<id>".
func (v Verifier) Verify(ctx context.Context, token string) (principal.Principal, error) {
	id, secret, ok := parse(token)
	if !ok {
		return principal.Principal{}, fmt.Errorf("%w: not an API key", authn.ErrInvalidToken)
	}
	k, err := db.New(v.Store.Pool()).APIKeyForVerify(ctx, id)
	sum := sha256.Sum256(secret)
	if errors.Is(err, pgx.ErrNoRows) {
		subtle.ConstantTimeCompare(sum[:], make([]byte, 32)) // same work for an unknown id
		return principal.Principal{}, fmt.Errorf("%w: unknown API key", authn.ErrInvalidToken)
	}
	if err != nil {
		return principal.Principal{}, fmt.Errorf("apikey: looking up a key: %w", err)
	}
	switch {
	case subtle.ConstantTimeCompare(sum[:], k.SecretHash) != 1:
		return principal.Principal{}, fmt.Errorf("%w: API key signature mismatch", authn.ErrInvalidToken)
	case k.Revoked:
		return principal.Principal{}, fmt.Errorf("%w: API key revoked", authn.ErrInvalidToken)
	case k.Expired:
		return principal.Principal{}, fmt.Errorf("%w: API key expired", authn.ErrInvalidToken)
	case k.UserDisabled:
		return principal.Principal{}, fmt.Errorf("%w: the API key's account is disabled", authn.ErrInvalidToken)
	}
	if _, ok := scopes.RoleScopes(k.Role); !ok {
		return principal.Principal{}, fmt.Errorf("%w: unknown role", authn.ErrInvalidToken)
	}
	return principal.Principal{UserID: k.UserID, ChurchID: k.ChurchID, Role: k.Role,
		Scopes: scopes.Grant(k.Role, capability.NewScopeSet(k.Scopes...)), ClientID: ClientPrefix + k.ID.String()}, nil
}
