package ratelimit

import (
	"context"
	"sync"
	"time"
)

// Memory is a [Store] in this process's memory: each replica limits on its own. For tests and
// a single replica. At most MaxKeys keys (default 10 000): when full, the keys whose bucket
// has refilled are dropped, then the oldest half.
type Memory struct {
	MaxKeys int
	// Now is the clock (default time.Now).
	Now func() time.Time

	mu   sync.Mutex
	tats map[string]time.Time
}

var _ Store = (*Memory)(nil)

func (m *Memory) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// Take implements [Store].
func (m *Memory) Take(_ context.Context, key string, l Limit) (Decision, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tats == nil {
		m.tats = map[string]time.Time{}
	}
	tat, ok := m.tats[key]
	if !ok {
		m.makeRoom(now)
	}
	next, d := decide(tat, now, l)
	if d.Allowed {
		m.tats[key] = next
	}
	return d, nil
}

// Peek implements [Store].
func (m *Memory) Peek(_ context.Context, key string, l Limit) (Decision, error) {
	now := m.now()
	m.mu.Lock()
	tat := m.tats[key]
	m.mu.Unlock()
	_, d := decide(tat, now, l)
	return d, nil
}

func (m *Memory) makeRoom(now time.Time) {
	max := m.MaxKeys
	if max <= 0 {
		max = 10_000
	}
	if len(m.tats) < max {
		return
	}
	for k, tat := range m.tats {
		if tat.Before(now) {
			delete(m.tats, k)
		}
	}
	if len(m.tats) < max/2+1 {
		return
	}
	// None refilled: drop the half that refills first (least in debt).
	var sum time.Duration
	for _, tat := range m.tats {
		sum += tat.Sub(now) / time.Duration(len(m.tats))
	}
	cut := now.Add(sum)
	for k, tat := range m.tats {
		if !tat.After(cut) {
			delete(m.tats, k)
		}
	}
}

// Len is the number of keys held.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.tats)
}
