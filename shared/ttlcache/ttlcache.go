// Package ttlcache keeps values read from elsewhere (the table, GitHub) for
// a short while in one copy of a function: an organization's enum case, a
// repository's owner, a person's permission on a repository, a session's
// revocation. A change reaches every copy within the time a value is kept.
package ttlcache

import (
	"sync"
	"time"
)

// MaxKeys bounds a cache: past it, it starts over, which costs one read per
// key and keeps memory flat.
const MaxKeys = 10000

// Cache maps keys to values, each kept until its own expiry. The zero value
// is ready; it is safe for concurrent use.
type Cache[V any] struct {
	mu      sync.Mutex
	entries map[string]entry[V]
}

type entry[V any] struct {
	v     V
	at    time.Time // when it was read
	until time.Time // kept before this
}

// Get returns key's value if it was read at or before now and is kept
// until after now; else it calls load, keeps what it returns for the
// duration it says (nothing when that is not positive, or load fails) and
// returns it.
func (c *Cache[V]) Get(key string, now time.Time, load func() (V, time.Duration, error)) (V, error) {
	c.mu.Lock()
	got, ok := c.entries[key]
	c.mu.Unlock()
	if ok && !now.Before(got.at) && now.Before(got.until) {
		return got.v, nil
	}
	v, ttl, err := load()
	if err != nil || ttl <= 0 {
		return v, err
	}
	c.Set(key, v, now, ttl)
	return v, nil
}

// GetFor is Get with one duration for every value load returns.
func (c *Cache[V]) GetFor(key string, now time.Time, ttl time.Duration, load func() (V, error)) (V, error) {
	return c.Get(key, now, func() (V, time.Duration, error) {
		v, err := load()
		return v, ttl, err
	})
}

// Set keeps v for key from now for ttl.
func (c *Cache[V]) Set(key string, v V, now time.Time, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= MaxKeys {
		c.entries = map[string]entry[V]{}
	}
	c.entries[key] = entry[V]{v: v, at: now, until: now.Add(ttl)}
}
