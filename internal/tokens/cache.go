package tokens

import (
	"sync"
	"time"

	"github.com/neemias/neemias-mcp/internal/principal"
)

// Cache remembers tokens that verified, so a busy client's every request does not redo the
// RS256 signature check and claim parsing. Entries are keyed by the token's SHA-256 (the token
// itself is never kept), live at most until the token expires, and the set is bounded. The
// Verifier's Check (the authorization server's revocation lookup) still runs on every hit,
// unless the Verifier's CheckCache remembers a recent pass (see CheckCache for its delay).
type Cache struct {
	// MaxEntries bounds memory (default 10 000).
	MaxEntries int

	mu      sync.Mutex
	entries map[[32]byte]cached
}

type cached struct {
	p      principal.Principal
	claims Claims
	exp    time.Time
}

func (c *Cache) get(k [32]byte, now time.Time) (cached, bool) {
	if c == nil {
		return cached{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok {
		return cached{}, false
	}
	if !now.Before(e.exp) {
		delete(c.entries, k)
		return cached{}, false
	}
	return e, true
}

func (c *Cache) put(k [32]byte, e cached, now time.Time) {
	if c == nil {
		return
	}
	max := c.MaxEntries
	if max <= 0 {
		max = 10_000
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[[32]byte]cached{}
	}
	if len(c.entries) >= max {
		for key, old := range c.entries {
			if !now.Before(old.exp) {
				delete(c.entries, key)
			}
		}
		// Still full: drop arbitrary entries (map order) down to 90 %; they re-verify.
		for key := range c.entries {
			if len(c.entries) < max*9/10 {
				break
			}
			delete(c.entries, key)
		}
	}
	c.entries[k] = e
}

// Len is the number of cached tokens.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
