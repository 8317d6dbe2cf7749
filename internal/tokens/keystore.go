package tokens

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/store"
)

// KeyStore keeps signing keys in PostgreSQL (table oauth_signing_keys), shared by every
// replica. Public keys are cached in memory by key id; they never change once written.
type KeyStore struct {
	Pool *pgxpool.Pool

	mu     sync.Mutex
	public map[string]*rsa.PublicKey
}

// Active returns the active signing key, creating one the first time (safe when several
// replicas start at once: the unique index lets exactly one insert win).
func (s *KeyStore) Active(ctx context.Context) (Key, error) {
	q := db.New(s.Pool)
	for range 2 {
		row, err := q.ActiveSigningKey(ctx)
		if err == nil {
			k, err := parsePrivate(row.PrivatePem)
			if err != nil {
				return Key{}, fmt.Errorf("signing key %s: %w", row.Kid, err)
			}
			return Key{ID: row.Kid, Private: k}, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return Key{}, fmt.Errorf("loading signing key: %w", err)
		}
		_, params, err := newSigningKey()
		if err != nil {
			return Key{}, err
		}
		if _, err := q.InsertSigningKey(ctx, params); err != nil {
			return Key{}, fmt.Errorf("storing signing key: %w", err)
		}
	}
	return Key{}, ErrNoKey
}

// Public returns the verification key kid, or nil when there is none (unknown or retired).
func (s *KeyStore) Public(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	s.mu.Lock()
	if k, ok := s.public[kid]; ok {
		s.mu.Unlock()
		return k, nil
	}
	s.mu.Unlock()
	p, err := db.New(s.Pool).PublicSigningKey(ctx, kid)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("loading public key: %w", err)
	}
	block, _ := pem.Decode([]byte(p))
	if block == nil {
		return nil, fmt.Errorf("public key %s: not PEM", kid)
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("public key %s: %w", kid, err)
	}
	rsaPub, ok := pub.(*rsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("public key %s is not RSA", kid)
	}
	s.mu.Lock()
	if s.public == nil {
		s.public = map[string]*rsa.PublicKey{}
	}
	s.public[kid] = rsaPub
	s.mu.Unlock()
	return rsaPub, nil
}

// JWKS returns the public keys that still verify (the active one and those not yet past
// retire_after) as a JSON Web Key Set, for the authorization server's jwks_uri.
func (s *KeyStore) JWKS(ctx context.Context) (jose.JSONWebKeySet, error) {
	rows, err := db.New(s.Pool).PublicSigningKeys(ctx)
	if err != nil {
		return jose.JSONWebKeySet{}, fmt.Errorf("loading public keys: %w", err)
	}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	for _, r := range rows {
		pub, err := parsePublic(r.PublicPem)
		if err != nil {
			return jose.JSONWebKeySet{}, fmt.Errorf("public key %s: %w", r.Kid, err)
		}
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: pub, KeyID: r.Kid, Algorithm: string(jose.RS256), Use: "sig"})
	}
	return set, nil
}

// Rotate makes a fresh key the active one. The previous key keeps verifying for verifyFor
// (at least the longest token lifetime, so no token it signed is cut short), then drops out
// of the key set. Replicas pick the new key up when they next load the active key.
//
// The pick-up codes' HMAC key (pickup_code_keys, store.PickupKeys) rotates with it, in the same
// transaction: a new active pick-up key named by the new key's kid. The previous pick-up key
// stays, with no retire_after: codes issued under it verify until their check-ins close.
func (s *KeyStore) Rotate(ctx context.Context, verifyFor time.Duration) (Key, error) {
	k, params, err := newSigningKey()
	if err != nil {
		return Key{}, err
	}
	pickup, err := store.NewPickupKeyParams(k.ID)
	if err != nil {
		return Key{}, err
	}
	err = pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		if _, err := q.RetireActiveSigningKey(ctx, verifyFor.Seconds()); err != nil {
			return err
		}
		n, err := q.InsertSigningKey(ctx, params)
		if err == nil && n != 1 {
			err = errors.New("another key became active concurrently")
		}
		if err != nil {
			return err
		}
		if _, err := q.RetireActivePickupKey(ctx); err != nil {
			return err
		}
		n, err = q.InsertPickupKey(ctx, pickup)
		if err == nil && n != 1 {
			err = errors.New("another pick-up key became active concurrently")
		}
		return err
	})
	if err != nil {
		return Key{}, fmt.Errorf("rotating signing key: %w", err)
	}
	return k, nil
}

// newSigningKey generates a signing key and the row that stores it (PKCS #8 private and PKIX
// public key, PEM-encoded).
func newSigningKey() (Key, db.InsertSigningKeyParams, error) {
	k, err := GenerateKey()
	if err != nil {
		return Key{}, db.InsertSigningKeyParams{}, err
	}
	privDER, err := x509.MarshalPKCS8PrivateKey(k.Private)
	if err != nil {
		return Key{}, db.InsertSigningKeyParams{}, fmt.Errorf("encoding signing key: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&k.Private.PublicKey)
	if err != nil {
		return Key{}, db.InsertSigningKeyParams{}, fmt.Errorf("encoding public key: %w", err)
	}
	return k, db.InsertSigningKeyParams{
		Kid:        k.ID,
		PrivatePem: string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: privDER})),
		PublicPem:  string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})),
	}, nil
}

func parsePublic(p string) (*rsa.PublicKey, error) {
	return parsePEM[*rsa.PublicKey](p, x509.ParsePKIXPublicKey, "not RSA")
}

func parsePrivate(p string) (*rsa.PrivateKey, error) {
	return parsePEM[*rsa.PrivateKey](p, x509.ParsePKCS8PrivateKey, "not an RSA key")
}

// parsePEM decodes the PEM block p holds, parses its DER bytes with parse and checks that the
// key is a K, failing with wrongType otherwise.
func parsePEM[K any](p string, parse func(der []byte) (any, error), wrongType string) (K, error) {
	var zero K
	block, _ := pem.Decode([]byte(p))
	if block == nil {
		return zero, errors.New("not PEM")
	}
	k, err := parse(block.Bytes)
	if err != nil {
		return zero, err
	}
	key, ok := k.(K)
	if !ok {
		return zero, errors.New(wrongType)
	}
	return key, nil
}
