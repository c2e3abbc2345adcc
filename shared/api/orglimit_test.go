package api

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

var t0 = time.Date(2026, 7, 23, 1, 32, 50, 0, time.UTC)

// copies returns n limiters sharing one table and clock, as n warm copies
// of the service would.
func copies(t *testing.T, n int, rate float64, burst int, clock *testkit.Clock) []*OrgLimiter {
	t.Helper()
	db, table := storetest.NewTable(t)
	out := make([]*OrgLimiter, n)
	for i := range out {
		out[i] = &OrgLimiter{Store: store.New(db, table, clock.Now), Rate: rate, Burst: burst, Now: clock.Now, Log: slog.New(slog.DiscardHandler)}
	}
	return out
}

// TestOrgLimitHoldsAcrossCopies: three copies, each offered six times the
// limit for ten seconds of a driven clock, together admit in every window
// no more than the bucket allows (burst + rate × window) and the slack of
// the blocks the copies hold (copies × block), and not much less overall.
func TestOrgLimitHoldsAcrossCopies(t *testing.T) {
	t.Parallel()
	const (
		rate, burst, n = 100, 200, 3
		step           = 5 * time.Millisecond
		steps          = 2000 // 10 s
	)
	clock := testkit.NewClock(t0)
	ls := copies(t, n, rate, burst, clock)
	block := ls[0].block()
	ctx := context.Background()
	admitted := make([]int, steps+1) // admitted[i]: admitted in the first i steps
	for i := range steps {
		admitted[i+1] = admitted[i]
		for _, l := range ls {
			for range 2 { // 2 requests per copy per 5 ms: 1,200 a second
				if ok, _ := l.Allow(ctx, "acme"); ok {
					admitted[i+1]++
				}
			}
		}
		clock.Advance(step)
	}
	// Every window [i, j) of steps: requests admitted in it are at most
	// what the bucket gives in it plus the copies' blocks.
	slack := n * block
	for i := range steps {
		for j := i + 1; j <= steps; j++ {
			// Steps i to j−1 run at times i·step to (j−1)·step.
			allowed := burst + rate*(j-1-i)*int(step/time.Millisecond)/1000 + slack
			if got := admitted[j] - admitted[i]; got > allowed {
				t.Fatalf("steps %d to %d: %d admitted, more than %d", i, j, got, allowed)
			}
		}
	}
	total, given := admitted[steps], burst+rate*10
	if total < given-slack {
		t.Errorf("%d admitted in 10 s, want at least %d (the bucket's %d less the copies' blocks)", total, given-slack, given)
	}
}

// TestOrgLimitCost measures the writes per 1,000 requests admitted, with
// one or several copies taking the requests in turn, under the limit and
// over it; it logs them (go test -v) and holds them under a bound.
func TestOrgLimitCost(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		copies, perSecond, most int
	}{
		{1, 80, 50}, {3, 80, 100}, {8, 80, 100},
		{1, 600, 50}, {3, 600, 100}, {8, 600, 200},
	} {
		clock := testkit.NewClock(t0)
		ls := copies(t, c.copies, 100, 200, clock)
		ctx, usage := store.WithUsage(context.Background())
		admitted := 0
		for i := range 20 * c.perSecond { // 20 s
			if ok, _ := ls[i%c.copies].Allow(ctx, "acme"); ok {
				admitted++
			}
			clock.Advance(time.Second / time.Duration(c.perSecond))
		}
		writes, _ := usage.Snapshot()
		perThousand := writes * 1000 / admitted
		t.Logf("%d copies, %d requests a second: %d admitted, %d writes per 1,000", c.copies, c.perSecond, admitted, perThousand)
		if perThousand > c.most {
			t.Errorf("%d copies, %d requests a second: %d writes per 1,000 admitted, want at most %d", c.copies, c.perSecond, perThousand, c.most)
		}
	}
}

// TestOrgLimitOneCopyBurstAndRefill: one copy admits the whole burst at
// once in blocks, one write each, refuses the next request without a write
// with the wait until a block is back, and is given the burst again after
// a pause; at a steady rate under the limit it writes once a block.
func TestOrgLimitOneCopyBurstAndRefill(t *testing.T) {
	t.Parallel()
	clock := testkit.NewClock(t0)
	l := copies(t, 1, 100, 200, clock)[0]
	ctx, usage := store.WithUsage(context.Background())
	burst := func() int {
		n := 0
		for {
			ok, wait := l.Allow(ctx, "acme")
			if !ok {
				if wait != 200*time.Millisecond {
					t.Errorf("wait %v, want the 200 ms until 20 tokens are back", wait)
				}
				return n
			}
			n++
		}
	}
	if n := burst(); n != 200 {
		t.Fatalf("burst: %d admitted, want 200", n)
	}
	if calls, _ := usage.Snapshot(); calls != 10 {
		t.Errorf("%d writes for the burst, want 10", calls)
	}
	if ok, wait := l.Allow(ctx, "acme"); ok || wait != 200*time.Millisecond {
		t.Errorf("refused again: %v %v", ok, wait)
	}
	clock.Advance(200 * time.Millisecond)
	for i := range 20 {
		if ok, _ := l.Allow(ctx, "acme"); !ok {
			t.Fatalf("request %d after 200 ms refused", i)
		}
	}
	clock.Advance(time.Minute)
	if n := burst(); n != 200 {
		t.Fatalf("burst after a pause: %d admitted, want 200", n)
	}
	// 1,000 requests at 50 a second: one write per block of 20.
	clock.Advance(time.Minute)
	ctx, usage = store.WithUsage(context.Background())
	for i := range 1000 {
		if ok, _ := l.Allow(ctx, "acme"); !ok {
			t.Fatalf("request %d at half the limit refused", i)
		}
		clock.Advance(20 * time.Millisecond)
	}
	if calls, _ := usage.Snapshot(); calls != 50 {
		t.Errorf("%d writes per 1,000 requests under the limit, want 50", calls)
	}
}

