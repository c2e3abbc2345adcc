package api

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/store"
)

// OrgLimiter limits each organization to Rate requests a second with
// bursts of Burst, across every copy of the service (each warm Lambda copy,
// or the local server): they all take tokens from one bucket per
// organization in the table (store.TakeTokens).
//
// A copy takes its tokens in blocks, one conditional write per block, not
// per request, and spends them on its own requests. A block is a tenth of
// the burst, at most 20 tokens: 20 at the defaults (100/s, burst 200). The
// price is slack: tokens a copy took but has not spent yet are spent
// later, so in any window an organization gets at most copies × block
// requests more than the bucket allows (Burst + Rate × window); and a copy
// that goes idle or cold holds tokens nobody spends (the limit errs low).
//
// The cost is one write unit per block: 50 per 1,000 requests from one
// copy, a share of a write unit per request, where the request's own work
// reads or writes at least one. Several copies see the bucket as it was at
// their last lease and now and then guess the wrong one of its two writes,
// which costs a second: 84 per 1,000 with 3 copies, 93 with 8, at 80 % of
// the limit; 64 and 141 per 1,000 admitted at six times it
// (TestOrgLimitCost).
// Refused, a copy answers 429 itself, without a write, until the bucket
// holds a block again (Retry-After): an organization over its limit costs
// writes for what it is admitted, not for what it sends.
//
// When the store fails (throttled, unreachable), the copy falls back to a
// bucket of its own with the same rate and burst, the limit as it was
// before the shared one: the limit guards fairness and cost, not data, and
// turning a failed lease into a 503 would make the limiter an outage of its
// own where every handler that needs the store answers 503 anyway. It tries
// the store again after a second.
type OrgLimiter struct {
	Store *store.Store
	Rate  float64 // tokens per second
	Burst int
	Now   func() time.Time
	Log   *slog.Logger // a failed lease, at most once a second per organization

	mu       sync.Mutex
	orgs     map[string]*orgTokens
	fallback *RateLimiter
}

// orgTokens is what a copy knows of one organization's bucket.
type orgTokens struct {
	mu      sync.Mutex // held while leasing: a copy's concurrent requests wait for one lease
	left    int        // tokens taken and not spent yet
	fullAt  time.Time  // store.Lease.FullAt of the last lease
	until   time.Time  // no lease before: refused, or the store failed
	failed  bool       // the store failed: the fallback bucket answers until then
	refused int        // leases refused in a row
}

// storeRetry is how long a copy answers from its own bucket after the
// store failed a lease.
const storeRetry = time.Second

// block is the number of tokens a copy takes at once.
func (l *OrgLimiter) block() int { return min(20, max(1, l.Burst/10)) }

// Allow takes a token for org, or says how long until one may be free.
func (l *OrgLimiter) Allow(ctx context.Context, org string) (bool, time.Duration) {
	l.mu.Lock()
	if l.orgs == nil {
		l.orgs = map[string]*orgTokens{}
		l.fallback = &RateLimiter{Rate: l.Rate, Burst: l.Burst, Now: l.Now}
	}
	o, ok := l.orgs[org]
	if !ok {
		o = &orgTokens{}
		l.orgs[org] = o
	}
	l.mu.Unlock()

	o.mu.Lock()
	defer o.mu.Unlock()
	if o.left > 0 {
		o.left--
		return true, 0
	}
	now := l.Now()
	if now.Before(o.until) {
		if o.failed {
			return l.fallback.Allow(org)
		}
		return false, o.until.Sub(now)
	}
	lease, err := l.Store.TakeTokens(ctx, org, store.Bucket{Rate: l.Rate, Burst: l.Burst}, l.block(), o.fullAt)
	if err != nil {
		l.Log.LogAttrs(ctx, slog.LevelWarn, "rate limit: the store failed a lease; this copy limits on its own for now",
			slog.String("org", org), slog.String("error", err.Error()))
		o.failed, o.until = true, now.Add(storeRetry)
		return l.fallback.Allow(org)
	}
	o.failed, o.fullAt = false, lease.FullAt
	if !lease.Taken {
		// Copies refused together would wake together for the next block,
		// and all but one be refused again, a write each. Refused again
		// and again, a copy takes it that other copies are ahead of it
		// and waits a block's time more for each, up to about the time
		// the bucket takes to fill (so that few tokens are lost to its
		// cap meanwhile). At six times the limit three copies so write 64
		// times per 1,000 requests admitted, not 141; eight 141, not 371.
		o.refused = min(o.refused+1, l.Burst/l.block())
		wait := lease.Wait + time.Duration(float64(o.refused-1)*float64(l.block())/l.Rate*float64(time.Second))
		o.until = now.Add(wait)
		return false, wait
	}
	o.left, o.refused = l.block()-1, 0
	return true, 0
}

// RateLimiter is a token bucket per key (a client address, an
// organization) that lives in the process: it limits failed
// authentications per address and, while the store fails OrgLimiter, an
// organization on one copy.
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
	return c.AuthenticateHash(ctx, store.HashToken(token))
}

// AuthenticateHash is Authenticate by the token's hash (store.HashToken).
func (c *CachedAuth) AuthenticateHash(ctx context.Context, h string) (string, error) {
	if c.TTL <= 0 {
		return c.Store.AuthenticateHash(ctx, h)
	}
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
	org, err := c.Store.AuthenticateHash(ctx, h)
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
