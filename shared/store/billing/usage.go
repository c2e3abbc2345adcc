package billing

import (
	"context"
	"sync"
)

// Usage counts the DynamoDB calls one request made and the capacity units
// DynamoDB said they consumed, for the request log line. The store adds to
// it (it alone sees the calls); package api reads it without the store.
type Usage struct {
	mu       sync.Mutex
	calls    int
	capacity float64
}

// Snapshot returns the calls and capacity units counted so far.
func (u *Usage) Snapshot() (calls int, capacity float64) {
	if u == nil {
		return 0, 0
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls, u.capacity
}

// Add counts one call that consumed capacity units; nothing on a nil Usage.
func (u *Usage) Add(capacity float64) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.calls++
	u.capacity += capacity
}

type usageKey struct{}

// WithUsage returns a context whose DynamoDB calls are counted in the
// returned Usage.
func WithUsage(ctx context.Context) (context.Context, *Usage) {
	u := &Usage{}
	return context.WithValue(ctx, usageKey{}, u), u
}

// UsageOf is ctx's Usage (WithUsage), nil when it has none.
func UsageOf(ctx context.Context) *Usage {
	u, _ := ctx.Value(usageKey{}).(*Usage)
	return u
}
