package tokens

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2/expirable"
)

// DefaultCheckCacheSize bounds a CheckCache made with size 0.
const DefaultCheckCacheSize = 10_000

// CheckCache remembers, for a short TTL, that a token passed the Verifier's Check (the
// database lookup that its grant is not revoked, or that a development token's user is still
// enabled), so a busy client does not pay that round trip on every request. Only passes are
// remembered; a refusal or an error is looked up again next time. Entries are keyed by the
// token's SHA-256 and the set is bounded (least recently used first out).
//
// The price is the TTL: a revocation or a disabled account made elsewhere (another replica,
// the `user disable` command, SQL) takes effect within TTL on every replica. A revocation made
// by this process calls Forget, which takes effect on its next request.
type CheckCache struct {
	lru *lru.LRU[[32]byte, verdict]
	// mu orders Forget against remember: a Check that started before a Forget is not
	// remembered (it may have read the grant before the revocation committed).
	mu  sync.Mutex
	gen uint64
}

type verdict struct {
	key        [32]byte
	grant, sub string
}

// NewCheckCache returns a cache of at most size verdicts (0: DefaultCheckCacheSize), each
// kept for ttl; ttl ≤ 0 returns nil, which caches nothing (every request checks).
func NewCheckCache(size int, ttl time.Duration) *CheckCache {
	if ttl <= 0 {
		return nil
	}
	if size <= 0 {
		size = DefaultCheckCacheSize
	}
	return &CheckCache{lru: lru.NewLRU[[32]byte, verdict](size, nil, ttl)}
}

// Forget drops the verdicts of tokens of grant, and, when user is not empty, of every token
// whose subject is user: called after a revocation or a disable this process committed.
func (c *CheckCache) Forget(grant, user string) {
	if c == nil || grant == "" && user == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for _, v := range c.lru.Values() {
		if grant != "" && v.grant == grant || user != "" && v.sub == user {
			c.lru.Remove(v.key)
		}
	}
}

// Len is the number of remembered verdicts (expired ones included until they are purged).
func (c *CheckCache) Len() int {
	if c == nil {
		return 0
	}
	return c.lru.Len()
}

// check runs check on c's claims unless a pass of token k is remembered.
func (c *CheckCache) check(ctx context.Context, k [32]byte, claims *Claims, check func(context.Context, *Claims) error) error {
	if c == nil {
		return check(ctx, claims)
	}
	if _, ok := c.lru.Get(k); ok {
		return nil
	}
	c.mu.Lock()
	gen := c.gen
	c.mu.Unlock()
	if err := check(ctx, claims); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == gen {
		c.lru.Add(k, verdict{key: k, grant: claims.GrantID, sub: claims.Subject})
	}
	return nil
}

func tokenKey(token string) [32]byte { return sha256.Sum256([]byte(token)) }
