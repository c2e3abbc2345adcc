package queueapi

import (
	"context"
	"sync"
	"time"

	"github.com/mainguard/mainguard/shared/store"
)

// orgCases remembers each organization's enum case for caseTTL, so that
// an answer costs no read of the organization item: a change reaches every
// copy within caseTTL.
type orgCases struct {
	mu   sync.Mutex
	seen map[string]orgCase
}

type orgCase struct {
	enumCase string
	at       time.Time
}

const caseTTL = 30 * time.Second

// lower reports whether org's answers spell enums in lowercase: its own
// setting, else def. A failed read answers def (and is tried again next
// time): the case of an answer is no reason to fail it.
func (c *orgCases) lower(ctx context.Context, st *store.Store, org string, def bool, now time.Time) bool {
	c.mu.Lock()
	got, ok := c.seen[org]
	c.mu.Unlock()
	if !ok || now.Sub(got.at) >= caseTTL || now.Before(got.at) {
		o, err := st.GetOrg(ctx, org)
		if err != nil {
			return def
		}
		got = orgCase{enumCase: o.EnumCase, at: now}
		c.mu.Lock()
		if c.seen == nil || len(c.seen) > 10000 {
			c.seen = map[string]orgCase{} // bounded: start over
		}
		c.seen[org] = got
		c.mu.Unlock()
	}
	switch got.enumCase {
	case "lower":
		return true
	case "upper":
		return false
	}
	return def
}
