package queueapi_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/mergequeue/queuesim"
	"github.com/mainguard/mainguard/shared/queueapi"
)

// slowCI reports "ci" on each test branch head once it has been seen for
// d: a CI run that takes d (judged at the first look after it).
type slowCI struct {
	e     *env
	d     time.Duration
	seen  map[string]time.Time
	bad   []string // files that break the tests
	heads map[string]bool
}

func (c *slowCI) run() {
	c.e.tb.Helper()
	branches, err := c.e.Sim.Branches(repoFull)
	if err != nil {
		c.e.tb.Fatal(err)
	}
	now := c.e.Clock.Now()
	for _, b := range branches {
		head, err := c.e.Sim.BranchHead(repoFull, b)
		if err != nil || head == "" || c.heads[head] || b == "main" {
			continue
		}
		if !strings.HasPrefix(b, "trunk-merge/") {
			// A pull request's own CI passed: GitHub merges none without
			// main's required status on its head.
			if err := c.e.CI.Report(repoFull, head, "success"); err != nil {
				c.e.tb.Fatal(err)
			}
			c.heads[head] = true
			continue
		}
		first, ok := c.seen[head]
		if !ok {
			c.seen[head] = now
			continue
		}
		if now.Sub(first) < c.d {
			continue
		}
		state := "success"
		for _, f := range c.bad {
			if _, err := c.e.Sim.FileAt(repoFull, head, f); err == nil {
				state = "failure"
			}
		}
		if err := c.e.CI.Report(repoFull, head, state); err != nil {
			c.e.tb.Fatal(err)
		}
		c.heads[head] = true
	}
}

// TestHistoryReplaysItsQueue: a queue recorded through the API (30 PRs
// arriving over two hours, a burst among them, 3 of them bad, CI runs of
// 10 minutes, concurrency 3) exports its arrivals, runs and conclusions
// with getQueueHistory; the simulator, replaying them under the queue's
// own settings (as getQueueHistory shows them), merges within 10% of the
// queue's actual merges per hour.
func TestHistoryReplaysItsQueue(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(map[string]any{"concurrency": 3}), nil)
	ci := &slowCI{e: e, d: 10 * time.Minute, seen: map[string]time.Time{}, heads: map[string]bool{}}
	// Minute of arrival of each PR: one every 6 minutes, and a burst of
	// ten at minute 40.
	var arrivals []int
	for i := range 20 {
		arrivals = append(arrivals, 6*i)
	}
	for range 10 {
		arrivals = append(arrivals, 40)
	}
	slices.Sort(arrivals)
	var prs []int
	for i, at := range arrivals {
		for e.Clock.Now().Before(t0.Add(time.Duration(at) * time.Minute)) {
			ci.run()
			e.tick()
		}
		name := fmt.Sprintf("h%02d", i)
		if i%10 == 4 {
			ci.bad = append(ci.bad, name+".txt")
		}
		n := e.openPR(name)
		prs = append(prs, n)
		e.ok("submitPullRequest", prq(n, nil), nil)
	}
	done := allDone(e, prs...)
	for range 600 {
		if done() {
			break
		}
		ci.run()
		e.tick()
	}
	if !done() {
		t.Fatalf("the queue did not finish: %v", e.states(prs...))
	}

	code, body := e.call("getQueueHistory", q(map[string]any{"since": t0.Add(-time.Hour).Format(time.RFC3339)}))
	if code != http.StatusOK {
		t.Fatalf("getQueueHistory: %d %s", code, body)
	}
	var h queueapi.QueueHistoryView
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Arrivals) != 30 || len(h.Merges) != 27 || len(h.Failures) != 3 || len(h.Cancellations) != 0 {
		t.Errorf("history: %d arrivals, %d merges, %d failures, %d cancellations; want 30, 27, 3, 0", len(h.Arrivals), len(h.Merges), len(h.Failures), len(h.Cancellations))
	}
	failedRuns := 0
	for _, r := range h.Runs {
		if r.Outcome == mergequeue.RunFailed {
			failedRuns++
			if !slices.Equal(r.FailedTests, []string{"ci"}) {
				t.Errorf("failed run %s names the failed tests %v, want the failed status ci", r.ID, r.FailedTests)
			}
		}
		if d := time.Time(r.EndedAt).Sub(time.Time(r.StartedAt)); r.Outcome != mergequeue.RunCancelled && (d < 10*time.Minute || d > 13*time.Minute) {
			t.Errorf("run %s took %v; CI takes 10 minutes, seen at a tick", r.ID, d)
		}
	}
	if failedRuns < 3 {
		t.Errorf("%d failed runs in the history; 3 PRs were bad", failedRuns)
	}

	raw, err := json.Marshal(h.Settings)
	if err != nil {
		t.Fatal(err)
	}
	own, err := queueapi.PatchOf(raw)
	if err != nil {
		t.Fatal(err)
	}
	replay, actual, err := queuesim.FromHistory(h.History)
	if err != nil {
		t.Fatal(err)
	}
	r, err := queuesim.Run(queuesim.ReplayConfig(replay, actual, own, 1))
	if err != nil {
		t.Fatal(err)
	}
	ratio := r.MergesPerHour / actual.MergesPerHour
	t.Logf("actual: %d merged, %.2f merges per hour, p50 %v, p90 %v, %.2f CI runs per merge; replay: %d merged, %.2f per hour, p50 %v, p90 %v, %.2f CI runs per merge; ratio %.3f",
		actual.Merged, actual.MergesPerHour, actual.P50, actual.P90, actual.RunsPerMerge, r.Merged, r.MergesPerHour, r.P50, r.P90, r.RunsPerMerge, ratio)
	if math.Abs(ratio-1) > 0.10 {
		t.Errorf("the replay merged %.2f per hour, not within 10%% of the queue's actual %.2f", r.MergesPerHour, actual.MergesPerHour)
	}
	if r.Merged != actual.Merged || r.BadMerged != 0 || r.Queue.Concurrency != 3 {
		t.Errorf("the replay merged %d (%d bad) at concurrency %d; the queue merged %d at 3", r.Merged, r.BadMerged, r.Queue.Concurrency, actual.Merged)
	}

	for _, c := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"since": "yesterday"}, "since must be an RFC 3339 timestamp"},
		{map[string]any{"until": "2026-07-23"}, "until must be an RFC 3339 timestamp"},
		{map[string]any{"since": "2026-07-23T02:00:00Z", "until": "2026-07-23T01:00:00Z"}, "since must be before until"},
		{map[string]any{"since": "2026-05-01T00:00:00Z", "until": "2026-07-23T01:00:00Z"}, "at most 31 days apart"},
	} {
		if code, body := e.call("getQueueHistory", q(c.body)); code != http.StatusBadRequest || !strings.Contains(body, c.want) {
			t.Errorf("getQueueHistory %v: %d %q, want 400 saying %q", c.body, code, body, c.want)
		}
	}
}
