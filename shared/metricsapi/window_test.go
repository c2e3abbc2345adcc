package metricsapi_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/queuemetrics"
	"github.com/mainguard/mainguard/shared/store"
)

// TestWindowFromTheLastHourOnly folds a day of transitions through
// store.QueueRecord.Advance, one save at a time, keeps only the records of
// the last hour (what the Query reads) and checks the window of those
// against the window of the whole history folded at once.
func TestWindowFromTheLastHourOnly(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 7, 23, 12, 0, 0, 0, time.UTC)
	type step struct {
		entry    string
		ago      time.Duration
		from, to mergequeue.PRState
	}
	steps := []step{
		// x waited hours, restarted, merged in the hour.
		{"x", 5 * time.Hour, "", mergequeue.NotReady},
		{"x", 4 * time.Hour, mergequeue.NotReady, mergequeue.Pending},
		{"x", 3 * time.Hour, mergequeue.Pending, mergequeue.Testing},
		{"y", 150 * time.Minute, "", mergequeue.NotReady},
		{"y", 140 * time.Minute, mergequeue.NotReady, mergequeue.Pending},
		{"y", 130 * time.Minute, mergequeue.Pending, mergequeue.Cancelled}, // out of the window
		{"x", 50 * time.Minute, mergequeue.Testing, mergequeue.Pending},
		{"x", 40 * time.Minute, mergequeue.Pending, mergequeue.Testing},
		{"x", 10 * time.Minute, mergequeue.Testing, mergequeue.Merged},
		// y resubmitted: a new episode, tested and failed.
		{"y", 30 * time.Minute, "", mergequeue.NotReady},
		{"y", 29 * time.Minute, mergequeue.NotReady, mergequeue.Pending},
		{"y", 28 * time.Minute, mergequeue.Pending, mergequeue.Testing},
		{"y", 20 * time.Minute, mergequeue.Testing, mergequeue.PendingFailure},
		{"y", 19 * time.Minute, mergequeue.PendingFailure, mergequeue.Failed},
		// z never left NOT_READY: cancelled, counted, not measured.
		{"z", 5 * time.Minute, "", mergequeue.NotReady},
		{"z", 4 * time.Minute, mergequeue.NotReady, mergequeue.Cancelled},
	}
	var rec store.QueueRecord
	var all []mergequeue.Transition
	var lastHour []mergequeue.TransitionRecord
	episodes := map[string]int{}
	for i, s := range steps {
		if s.from == "" {
			episodes[s.entry]++
		}
		tr := mergequeue.Transition{Seq: int64(i + 1), EntryID: s.entry, Episode: episodes[s.entry], From: s.from, To: s.to, At: now.Add(-s.ago)}
		var snap mergequeue.Snapshot
		if !s.to.Terminal() {
			snap.Entries = []mergequeue.Entry{{ID: s.entry, State: s.to}}
		}
		for id, c := range rec.Clocks { // the other entries stay active
			if id != s.entry {
				snap.Entries = append(snap.Entries, mergequeue.Entry{ID: id, State: mergequeue.Pending, Episode: c.Episode})
			}
		}
		var recs []mergequeue.TransitionRecord
		rec, recs = rec.Advance(snap, []mergequeue.Transition{tr})
		all = append(all, tr)
		if tr.At.After(now.Add(-time.Hour)) {
			lastHour = append(lastHour, recs...)
		}
	}
	got := queuemetrics.WindowOf(now, lastHour)
	want := queuemetrics.WindowOf(now, testkit.QueueHistory(all))
	// The records of the hour come in the order they were saved; the
	// histograms do not care about order.
	byEnd := cmpopts.SortSlices(func(a, b queuemetrics.Concluded) bool {
		return a.InQueue < b.InQueue || a.InQueue == b.InQueue && a.Conclusion < b.Conclusion
	})
	if d := cmp.Diff(got, want, byEnd); d != "" {
		t.Errorf("(-got +want):\n%s", d)
	}
	if len(want.Concluded) != 3 || want.Restarts != 1 {
		t.Fatalf("the case lost its point: %+v", want)
	}
	if len(rec.Clocks) != 0 {
		t.Errorf("clocks left after every entry concluded: %+v", rec.Clocks)
	}
}
