package queueapi

import (
	"context"
	"time"

	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/ttlcache"
)

// orgCases remembers each organization's enum case for caseTTL, so that
// an answer costs no read of the organization item: a change reaches every
// copy within caseTTL.
type orgCases struct{ c ttlcache.Cache[string] }

const caseTTL = 30 * time.Second

// lower reports whether org's answers spell enums in lowercase: its own
// setting, else def. A failed read answers def (and is tried again next
// time): the case of an answer is no reason to fail it.
func (c *orgCases) lower(ctx context.Context, st *store.Store, org string, def bool, now time.Time) bool {
	enumCase, err := c.c.GetFor(org, now, caseTTL, func() (string, error) {
		o, err := st.GetOrg(ctx, org)
		return o.EnumCase, err
	})
	if err != nil {
		return def
	}
	switch enumCase {
	case "lower":
		return true
	case "upper":
		return false
	}
	return def
}
