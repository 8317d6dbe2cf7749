package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/neemias/neemias-mcp/gen/db"
)

// PickupKey is one key of the pick-up codes' HMAC (table pickup_code_keys, migration 00103):
// its id, stored with every hash made under it (checkins.pickup_key_id), and its secret.
type PickupKey struct {
	ID     string
	Secret []byte
}

// String and LogValue name the key by id: its secret never reaches a log or an error.
func (k PickupKey) String() string { return "pick-up key " + k.ID }

// LogValue implements slog.LogValuer.
func (k PickupKey) LogValue() slog.Value { return slog.StringValue(k.ID) }

// pickupKeyLen is the length of a pick-up key's secret: HMAC-SHA256's block of entropy.
const pickupKeyLen = 32

// DefaultPickupKeyTTL is how long [PickupKeys] trusts its copy of the keys before it reads them
// again: after a rotation at another replica (or `neemias-mcp keys rotate`), new codes are
// hashed under the previous key for at most this long, and they verify all the same.
const DefaultPickupKeyTTL = time.Minute

// PickupKeys is the pick-up codes' keyring: the rows of pickup_code_keys, shared by every
// replica, read on Pool (the owner's connection; the application role that runs requests
// cannot read them) and kept in memory. Keys never change once written; which one is active
// is read again after TTL. It is safe for concurrent use.
//
// Read keys before a request's transaction, not inside it ([PickupKeys.Active] refreshes the
// copy): a read inside holds a second connection of the pool while the transaction holds one.
// [PickupKeys.Get] of a key the copy lacks (made by another replica within TTL) reads again,
// bounded by a short timeout.
type PickupKeys struct {
	Pool *pgxpool.Pool
	// TTL is how long the copy is trusted (zero: DefaultPickupKeyTTL).
	TTL time.Duration

	mu       sync.Mutex
	byID     map[string]PickupKey
	active   string
	loadedAt time.Time
}

// ErrNoPickupKey is a check-in whose pickup_key_id names no key (the foreign key forbids it).
var ErrNoPickupKey = errors.New("store: unknown pick-up key")

// pickupKeyTimeout bounds one read of the keys.
const pickupKeyTimeout = 2 * time.Second

func (k *PickupKeys) ttl() time.Duration {
	if k.TTL > 0 {
		return k.TTL
	}
	return DefaultPickupKeyTTL
}

// Active returns the key new codes are hashed under, making the first one when there is none
// (safe when several replicas do at once: the unique index lets one insert win).
func (k *PickupKeys) Active(ctx context.Context) (PickupKey, error) {
	k.mu.Lock()
	if key, ok := k.byID[k.active]; ok && time.Since(k.loadedAt) < k.ttl() {
		k.mu.Unlock()
		return key, nil
	}
	k.mu.Unlock()
	for range 2 {
		if err := k.load(ctx); err != nil {
			return PickupKey{}, err
		}
		k.mu.Lock()
		key, ok := k.byID[k.active]
		k.mu.Unlock()
		if ok {
			return key, nil
		}
		params, err := NewPickupKeyParams("")
		if err != nil {
			return PickupKey{}, err
		}
		if _, err := db.New(k.Pool).InsertPickupKey(ctx, params); err != nil {
			return PickupKey{}, fmt.Errorf("store: storing the first pick-up key: %w", MapError(err))
		}
	}
	return PickupKey{}, errors.New("store: no active pick-up key")
}

// Get returns the key id names (a check-in's pickup_key_id), reading the keys again when the
// copy lacks it.
func (k *PickupKeys) Get(ctx context.Context, id string) (PickupKey, error) {
	k.mu.Lock()
	key, ok := k.byID[id]
	k.mu.Unlock()
	if ok {
		return key, nil
	}
	if err := k.load(ctx); err != nil {
		return PickupKey{}, err
	}
	k.mu.Lock()
	key, ok = k.byID[id]
	k.mu.Unlock()
	if !ok {
		return PickupKey{}, ErrNoPickupKey
	}
	return key, nil
}

// load replaces the copy with the table's keys.
func (k *PickupKeys) load(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pickupKeyTimeout)
	defer cancel()
	rows, err := db.New(k.Pool).PickupKeys(ctx)
	if err != nil {
		return fmt.Errorf("store: loading the pick-up keys: %w", MapError(err))
	}
	byID := make(map[string]PickupKey, len(rows))
	active := ""
	for _, r := range rows {
		if len(r.Secret) != pickupKeyLen {
			return fmt.Errorf("store: pick-up key %s: secret of %d bytes", r.Kid, len(r.Secret))
		}
		byID[r.Kid] = PickupKey{ID: r.Kid, Secret: r.Secret}
		if r.Active {
			active = r.Kid
		}
	}
	k.mu.Lock()
	k.byID, k.active, k.loadedAt = byID, active, time.Now()
	k.mu.Unlock()
	return nil
}

// NewPickupKeyParams draws a pick-up key: the row of an active key named kid (empty: a random
// id), for InsertPickupKey. tokens.KeyStore.Rotate names it after the new signing key.
func NewPickupKeyParams(kid string) (db.InsertPickupKeyParams, error) {
	secret := make([]byte, pickupKeyLen)
	if _, err := rand.Read(secret); err != nil {
		return db.InsertPickupKeyParams{}, fmt.Errorf("store: drawing a pick-up key: %w", err)
	}
	if kid == "" {
		id := make([]byte, 8)
		if _, err := rand.Read(id); err != nil {
			return db.InsertPickupKeyParams{}, fmt.Errorf("store: drawing a pick-up key id: %w", err)
		}
		kid = hex.EncodeToString(id)
	}
	return db.InsertPickupKeyParams{Kid: kid, Secret: secret}, nil
}
