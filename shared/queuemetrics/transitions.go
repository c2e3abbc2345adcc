package queuemetrics

import (
	"time"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// Window1h is the length of the rolling window; a time t is in it when
// now-1h < t <= now.
const Window1h = time.Hour

// conclusionOf is the conclusion label of each terminal state.
var conclusionOf = map[mergequeue.PRState]Conclusion{
	mergequeue.Merged: Merged, mergequeue.Failed: Failed, mergequeue.Cancelled: Cancelled,
}

// WindowOf is a queue's last hour at now from its stored transition
// records (contract 3.5: every transition is recorded with its time, from
// and to): TESTING → PENDING transitions count as restarts (and those of
// an anti-flake retry as flaky retries too), and each
// conclusion is measured from the episode clock its record carries, which
// the engine's fold (mergequeue.FoldEpisodes) kept while the episode ran,
// so the records of the last hour are enough however long ago the pull
// request was submitted. Records outside (now-1h, now] are ignored; their
// order does not matter.
func WindowOf(now time.Time, recs []mergequeue.TransitionRecord) Window {
	var w Window
	for _, rec := range recs {
		t := rec.Transition
		if !t.At.After(now.Add(-Window1h)) || t.At.After(now) {
			continue
		}
		if t.From == mergequeue.Testing && t.To == mergequeue.Pending {
			w.Restarts++
			if t.Reason == mergequeue.ReasonRetryKnownFlaky || t.Reason == mergequeue.ReasonRetryFailure {
				w.FlakyRetries++
			}
		}
		c, ok := conclusionOf[t.To]
		if !ok {
			continue
		}
		done := Concluded{Conclusion: c}
		if !rec.FirstPending.IsZero() {
			done.Queued, done.InQueue = true, t.At.Sub(rec.FirstPending)
		}
		if !rec.FirstTesting.IsZero() {
			done.Tested, done.Test = true, rec.Tested
			if done.Queued {
				done.Wait = rec.FirstTesting.Sub(rec.FirstPending)
			}
		}
		w.Concluded = append(w.Concluded, done)
	}
	return w
}
