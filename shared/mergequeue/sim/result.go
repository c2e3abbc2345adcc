package sim

import (
	"math"
	"slices"
	"time"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// Result is the figures of one simulation.
type Result struct {
	Queue     mergequeue.Queue // the queue's settings, defaults filled in
	PRs       int
	Bad       int // PRs that break the tests
	Merged    int
	Failed    int // good PRs that ended FAILED: wrongly ejected
	BadFailed int // bad PRs that ended FAILED
	BadMerged int // bad PRs merged on the simulated GitHub: must be 0
	Cancelled int
	CIRuns    int // distinct runs started
	Retries   int // flaky retries taken (RETRY_KNOWN_FLAKY, RETRY_FAILURE)
	// FlakyTests is how many flaky tests make the flake rate,
	// UnknownFlakyTests how many of them test health holds healthy.
	FlakyTests, UnknownFlakyTests int

	// Elapsed is the virtual time from the first submit to the last
	// conclusion.
	Elapsed time.Duration
	// MergesPerT is the throughput over the steady window: from the first
	// submit to the last merge at or before the last submit. Arrivals
	// never stop inside it, so the drain at the end, where the queue runs
	// out of PRs, is left out; a saturated queue starts all its runs at
	// the first step, so there is no ramp-up to leave out. Ending on a
	// merge counts whole generations when runs end together. When the
	// window holds no merge, it is the whole run.
	MergesPerT   float64
	Window       time.Duration
	WindowMerges int

	RunsPerMerge  float64 // CI runs per merged PR
	MeanInQueue   time.Duration
	P95InQueue    time.Duration // of merged PRs, submit to merge
	EjectedPer100 float64       // good PRs failed per 100 merges

	// HasBound reports whether the model covers the setting: no batching,
	// a fixed test time within the timeout, saturated arrivals, no
	// optimistic merge to rescue flaky runs, and no flaky retries. Bound
	// is its merges per T: Bound in SINGLE mode, SharedLanesBound in
	// PARALLEL mode (one lane without target groups). ModelEjectedPer100
	// is its good PRs failed per 100 merges.
	HasBound           bool
	Bound              float64
	ModelEjectedPer100 float64
	// LanesBound is LanesBound, the most the target groups could merge as
	// evenly loaded lanes, for information; zero without groups.
	LanesBound float64

	Events   map[string]int // events by type
	Statuses int            // commit statuses set
	Steps    int            // engine steps, probes left out
	Probes   int            // steps made to prove ticks quiet, discarded
}

func (s *simulation) result() Result {
	r := Result{Queue: s.snap.Queue, PRs: s.cfg.PRs, CIRuns: len(s.world.ci.runs), Retries: s.retries,
		FlakyTests: len(s.world.ci.suite.flaky), Events: s.world.events, Statuses: s.world.statuses, Steps: s.steps, Probes: s.probes}
	for _, t := range s.world.ci.suite.flaky {
		if t.shown.Status != "flaky" {
			r.UnknownFlakyTests++
		}
	}
	var inQueue []time.Duration
	last, windowEnd := start, start
	for _, p := range s.world.prs {
		if p.bad {
			r.Bad++
			if p.state == mergequeue.PRMerged {
				r.BadMerged++
			}
		}
		switch p.outcome {
		case mergequeue.Merged:
			r.Merged++
			inQueue = append(inQueue, p.concluded.Sub(p.submitted))
			if !p.concluded.After(s.lastSubmit) {
				r.WindowMerges++
				windowEnd = later(windowEnd, p.concluded)
			}
		case mergequeue.Failed:
			if p.bad {
				r.BadFailed++
			} else {
				r.Failed++
			}
		case mergequeue.Cancelled:
			r.Cancelled++
		}
		last = later(last, p.concluded)
	}
	r.Elapsed = last.Sub(start)
	r.Window = windowEnd.Sub(start)
	merges, window := r.WindowMerges, r.Window
	if merges == 0 || window == 0 {
		merges, window = r.Merged, r.Elapsed
	}
	r.MergesPerT = perT(merges, window, s.cfg.TestTime)
	if r.Merged > 0 {
		r.RunsPerMerge = float64(r.CIRuns) / float64(r.Merged)
		r.EjectedPer100 = 100 * float64(r.Failed) / float64(r.Merged)
		r.MeanInQueue, r.P95InQueue = mean(inQueue), percentile(inQueue, 0.95)
	}
	q := s.snap.Queue
	c, p, f, k := q.Concurrency, s.cfg.BadRate, s.cfg.FlakeRate, s.cfg.Targets
	timeout := time.Duration(q.TestingTimeoutMinutes) * time.Minute
	rescued := q.CanOptimisticallyMerge && q.PendingFailureDepth > 0 && f > 0
	if !q.Batch && s.cfg.Spread == 0 && s.cfg.arrival() == Saturated && timeout >= s.cfg.TestTime && !rescued && q.FlakyRetries == 0 {
		switch q.Mode {
		case mergequeue.ModeSingle:
			r.HasBound, r.Bound = true, Bound(p, f, c)
		case mergequeue.ModeParallel:
			r.HasBound, r.Bound = true, SharedLanesBound(p, f, c, max(k, 1))
		}
		r.ModelEjectedPer100 = EjectedPer100(f)
	}
	if k > 0 {
		r.LanesBound = LanesBound(p, f, c, k)
	}
	return r
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func perT(n int, d, t time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / (float64(d) / float64(t))
}

func mean(ds []time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

// percentile is the nearest-rank percentile q of ds.
func percentile(ds []time.Duration, q float64) time.Duration {
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	i := int(math.Ceil(float64(len(sorted))*q)) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