// TestOrgLimitConcurrentCopies: copies leasing from many goroutines at one
// instant never take more than the burst between them: what they admitted,
// what they hold and what is left in the bucket add up to it exactly.
func TestOrgLimitConcurrentCopies(t *testing.T) {
	t.Parallel()
	clock := testkit.NewClock(t0)
	ls := copies(t, 4, 100, 200, clock)
	var mu sync.Mutex
	admitted := 0
	var wg sync.WaitGroup
	for _, l := range ls {
		for range 8 {
			wg.Go(func() {
				for range 50 {
					if ok, _ := l.Allow(context.Background(), "acme"); ok {
						mu.Lock()
						admitted++
						mu.Unlock()
					}
				}
			})
		}
	}
	wg.Wait()
	held := 0
	for _, l := range ls {
		held += l.orgs["acme"].left
	}
	rest := 0 // tokens left in the bucket, taken one by one
	for {
		l, err := ls[0].Store.TakeTokens(context.Background(), "acme", store.Bucket{Rate: 100, Burst: 200}, 1, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if !l.Taken {
			break
		}
		rest++
	}
	if admitted+held+rest != 200 {
		t.Errorf("admitted %d + held %d + left in the bucket %d = %d, want the burst, 200", admitted, held, rest, admitted+held+rest)
	}
}

// TestOrgLimitFailsOpenWhenTheStoreFails: with no table to lease from, a
// copy limits with a bucket of its own (logging why, once a second) rather
// than refuse every request; once the table answers it leases again.
func TestOrgLimitFailsOpenWhenTheStoreFails(t *testing.T) {
	t.Parallel()
	clock := testkit.NewClock(t0)
	db := storetest.Client(t)
	table := "t_later_" + strconv.FormatInt(rand.Int64(), 36)
	logs := &testkit.SyncBuffer{}
	l := &OrgLimiter{Store: store.New(db, table, clock.Now), Rate: 1, Burst: 3, Now: clock.Now, Log: slog.New(slog.NewJSONHandler(logs, nil))}
	for i := range 3 {
		if ok, _ := l.Allow(context.Background(), "acme"); !ok {
			t.Fatalf("request %d without a table refused", i)
		}
	}
	if ok, wait := l.Allow(context.Background(), "acme"); ok || wait != time.Second {
		t.Errorf("beyond the copy's own burst: %v %v, want refused for 1s", ok, wait)
	}
	if n := strings.Count(logs.String(), "the store failed a lease"); n != 1 {
		t.Errorf("%d log lines, want 1:\n%s", n, logs)
	}
	ctx := context.Background()
	if _, err := store.EnsureTable(ctx, db, table); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &table}) })
	clock.Advance(storeRetry)
	ctx, usage := store.WithUsage(ctx)
	if ok, _ := l.Allow(ctx, "acme"); !ok {
		t.Fatal("refused once the table answers")
	}
	if calls, _ := usage.Snapshot(); calls != 1 {
		t.Errorf("%d calls once the table answers, want the 1 lease", calls)
	}
}

// TestOrgLimitThroughTheMiddleware: two copies of the server, each with
// its own limiter on one table, answer 429 with Retry-After once the
// organization's requests across both exceed its burst.
func TestOrgLimitThroughTheMiddleware(t *testing.T) {
	t.Parallel()
	clock := testkit.NewClock(t0)
	var handlers []LambdaHandler
	for _, l := range copies(t, 2, 1, 2, clock) {
		s := &Server{Auth: staticAuth{"good": "acme"}, Limiter: l, Log: slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil)), Now: clock.Now}
		handlers = append(handlers, Lambda(s.Wrap(Endpoint{Name: "t", Method: "POST", Path: "/t", Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})})))
	}
	var codes []int
	for i := range 3 {
		resp, _ := handlers[i%2](context.Background(), post("{}", false))
		codes = append(codes, resp.StatusCode)
		if resp.StatusCode == 429 && resp.Headers["retry-after"] != "1" {
			t.Errorf("429 with Retry-After %q, want 1", resp.Headers["retry-after"])
		}
	}
	if fmt.Sprint(codes) != "[200 200 429]" {
		t.Fatalf("statuses %v, want 200 200 429", codes)
	}
	clock.Advance(time.Second)
	if resp, _ := handlers[1](context.Background(), post("{}", false)); resp.StatusCode != 200 {
		t.Errorf("a second later: %d", resp.StatusCode)
	}
}
