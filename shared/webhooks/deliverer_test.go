package webhooks_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
	"github.com/mainguard/mainguard/shared/webhooks"
)

var t0 = time.Date(2026, 7, 23, 1, 32, 50, 0, time.UTC)

type fixture struct {
	s   *store.Store
	clk *testkit.Clock
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	clk := testkit.NewClock(t0)
	s := storetest.New(t, clk.Now)
	if _, err := s.CreateOrg(bg, "acme", ""); err != nil {
		t.Fatal(err)
	}
	return &fixture{s: s, clk: clk}
}

// endpoint registers a receiver answering per answer, subscribed to types.
func (f *fixture) endpoint(t testing.TB, answer func(int) int, types ...string) (*receiver, store.WebhookEndpoint) {
	t.Helper()
	rc := newReceiver(t, webhooks.NewSecret(), answer)
	ep, err := webhooks.NewEndpoint(bg, local, rc.srv.URL, types)
	if err != nil {
		t.Fatal(err)
	}
	ep.Secret = rc.secret
	ep, err = f.s.AddWebhookEndpoint(bg, "acme", ep)
	if err != nil {
		t.Fatal(err)
	}
	return rc, ep
}

func (f *fixture) event(t testing.TB, id, typ string) store.Event {
	t.Helper()
	ev := store.Event{ID: id, Type: typ, Payload: fmt.Sprintf(`{"type":%q,"pr_number":7}`, typ), CreatedAt: f.clk.Now()}
	if err := f.s.EnqueueEvent(bg, "acme", ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

func (f *fixture) deliverer(timeout time.Duration) *webhooks.Deliverer {
	return &webhooks.Deliverer{Store: f.s, Sender: &webhooks.Sender{Client: webhooks.NewClient(local), Timeout: timeout}, Now: f.clk.Now}
}

// run delivers at the given offset from t0 and returns the report.
func (f *fixture) run(t testing.TB, d *webhooks.Deliverer, at time.Duration) webhooks.Report {
	t.Helper()
	f.clk.Set(t0.Add(at))
	rep, err := d.Run(bg, "acme")
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func (f *fixture) pending(t testing.TB) int {
	t.Helper()
	evs, err := f.s.PendingEvents(bg, "acme", 100)
	if err != nil {
		t.Fatal(err)
	}
	return len(evs)
}

// checkReceived asserts every request was verified by Svix and carried id.
func checkReceived(t *testing.T, rc *receiver, id, body string, n int) {
	t.Helper()
	got := rc.received()
	if len(got) != n {
		t.Fatalf("receiver got %d requests, want %d: %+v", len(got), n, got)
	}
	for i, r := range got {
		if r.VerifyErr != nil || r.ID != id || r.Body != body {
			t.Errorf("request %d: %+v; want id %s, body %s, verified", i+1, r, id, body)
		}
	}
}

func attemptsOf(t *testing.T, s *store.Store, eventID string) []string {
	t.Helper()
	as, err := s.EventAttempts(bg, "acme", eventID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range as {
		out = append(out, fmt.Sprintf("#%d +%v %d %s", a.Attempt, a.At.Sub(t0), a.StatusCode, a.Error))
	}
	return out
}

func TestRetryAfterServerErrorKeepsID(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	rc, _ := f.endpoint(t, sequence(500, 200))
	ev := f.event(t, "evt_1", "pull_request.merged")
	d := f.deliverer(0)

	if rep := f.run(t, d, 0); rep.Attempts != 1 || rep.Delivered != 0 || rep.Finished != 0 {
		t.Errorf("first run: %+v", rep)
	}
	if rep := f.run(t, d, 4*time.Second); rep.Events != 0 || rep.Attempts != 0 {
		t.Errorf("before the 5 s retry: %+v", rep)
	}
	if rep := f.run(t, d, 5*time.Second); rep.Attempts != 1 || rep.Delivered != 1 || rep.Finished != 1 {
		t.Errorf("retry: %+v", rep)
	}
	checkReceived(t, rc, "evt_1", ev.Payload, 2)
	want := []string{"#2 +5s 200 ", "#1 +0s 500 HTTP 500"}
	if d := cmp.Diff(attemptsOf(t, f.s, "evt_1"), want); d != "" {
		t.Errorf("delivery log (-got +want):\n%s", d)
	}
	if n := f.pending(t); n != 0 {
		t.Errorf("%d events still pending", n)
	}
	if rep := f.run(t, d, time.Hour); rep.Attempts != 0 {
		t.Errorf("after delivery: %+v", rep)
	}
}

func TestGoneIsRetried(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	rc, ep := f.endpoint(t, always(410))
	ev := f.event(t, "evt_1", "pull_request.failed")
	d := f.deliverer(0)
	f.run(t, d, 0)
	f.run(t, d, 5*time.Second)
	checkReceived(t, rc, "evt_1", ev.Payload, 2)
	if _, err := f.s.WebhookEndpoint(bg, "acme", ep.ID); err != nil {
		t.Errorf("endpoint disabled after 410: %v", err)
	}
	want := []string{"#2 +5s 410 HTTP 410", "#1 +0s 410 HTTP 410"}
	if d := cmp.Diff(attemptsOf(t, f.s, "evt_1"), want); d != "" {
		t.Errorf("delivery log (-got +want):\n%s", d)
	}
	if n := f.pending(t); n != 1 {
		t.Errorf("pending %d, want the event still in the outbox", n)
	}
}

func TestGivesUpAfterTheSchedule(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	rc, _ := f.endpoint(t, always(503))
	ev := f.event(t, "evt_1", "pull_request.merged")
	d := f.deliverer(0)
	at := time.Duration(0)
	for i := 1; i <= webhooks.MaxAttempts; i++ {
		if i > 1 {
			wait := webhooks.Backoff[i-2]
			if rep := f.run(t, d, at+wait-time.Second); rep.Attempts != 0 {
				t.Fatalf("attempt %d went a second early: %+v", i, rep)
			}
			at += wait
		}
		rep := f.run(t, d, at)
		if rep.Attempts != 1 {
			t.Fatalf("attempt %d at +%v: %+v", i, at, rep)
		}
		if last := i == webhooks.MaxAttempts; last != (rep.GaveUp == 1 && rep.Finished == 1) {
			t.Fatalf("attempt %d: %+v", i, rep)
		}
	}
	checkReceived(t, rc, "evt_1", ev.Payload, 8)
	if at != 5*time.Second+5*time.Minute+30*time.Minute+27*time.Hour {
		t.Errorf("schedule spans %v", at)
	}
	ds, err := f.s.Deliveries(bg, "acme", "evt_1")
	if err != nil || len(ds) != 1 || ds[0].State != store.DeliveryFailed || ds[0].Attempts != 8 {
		t.Errorf("delivery state: %+v %v", ds, err)
	}
	if rep := f.run(t, d, at+48*time.Hour); rep.Attempts != 0 {
		t.Errorf("after giving up: %+v", rep)
	}
}

func TestTimeoutIsAFailedAttempt(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	rc, _ := f.endpoint(t, sequence(0, 204))
	ev := f.event(t, "evt_1", "pull_request.merged")
	d := f.deliverer(100 * time.Millisecond) // not 15 s: the timeout is injected

	f.run(t, d, 0)
	as, err := f.s.EventAttempts(bg, "acme", "evt_1")
	if err != nil || len(as) != 1 {
		t.Fatalf("log: %+v %v", as, err)
	}
	if a := as[0]; a.StatusCode != 0 || a.Error != "no answer within 100ms" || a.Latency < 100*time.Millisecond {
		t.Errorf("timed-out attempt: %+v", a)
	}
	if rep := f.run(t, d, 5*time.Second); rep.Delivered != 1 {
		t.Errorf("retry: %+v", rep)
	}
	checkReceived(t, rc, "evt_1", ev.Payload, 2)
}

func TestFilterAndSecretsPerEndpoint(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	all, _ := f.endpoint(t, always(200))
	merged, _ := f.endpoint(t, always(200), "pull_request.merged")
	failed, _ := f.endpoint(t, always(200), "pull_request.failed", "pull_request.canceled")
	ev := f.event(t, "evt_1", "pull_request.merged")
	if rep := f.run(t, f.deliverer(0), 0); rep.Attempts != 2 || rep.Finished != 1 {
		t.Errorf("run: %+v", rep)
	}
	checkReceived(t, all, "evt_1", ev.Payload, 1)
	checkReceived(t, merged, "evt_1", ev.Payload, 1)
	checkReceived(t, failed, "", "", 0)
}

// TestCrashOnlyDelays: a deliverer that dies at any point leaves state the
// next one (a fresh value: nothing in memory carries over) picks up.
func TestCrashOnlyDelays(t *testing.T) {
	t.Parallel()
	t.Run("between event write and delivery", func(t *testing.T) {
		f := newFixture(t)
		rc, _ := f.endpoint(t, always(200))
		ev := f.event(t, "evt_1", "pull_request.merged")
		crashing := &webhooks.Deliverer{Store: failingClaims{f.s}, Sender: localSender(), Now: f.clk.Now}
		f.clk.Set(t0)
		if _, err := crashing.Run(bg, "acme"); !errs.Is(err, errs.Unavailable) {
			t.Fatalf("crashing deliverer: %v", err)
		}
		checkReceived(t, rc, "", "", 0)
		if rep := f.run(t, f.deliverer(0), time.Minute); rep.Delivered != 1 || rep.Finished != 1 {
			t.Errorf("new deliverer: %+v", rep)
		}
		checkReceived(t, rc, "evt_1", ev.Payload, 1)
	})
	t.Run("after sending, before recording", func(t *testing.T) {
		f := newFixture(t)
		rc, _ := f.endpoint(t, always(200))
		ev := f.event(t, "evt_1", "pull_request.merged")
		crashing := &webhooks.Deliverer{Store: failingRecords{f.s}, Sender: localSender(), Now: f.clk.Now}
		f.clk.Set(t0)
		if _, err := crashing.Run(bg, "acme"); !errs.Is(err, errs.Unavailable) {
			t.Fatalf("crashing deliverer: %v", err)
		}
		d := f.deliverer(0)
		// The dead deliverer's claim holds until its lease (timeout + 1 min).
		if rep := f.run(t, d, time.Minute); rep.Attempts != 0 {
			t.Errorf("within the lease: %+v", rep)
		}
		if rep := f.run(t, d, webhooks.DefaultTimeout+time.Minute); rep.Delivered != 1 || rep.Finished != 1 {
			t.Errorf("after the lease: %+v", rep)
		}
		// At least once: the receiver saw the message twice, with one id.
		checkReceived(t, rc, "evt_1", ev.Payload, 2)
	})
}

type failingClaims struct{ *store.Store }

func (failingClaims) ClaimDelivery(context.Context, string, store.Claim) error {
	return errs.E(errs.Unavailable, "crash")
}

type failingRecords struct{ *store.Store }

func (failingRecords) RecordDeliveryAttempt(context.Context, string, store.DeliveryAttempt, store.DeliveryState, time.Time) error {
	return errs.E(errs.Unavailable, "crash")
}

func TestConcurrentDeliverersSendOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	rc, _ := f.endpoint(t, always(200))
	const events = 20
	for i := range events {
		f.event(t, fmt.Sprintf("evt_%02d", i), "pull_request.merged")
	}
	f.clk.Set(t0)
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := &webhooks.Deliverer{Store: f.s, Sender: localSender(), Now: f.clk.Now, Batch: 3}
			if _, err := d.Run(bg, "acme"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	seen := map[string]int{}
	for _, r := range rc.received() {
		if r.VerifyErr != nil {
			t.Errorf("unverified: %+v", r)
		}
		seen[r.ID]++
	}
	if len(seen) != events {
		t.Errorf("%d distinct events delivered, want %d", len(seen), events)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s sent %d times", id, n)
		}
	}
	// Claims lost to a racer push an event back by the lease; one more run
	// after it finishes them all.
	f.run(t, f.deliverer(0), 2*time.Minute)
	if n := f.pending(t); n != 0 {
		t.Errorf("%d events left in the outbox", n)
	}
	if len(rc.received()) != events {
		t.Errorf("the later run sent again")
	}
}

func TestReplaySendsAgainWithSameID(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	rc, _ := f.endpoint(t, always(200))
	ev := f.event(t, "evt_1", "pull_request.merged")
	d := f.deliverer(0)
	f.run(t, d, 0)
	f.clk.Set(t0.Add(time.Hour))
	if _, err := f.s.ReplayEvent(bg, "acme", "evt_1"); err != nil {
		t.Fatal(err)
	}
	if rep := f.run(t, d, time.Hour); rep.Delivered != 1 || rep.Finished != 1 {
		t.Errorf("replay run: %+v", rep)
	}
	checkReceived(t, rc, "evt_1", ev.Payload, 2)
}

func TestRemovedEndpointStopsRetries(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	rc, ep := f.endpoint(t, always(500))
	f.event(t, "evt_1", "pull_request.merged")
	d := f.deliverer(0)
	f.run(t, d, 0)
	if err := f.s.RemoveWebhookEndpoint(bg, "acme", ep.ID); err != nil {
		t.Fatal(err)
	}
	if rep := f.run(t, d, 5*time.Second); rep.Attempts != 0 || rep.Finished != 1 {
		t.Errorf("after removal: %+v", rep)
	}
	if len(rc.received()) != 1 {
		t.Errorf("removed endpoint got %d requests", len(rc.received()))
	}
}

func TestEventWithoutSubscribersIsFinished(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.endpoint(t, always(200), "test_case.status_changed")
	f.event(t, "evt_1", "pull_request.merged")
	if rep := f.run(t, f.deliverer(0), 0); rep.Attempts != 0 || rep.Finished != 1 {
		t.Errorf("run: %+v", rep)
	}
}

// TestLaterEndpointGetsOnlyLaterEvents: an event goes to the endpoints
// that existed when it happened, as with Svix. One added after it was
// written never receives it, nor its replay, and does not keep it in the
// outbox; it receives what happens from then on.
func TestLaterEndpointGetsOnlyLaterEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	early, _ := f.endpoint(t, always(200))
	f.clk.Set(t0.Add(time.Minute))
	before := f.event(t, "evt_before", "pull_request.merged")
	f.clk.Set(t0.Add(2 * time.Minute))
	late, lateEP := f.endpoint(t, always(200))
	if !lateEP.CreatedAt.After(before.CreatedAt) {
		t.Fatalf("endpoint created %v, not after the event's %v", lateEP.CreatedAt, before.CreatedAt)
	}
	d := f.deliverer(0)
	if rep := f.run(t, d, 2*time.Minute); rep.Attempts != 1 || rep.Delivered != 1 || rep.Finished != 1 {
		t.Errorf("first run: %+v", rep)
	}
	checkReceived(t, early, "evt_before", before.Payload, 1)
	checkReceived(t, late, "", "", 0)

	f.clk.Set(t0.Add(3 * time.Minute))
	after := f.event(t, "evt_after", "pull_request.merged")
	if rep := f.run(t, d, 3*time.Minute); rep.Attempts != 2 || rep.Delivered != 2 || rep.Finished != 1 {
		t.Errorf("second run: %+v", rep)
	}
	checkReceived(t, late, "evt_after", after.Payload, 1)

	f.clk.Set(t0.Add(time.Hour))
	if _, err := f.s.ReplayEvent(bg, "acme", "evt_before"); err != nil {
		t.Fatal(err)
	}
	if rep := f.run(t, d, time.Hour); rep.Attempts != 1 || rep.Finished != 1 {
		t.Errorf("replay run: %+v", rep)
	}
	if got := early.received(); len(got) != 3 || got[2].ID != "evt_before" {
		t.Errorf("the early endpoint got %+v, want the replay last", got)
	}
	checkReceived(t, late, "evt_after", after.Payload, 1)
	if n := f.pending(t); n != 0 {
		t.Errorf("%d events still pending", n)
	}
}

// localSender sends as the local server does, to the tests' receivers on
// 127.0.0.1.
func localSender() *webhooks.Sender { return &webhooks.Sender{Client: webhooks.NewClient(local)} }
