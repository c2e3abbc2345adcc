package queueapi

import (
	"sync"
	"time"
)

// ttlCache keeps values read from elsewhere for a short while, per copy of
// the function: an organization's enum case, a user's permission on a
// repository. Bounded: past 10,000 keys it starts over.
type ttlCache[V any] struct {
	mu   sync.Mutex
	seen map[string]ttlEntry[V]
}

type ttlEntry[V any] struct {
	v  V
	at time.Time
}

// get returns key's value if read within ttl of now, else load's (kept
// only when it succeeds).
func (c *ttlCache[V]) get(key string, now time.Time, ttl time.Duration, load func() (V, error)) (V, error) {
	c.mu.Lock()
	got, ok := c.seen[key]
	c.mu.Unlock()
	if ok && now.Sub(got.at) < ttl && !now.Before(got.at) {
		return got.v, nil
	}
	v, err := load()
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	if c.seen == nil || len(c.seen) > 10000 {
		c.seen = map[string]ttlEntry[V]{}
	}
	c.seen[key] = ttlEntry[V]{v: v, at: now}
	c.mu.Unlock()
	return v, nil
}
