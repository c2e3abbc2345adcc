package api

import (
	"context"
	"sync"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/store"
)

// RateLimiter is a token bucket per organization. It lives in the process:
// deployed, each warm Lambda copy limits on its own and the HTTP API's stage
// throttling bounds the total (template.yaml); locally it is exact.
type RateLimiter struct {
	Rate  float64 // tokens per second
	Burst int
	Now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// Allow takes a token for org, or says how long until one is free.
func (l *RateLimiter) Allow(org string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.Now()
	if l.buckets == nil {
		l.buckets = map[string]*bucket{}
	}
	b, ok := l.buckets[org]
	if !ok {
		b = &bucket{tokens: float64(l.Burst), at: now}
		l.buckets[org] = b
	}
	b.tokens = min(float64(l.Burst), b.tokens+now.Sub(b.at).Seconds()*l.Rate)
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.Rate * float64(time.Second))
}

// CachedAuth remembers valid tokens for TTL so that a warm function answers
// most requests without reading the token item: a revoked token stops
// working within TTL on every copy. Unknown tokens are remembered as unknown
// for UnknownTTL (at most TTL), so that a client repeating a bad token costs
// no read each time; a token cannot be tried before it exists (its secret
// is made when it is created), so a new token still works at once.
type CachedAuth struct {
	Store *store.Store
	TTL   time.Duration
	Now   func() time.Time

	mu      sync.Mutex
	entries map[string]cached // by token hash: no secret is kept in memory
}

type cached struct {
	org     string
	expires time.Time
}

// UnknownTTL is how long CachedAuth remembers a token as unknown.
const UnknownTTL = 10 * time.Second

// maxCached bounds the cache; when full it starts over, which costs one
// read per token and keeps memory flat.
const maxCached = 10000

// Authenticate implements Authenticator.
func (c *CachedAuth) Authenticate(ctx context.Context, token string) (string, error) {
	if c.TTL <= 0 {
		return c.Store.Authenticate(ctx, token)
	}
	h := store.HashToken(token)
	now := c.Now()
	c.mu.Lock()
	e, ok := c.entries[h]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		if e.org == "" {
			return "", errs.E(errs.Unauthorized, "the API token is not valid")
		}
		return e.org, nil
	}
	org, err := c.Store.Authenticate(ctx, token)
	ttl := c.TTL
	switch {
	case errs.Is(err, errs.Unauthorized):
		ttl = min(UnknownTTL, c.TTL)
	case err != nil:
		return "", err
	}
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= maxCached {
		c.entries = map[string]cached{}
	}
	c.entries[h] = cached{org: org, expires: now.Add(ttl)}
	c.mu.Unlock()
	return org, err
}

// Blocked reports whether key has no token left, and how long until one
// is free, without taking one: the check before a request that takes a
// token only when it fails (failed authentication per client address).
func (l *RateLimiter) Blocked(key string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		return false, 0
	}
	tokens := min(float64(l.Burst), b.tokens+l.Now().Sub(b.at).Seconds()*l.Rate)
	if tokens >= 1 {
		return false, 0
	}
	return true, time.Duration((1 - tokens) / l.Rate * float64(time.Second))
}
