package web

import (
	"fmt"
	"slices"
	"time"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// window is what "recent" means on the queue pages: the snapshot keeps
// finished PRs this long (mergequeue.FinishedRetention), so every figure
// below is read from it, without another call.
const window = mergequeue.FinishedRetention

// figures are a queue's headline numbers.
type figures struct {
	State                                           coded
	Depth, Testing, Merged24h, Failed24h, Cancel24h int
}

func figuresOf(s mergequeue.Snapshot, now time.Time) figures {
	f := figures{State: words(string(s.Queue.State))}
	cut := now.Add(-window)
	for _, e := range s.Entries {
		switch {
		case e.Active():
			f.Depth++
			if e.State == mergequeue.Testing {
				f.Testing++
			}
		case e.StateChangedAt.Before(cut):
		case e.State == mergequeue.Merged:
			f.Merged24h++
		case e.State == mergequeue.Failed:
			f.Failed24h++
		case e.State == mergequeue.Cancelled:
			f.Cancel24h++
		}
	}
	return f
}

// testingDurations are the times entries spent in TESTING in runs that
// ended within the window: from a transition into TESTING to the entry's
// next transition out of it, in the transitions the snapshot keeps (its
// last mergequeue.MaxKeptTransitions).
func testingDurations(s mergequeue.Snapshot, now time.Time) []time.Duration {
	started := map[string]time.Time{}
	var out []time.Duration
	for _, t := range s.Transitions {
		key := fmt.Sprintf("%s#%d", t.EntryID, t.Episode)
		if t.To == mergequeue.Testing {
			started[key] = t.At
			continue
		}
		if at, ok := started[key]; ok && t.From == mergequeue.Testing {
			delete(started, key)
			if !t.At.Before(now.Add(-window)) {
				out = append(out, t.At.Sub(at))
			}
		}
	}
	return out
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// estimate is the time to merge of the PR at index i of the queue order
// (0 first): the queue tests concurrency PRs at a time, each run taking
// the median run time, so the PR's run starts after i/concurrency rounds
// and ends one round later; a PR already testing has had part of its round.
// Batching, bisection and failures ahead are not foreseen.
func estimate(i, concurrency int, run time.Duration, e mergequeue.Entry, now time.Time) time.Duration {
	if concurrency < 1 {
		concurrency = 1
	}
	eta := time.Duration(i/concurrency+1) * run
	if e.State == mergequeue.Testing {
		eta -= now.Sub(e.StateChangedAt)
	}
	return max(eta, 0)
}

// depthChart is the queue's depth at the end of each hour of the window:
// the PRs submitted by then and not yet finished, from the submit and
// finish times of the PRs the snapshot holds (every PR active now or
// finished within the window).
func depthChart(s mergequeue.Snapshot, now time.Time) chart {
	c := chart{Title: "Queue depth, last 24 hours", XLabel: "hour (UTC)", YLabel: "PRs in the queue", Kind: countKind, TimeFormat: "15:04"}
	end := now.Truncate(time.Hour).Add(time.Hour)
	for h := end.Add(-window); h.Before(end); h = h.Add(time.Hour) {
		at := h.Add(time.Hour)
		if at.After(now) {
			at = now
		}
		n := 0
		for _, e := range s.Entries {
			if e.SubmittedAt.IsZero() || e.SubmittedAt.After(at) {
				continue
			}
			if e.Active() || e.StateChangedAt.After(at) {
				n++
			}
		}
		c.Bars = append(c.Bars, bar{At: h, Value: float64(n)})
	}
	return c
}

// waitChart is the mean time from submit to merge of the PRs merged in
// each hour of the window.
func waitChart(s mergequeue.Snapshot, now time.Time) chart {
	c := chart{Title: "Wait to merge, last 24 hours", XLabel: "hour merged (UTC)", YLabel: "mean time to merge", Kind: durationKind, TimeFormat: "15:04"}
	end := now.Truncate(time.Hour).Add(time.Hour)
	for h := end.Add(-window); h.Before(end); h = h.Add(time.Hour) {
		var sum time.Duration
		n := 0
		for _, e := range s.Entries {
			if e.State == mergequeue.Merged && !e.StateChangedAt.Before(h) && e.StateChangedAt.Before(h.Add(time.Hour)) {
				sum += e.StateChangedAt.Sub(e.SubmittedAt)
				n++
			}
		}
		b := bar{At: h, Empty: n == 0}
		if n > 0 {
			b.Value = (sum / time.Duration(n)).Seconds()
		}
		c.Bars = append(c.Bars, b)
	}
	return c
}
