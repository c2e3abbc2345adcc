package queuemetrics

import (
	"cmp"
	"slices"
	"time"
)

// Transition is one recorded state change of a pull request in a queue
// (contract 3.5: every transition is recorded with its time, from and to),
// the shape a store reads back to fill a Window.
type Transition struct {
	// Entry identifies the queue entry (the pull request's queue entry id);
	// transitions of one entry are read in time order as its episodes.
	Entry string
	At    time.Time
	From  string // "" for the submit transition
	To    string
}

// Window1h is the length of the rolling window; a time t is in it when
// now-1h < t <= now.
const Window1h = time.Hour

// Summarize computes a queue's Window at now from its transitions. It needs
// every transition of the last hour, and for each entry that concluded in
// the last hour every transition of that episode since it was submitted
// (its PENDING may be older than the hour). Transitions may come in any
// order; older ones are harmless.
//
// A conclusion is a transition to MERGED, FAILED or CANCELLED; the next
// transition of the same entry starts a new episode (resubmission).
func Summarize(now time.Time, ts []Transition) Window {
	ts = slices.Clone(ts)
	slices.SortStableFunc(ts, func(a, b Transition) int {
		return cmp.Or(cmp.Compare(a.Entry, b.Entry), a.At.Compare(b.At))
	})
	inWindow := func(t time.Time) bool { return t.After(now.Add(-Window1h)) && !t.After(now) }

	var w Window
	var ep episode
	for i, t := range ts {
		if i == 0 || t.Entry != ts[i-1].Entry {
			ep = episode{}
		}
		if t.From == StateTesting && t.To == StatePending && inWindow(t.At) {
			w.Restarts++
		}
		if t.From == StateTesting && !ep.testingSince.IsZero() {
			ep.test += t.At.Sub(ep.testingSince)
			ep.testingSince = time.Time{}
		}
		switch t.To {
		case StatePending:
			if ep.firstPending.IsZero() {
				ep.firstPending = t.At
			}
		case StateTesting:
			if ep.firstTesting.IsZero() {
				ep.firstTesting = t.At
			}
			ep.testingSince = t.At
		case StateMerged, StateFailed, StateCancelled:
			if inWindow(t.At) {
				w.Concluded = append(w.Concluded, ep.concluded(t))
			}
			ep = episode{}
		}
	}
	return w
}

// episode is one entry's way through the queue, from submit to conclusion.
type episode struct {
	firstPending, firstTesting, testingSince time.Time
	test                                     time.Duration
}

func (ep episode) concluded(t Transition) Concluded {
	c := Concluded{Conclusion: conclusionOf[t.To]}
	if !ep.firstPending.IsZero() {
		c.Queued, c.InQueue = true, t.At.Sub(ep.firstPending)
	}
	if !ep.firstTesting.IsZero() {
		c.Tested, c.Test = true, ep.test
		if c.Queued {
			c.Wait = ep.firstTesting.Sub(ep.firstPending)
		}
	}
	return c
}

var conclusionOf = map[string]Conclusion{StateMerged: Merged, StateFailed: Failed, StateCancelled: Cancelled}
