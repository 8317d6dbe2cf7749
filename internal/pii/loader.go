package pii

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	lru "github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/singleflight"

	"github.com/neemias/neemias-mcp/internal/store"
)

// Defaults of [LoaderOptions].
const (
	DefaultTTL      = 5 * time.Minute
	DefaultChurches = 64
)

// LoaderOptions tune a [Loader].
type LoaderOptions struct {
	// TTL is how long a church's values are used before they are read again: a child
	// registered now is protected at most TTL later (or at once after [Loader.Invalidate],
	// which the server calls after an enrollment through neemias_child_enroll; a roster
	// import runs in its own process, so the serving process sees its names after TTL).
	// Default DefaultTTL.
	TTL time.Duration
	// Churches bounds the cache (least recently used evicted). Default DefaultChurches.
	Churches int
}

// Loader reads one church's known values from the database and caches the built matcher per
// church.
//
// It reads in the maintenance context ([store.Store.InSystemTx], as internal/seed does),
// filtered by church_id in the query, not as the caller: under row-level security a volunteer
// or guardian sees only some of the church's children, and the scanner must protect all of
// them whoever calls. The values never leave this package: they go straight into the automata
// of [KnownValues], which has no accessor for them.
type Loader struct {
	store *store.Store
	cache *lru.LRU[uuid.UUID, *KnownValues]
	group singleflight.Group
}

// NewLoader returns a loader on s.
func NewLoader(s *store.Store, opts LoaderOptions) *Loader {
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.Churches <= 0 {
		opts.Churches = DefaultChurches
	}
	return &Loader{store: s, cache: lru.NewLRU[uuid.UUID, *KnownValues](opts.Churches, nil, opts.TTL)}
}

// ForChurch returns the church's known values, from the cache when fresh. Concurrent misses
// for one church share one database read.
func (l *Loader) ForChurch(ctx context.Context, church uuid.UUID) (*KnownValues, error) {
	if k, ok := l.cache.Get(church); ok {
		return k, nil
	}
	v, err, _ := l.group.Do(church.String(), func() (any, error) {
		if k, ok := l.cache.Get(church); ok {
			return k, nil
		}
		values, err := l.read(ctx, church)
		if err != nil {
			return nil, err
		}
		k, err := NewKnownValues(values)
		if err != nil {
			return nil, err
		}
		l.cache.Add(church, k)
		return k, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*KnownValues), nil
}

// Invalidate drops the church's cached values (after a child or guardian is added or
// changed).
func (l *Loader) Invalidate(church uuid.UUID) { l.cache.Remove(church) }

// Archived children are included: their data is still the church's to protect.
const (
	childrenSQL  = `SELECT name, to_char(birth_date, 'YYYY-MM-DD') FROM children WHERE church_id = $1`
	guardiansSQL = `SELECT name, phone FROM guardians WHERE church_id = $1`
)

func (l *Loader) read(ctx context.Context, church uuid.UUID) ([]Value, error) {
	var values []Value
	err := l.store.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		values = values[:0]
		rows, err := tx.Query(ctx, childrenSQL, church)
		if err != nil {
			return err
		}
		var name, other string
		_, err = pgx.ForEachRow(rows, []any{&name, &other}, func() error {
			values = append(values, Value{KindChildName, name}, Value{KindBirthDate, other})
			return nil
		})
		if err != nil {
			return err
		}
		rows, err = tx.Query(ctx, guardiansSQL, church)
		if err != nil {
			return err
		}
		_, err = pgx.ForEachRow(rows, []any{&name, &other}, func() error {
			values = append(values, Value{KindGuardianName, name}, Value{KindGuardianPhone, other})
			return nil
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("pii: read known values: %w", err)
	}
	return values, nil
}
