package queuesim

import (
	"errors"
	"slices"
	"time"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// Replay is a queue's recorded history, as a simulation replays it
// (Config.Replay): its pull requests arrive when they became ready to
// test, those its queue failed for their own tests are bad (the rest
// good), and each run takes the duration of one of its runs, drawn at
// random.
type Replay struct {
	Arrivals  []time.Duration // offsets from the first arrival, ascending
	Bad       []bool          // by arrival
	Durations []time.Duration // of its completed CI runs
}

// Actual is what a recorded history shows of its queue, measured as a
// simulation measures itself (Result): merges per hour from the first
// arrival to the last merge, time to merge from arrival (ready) to merge.
type Actual struct {
	PRs, Merged, Failed, CIRuns int
	// Left out of the replay: submissions cancelled, never ready, or not
	// concluded within the history.
	Cancelled, Unfinished int
	MergesPerHour         float64
	P50, P90              time.Duration
	RunsPerMerge          float64
	// FlakeRate is the share of completed runs that failed though every
	// PR in them merged; RunTime the median run duration.
	FlakeRate float64
	RunTime   time.Duration
}

// FromHistory is the replay of history h and its actual figures. Only
// the submissions that became ready and merged or failed within the
// history are replayed: a cancelled one leaves at a time no replay knows,
// and one still in the queue has no outcome to replay.
func FromHistory(h mergequeue.History) (Replay, Actual, error) {
	type key struct{ pr, ep int }
	merged := map[key]time.Time{}
	for _, m := range h.Merges {
		merged[key{m.PRNumber, m.Episode}] = time.Time(m.At)
	}
	failed := map[key]string{}
	for _, f := range h.Failures {
		failed[key{f.PRNumber, f.Episode}] = f.Reason
	}
	type arrival struct {
		at  time.Time
		bad bool
		k   key
	}
	var arrivals []arrival
	var a Actual
	for _, ar := range h.Arrivals {
		k := key{ar.PRNumber, ar.Episode}
		_, ok := merged[k]
		reason, bad := failed[k]
		switch {
		case ar.ReadyAt == nil || !ok && !bad:
			if slices.ContainsFunc(h.Cancellations, func(c mergequeue.HistoryConclusion) bool { return c.PRNumber == k.pr && c.Episode == k.ep }) {
				a.Cancelled++
			} else {
				a.Unfinished++
			}
			continue
		}
		arrivals = append(arrivals, arrival{at: time.Time(*ar.ReadyAt), bad: bad && mergequeue.TestFailure(reason), k: k})
	}
	if len(arrivals) == 0 {
		return Replay{}, Actual{}, errors.New("the history holds no pull request that became ready and merged or failed")
	}
	slices.SortStableFunc(arrivals, func(x, y arrival) int { return x.at.Compare(y.at) })
	var r Replay
	first, last := arrivals[0].at, arrivals[0].at
	var toMerge []time.Duration
	for _, ar := range arrivals {
		r.Arrivals = append(r.Arrivals, ar.at.Sub(first))
		r.Bad = append(r.Bad, ar.bad)
		if at, ok := merged[ar.k]; ok {
			a.Merged++
			toMerge = append(toMerge, at.Sub(ar.at))
			last = later(last, at)
		} else {
			a.Failed++
		}
	}
	a.PRs = len(arrivals)
	mergedPR := map[int]bool{}
	for k := range merged {
		mergedPR[k.pr] = true
	}
	completed, flakes := 0, 0
	for _, run := range h.Runs {
		if run.Direct {
			continue
		}
		a.CIRuns++
		if run.Outcome != mergequeue.RunSucceeded && run.Outcome != mergequeue.RunFailed {
			continue
		}
		completed++
		r.Durations = append(r.Durations, time.Time(run.EndedAt).Sub(time.Time(run.StartedAt)))
		all := func(prs []int) bool {
			return !slices.ContainsFunc(prs, func(n int) bool { return !mergedPR[n] })
		}
		if run.Outcome == mergequeue.RunFailed && all(run.PRNumbers) && all(run.DependentPRNumbers) {
			flakes++
		}
	}
	if completed == 0 {
		return Replay{}, Actual{}, errors.New("the history holds no completed test run: no run time to replay")
	}
	a.FlakeRate = float64(flakes) / float64(completed)
	sorted := slices.Sorted(slices.Values(r.Durations))
	a.RunTime = sorted[(len(sorted)-1)/2]
	if a.Merged > 0 {
		a.P50, a.P90 = percentile(toMerge, 0.5), percentile(toMerge, 0.9)
		a.RunsPerMerge = float64(a.CIRuns) / float64(a.Merged)
		if span := last.Sub(first); span > 0 {
			a.MergesPerHour = float64(a.Merged) / span.Hours()
		}
	}
	return r, a, nil
}

// ReplayConfig is the simulation of replay r: its PRs, its flake rate,
// its median run time as the test time, and the queue settings p.
func ReplayConfig(r Replay, a Actual, p mergequeue.QueuePatch, seed uint64) Config {
	return Config{Queue: p, PRs: len(r.Arrivals), FlakeRate: a.FlakeRate, TestTime: a.RunTime, Replay: &r, Seed: seed}
}
