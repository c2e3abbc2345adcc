package api

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/mainguard/mainguard/shared/access"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/ttlcache"
)

// OrgBuckets is the store's table of organizations' token buckets that
// OrgLimiter leases from; *store.Store implements it.
type OrgBuckets interface {
	// TakeTokens takes n tokens from org's bucket b, or none when fewer
	// are free; fullAt is the FullAt of the last lease (zero when none).
	TakeTokens(ctx context.Context, org string, b access.Bucket, n int, fullAt time.Time) (access.Lease, error)
}

// FailureBuckets is the store's table of failed authentications per client
// address that FailureLimiter counts in; *store.Store implements it.
type FailureBuckets interface {
	// TakeFailureTokens is TakeTokens on address's bucket.
	TakeFailureTokens(ctx context.Context, address string, b access.Bucket, n int, fullAt time.Time) (access.Lease, error)
}

// TokenStore is what CachedAuth reads and writes of the store's API tokens
// and web sessions; *store.Store implements it.
type TokenStore interface {
	// Grant is the organization and scopes of the valid token whose hash
	// (access.HashToken) is hash; errs.Unauthorized when it is unknown or
	// revoked.
	Grant(ctx context.Context, hash string) (org string, scopes []string, err error)
	// SessionRevoked reports whether the web session id was signed out.
	SessionRevoked(ctx context.Context, id string) (bool, error)
	// RevokeSession signs the web session id out until expires.
	RevokeSession(ctx context.Context, id string, expires time.Time) error
}

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
	Store OrgBuckets
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
	fullAt  time.Time  // access.Lease.FullAt of the last lease
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
	lease, err := l.Store.TakeTokens(ctx, org, access.Bucket{Rate: l.Rate, Burst: l.Burst}, l.block(), o.fullAt)
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
// organization) that lives in the process: while the store fails them, it
// stands in for OrgLimiter (an organization on one copy) and
// FailureLimiter (an address on one copy).
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

// maxBuckets bounds a RateLimiter: past it, the buckets that are full
// again (which tell nothing an absent one does not) are dropped, and when
// none is, all are.
const maxBuckets = 10000

// Allow takes a token for key, or says how long until one is free.
func (l *RateLimiter) Allow(key string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.Now()
	if l.buckets == nil {
		l.buckets = map[string]*bucket{}
	}
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= maxBuckets {
			l.prune(now)
		}
		b = &bucket{tokens: float64(l.Burst), at: now}
		l.buckets[key] = b
	}
	b.tokens = l.level(b, now)
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.Rate * float64(time.Second))
}

// level is what b holds at now.
func (l *RateLimiter) level(b *bucket, now time.Time) float64 {
	return min(float64(l.Burst), b.tokens+now.Sub(b.at).Seconds()*l.Rate)
}

