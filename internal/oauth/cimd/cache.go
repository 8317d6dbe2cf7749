package cimd

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// cacheEntry is a fetched document or a remembered failure.
type cacheEntry struct {
	md      *Metadata
	err     error
	expires time.Time
}

// cache is a bounded map from client_id to result. When full, expired entries go first,
// then the entry that expires soonest.
type cache struct {
	mu      sync.Mutex
	max     int
	entries map[string]cacheEntry
}

func newCache(max int) *cache {
	return &cache{max: max, entries: make(map[string]cacheEntry)}
}

func (c *cache) get(key string, now time.Time) (cacheEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return cacheEntry{}, false
	}
	if !now.Before(e.expires) {
		delete(c.entries, key)
		return cacheEntry{}, false
	}
	return e, true
}

func (c *cache) put(key string, e cacheEntry, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.max {
		for k, old := range c.entries {
			if !now.Before(old.expires) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= c.max {
			var victim string
			var soonest time.Time
			for k, old := range c.entries {
				if victim == "" || old.expires.Before(soonest) {
					victim, soonest = k, old.expires
				}
			}
			delete(c.entries, victim)
		}
	}
	c.entries[key] = e
}

func (c *cache) delete(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, key)
}

func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// freshness returns how long a response may be reused per RFC 9111: s-maxage, then max-age,
// then Expires − Date, each less Age; zero when no-store or no-cache forbid reuse without
// revalidation (we do not revalidate) or the response is already stale. ok is false when the
// response says nothing, so the caller picks its default.
func freshness(h http.Header, now time.Time) (ttl time.Duration, ok bool) {
	var maxAge, sMaxAge = -1, -1
	for _, line := range h.Values("Cache-Control") {
		for _, d := range strings.Split(line, ",") {
			name, val, _ := strings.Cut(strings.TrimSpace(d), "=")
			val = strings.Trim(strings.TrimSpace(val), `"`)
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "no-store", "no-cache":
				return 0, true
			case "max-age":
				maxAge = parseSeconds(val)
			case "s-maxage":
				sMaxAge = parseSeconds(val)
			}
		}
	}
	age := time.Duration(max(parseSeconds(h.Get("Age")), 0)) * time.Second
	switch {
	case sMaxAge >= 0:
		return max(time.Duration(sMaxAge)*time.Second-age, 0), true
	case maxAge >= 0:
		return max(time.Duration(maxAge)*time.Second-age, 0), true
	}
	if exp := h.Get("Expires"); exp != "" {
		t, err := http.ParseTime(exp)
		if err != nil {
			return 0, true // an invalid Expires means "already expired" (RFC 9111 §5.3)
		}
		base := now
		if d, err := http.ParseTime(h.Get("Date")); err == nil {
			base = d
		}
		return max(t.Sub(base)-age, 0), true
	}
	return 0, false
}

// parseSeconds parses a delta-seconds value; -1 when malformed. Huge values saturate.
func parseSeconds(s string) int {
	if s == "" {
		return -1
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return -1
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > 1<<31-1 {
		return 1<<31 - 1
	}
	return n
}
