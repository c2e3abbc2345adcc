package api

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
)

// The store is what the limiters and CachedAuth are given in production.
var (
	_ OrgBuckets     = (*store.Store)(nil)
	_ FailureBuckets = (*store.Store)(nil)
	_ TokenStore     = (*store.Store)(nil)
)

// TestFailedAuthenticationIsLimitedPerAddress: an address that keeps
// presenting bad tokens gets 429 with Retry-After once its burst is spent,
// on every copy (two here, sharing the table); a valid token from that
// address is never refused; another address is not affected. Once the
// copies know the address is over its limit they refuse it without a
// write.
func TestFailedAuthenticationIsLimitedPerAddress(t *testing.T) {
	t.Parallel()
	clock := testkit.NewClock(t0)
	db, table := storetest.NewTable(t)
	call := make([]func(token, ip string) (int, string), 2)
	for i := range call {
		s := &Server{Auth: staticAuth{"good": "acme"}, Log: slog.New(slog.DiscardHandler), Now: clock.Now,
			AuthFailures: &FailureLimiter{Store: store.New(db, table, clock.Now), Rate: 1, Burst: 30, Now: clock.Now, Log: slog.New(slog.DiscardHandler)}}
		h := Lambda(s.Wrap(Endpoint{Name: "t", Method: "POST", Path: "/t", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}))
		call[i] = func(token, ip string) (int, string) {
			ev := post("{}", false)
			ev.Headers["x-api-token"] = token
			ev.RequestContext.HTTP.SourceIP = ip
			resp, _ := h(context.Background(), ev)
			return resp.StatusCode, resp.Headers["retry-after"]
		}
	}
	codes := map[int]int{}
	for i := range 40 { // alternating between the copies
		code, wait := call[i%2]("bad", "203.0.113.7")
		codes[code]++
		if code == 429 && wait == "" {
			t.Errorf("bad token %d: 429 without Retry-After", i)
		}
	}
	if codes[401] != 30 || codes[429] != 10 {
		t.Errorf("40 bad tokens from one address across two copies: %v, want 30 × 401 and 10 × 429", codes)
	}
	for i := range call {
		if code, _ := call[i]("good", "203.0.113.7"); code != 200 {
			t.Errorf("copy %d: a valid token from the address after 40 bad ones: %d, want 200", i, code)
		}
	}
	if code, _ := call[0]("bad", "198.51.100.1"); code != 401 {
		t.Errorf("another address: %d, want 401", code)
	}
	clock.Advance(time.Second)
	if code, _ := call[1]("bad", "203.0.113.7"); code != 401 {
		t.Errorf("a token refilled a second later: %d, want 401", code)
	}
}