// prune drops the buckets that are full again; all of them when that
// frees nothing (a flood of addresses forgives some).
func (l *RateLimiter) prune(now time.Time) {
	for k, b := range l.buckets {
		if l.level(b, now) >= float64(l.Burst) {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) >= maxBuckets {
		l.buckets = map[string]*bucket{}
	}
}

// FailureLimiter limits failed authentications per client address, across
// every copy of every function: each failure takes a token from the
// address's bucket in the table (store.TakeFailureTokens: Rate a second,
// Burst at once), one conditional write per failure. Only failures are
// counted, and only after the token was checked, so a valid token is never
// refused, however many bad ones its address sent (a CI fleet shares an
// address). An address over its limit gets 429 for its bad tokens; a copy
// that saw the refusal answers so itself, without a write, until the
// bucket holds a token again. When the store fails, the copy counts on its
// own (a RateLimiter with the same rate and burst), as OrgLimiter does.
type FailureLimiter struct {
	Store FailureBuckets
	Rate  float64
	Burst int
	Now   func() time.Time
	Log   *slog.Logger

	mu       sync.Mutex
	clients  map[string]failureState
	fallback *RateLimiter
}

// failureState is what a copy knows of an address's bucket.
type failureState struct {
	fullAt time.Time // access.Lease.FullAt of the last write
	until  time.Time // refused until then
}

// Fail counts one failed authentication from client; false, and how long
// to wait, when the address is over its limit. An unknown address ("")
// is not limited.
func (l *FailureLimiter) Fail(ctx context.Context, client string) (bool, time.Duration) {
	if client == "" {
		return true, 0
	}
	now := l.Now()
	l.mu.Lock()
	if l.clients == nil {
		l.clients = map[string]failureState{}
		l.fallback = &RateLimiter{Rate: l.Rate, Burst: l.Burst, Now: l.Now}
	}
	st := l.clients[client]
	l.mu.Unlock()
	if now.Before(st.until) {
		return false, st.until.Sub(now)
	}
	lease, err := l.Store.TakeFailureTokens(ctx, client, access.Bucket{Rate: l.Rate, Burst: l.Burst}, 1, st.fullAt)
	if err != nil {
		l.Log.LogAttrs(ctx, slog.LevelWarn, "failed authentications: the store failed; this copy counts on its own",
			slog.String("client", client), slog.String("error", err.Error()))
		return l.fallback.Allow(client)
	}
	st.fullAt, st.until = lease.FullAt, time.Time{}
	if !lease.Taken {
		st.until = now.Add(lease.Wait)
	}
	l.mu.Lock()
	if len(l.clients) >= maxBuckets {
		// What a copy knows of a bucket is worth keeping until it is full
		// again: the table knows it all the same.
		for k, c := range l.clients {
			if !now.Before(c.fullAt) && !now.Before(c.until) {
				delete(l.clients, k)
			}
		}
		if len(l.clients) >= maxBuckets {
			l.clients = map[string]failureState{}
		}
	}
	l.clients[client] = st
	l.mu.Unlock()
	if !lease.Taken {
		return false, lease.Wait
	}
	return true, 0
}

// CachedAuth remembers valid tokens for TTL so that a warm function answers
// most requests without reading the token item: a revoked token stops
// working within TTL on every copy. Unknown tokens are remembered as unknown
// for UnknownTTL (at most TTL), so that a client repeating a bad token costs
// no read each time; a token cannot be tried before it exists (its secret
// is made when it is created), so a new token still works at once. It
// remembers web sessions' revocations the same way (SessionRevoked).
type CachedAuth struct {
	Store TokenStore
	TTL   time.Duration
	Now   func() time.Time

	tokens   ttlcache.Cache[cached] // by token hash: no secret is kept in memory
	sessions ttlcache.Cache[bool]   // session id → revoked
}

type cached struct {
	p     Principal
	known bool
}

// UnknownTTL is how long CachedAuth remembers a token as unknown.
const UnknownTTL = 10 * time.Second

// Authenticate implements Authenticator.
func (c *CachedAuth) Authenticate(ctx context.Context, token string) (Principal, error) {
	return c.AuthenticateHash(ctx, access.HashToken(token))
}

// AuthenticateHash is Authenticate by the token's hash (access.HashToken).
func (c *CachedAuth) AuthenticateHash(ctx context.Context, h string) (Principal, error) {
	got, err := c.tokens.Get(h, c.Now(), func() (cached, time.Duration, error) {
		org, scopes, err := c.Store.Grant(ctx, h)
		switch {
		case errs.Is(err, errs.Unauthorized):
			return cached{}, min(UnknownTTL, c.TTL), nil
		case err != nil:
			return cached{}, 0, err
		}
		return cached{p: Principal{Org: org, Scopes: scopes}, known: true}, c.TTL, nil
	})
	if err != nil {
		return Principal{}, err
	}
	if !got.known {
		return Principal{}, errs.E(errs.Unauthorized, "the API token is not valid")
	}
	return got.p, nil
}

// SessionRevoked reports whether the web session id was signed out
// (store.SessionRevoked), as the copy has known it for at most TTL.
func (c *CachedAuth) SessionRevoked(ctx context.Context, id string) (bool, error) {
	return c.sessions.GetFor(id, c.Now(), c.TTL, func() (bool, error) { return c.Store.SessionRevoked(ctx, id) })
}

// RevokeSession revokes the web session id until expires, at once on this
// copy and within TTL on the others.
func (c *CachedAuth) RevokeSession(ctx context.Context, id string, expires time.Time) error {
	if err := c.Store.RevokeSession(ctx, id, expires); err != nil {
		return err
	}
	if now := c.Now(); expires.After(now) {
		c.sessions.Set(id, true, now, expires.Sub(now))
	}
	return nil
}
