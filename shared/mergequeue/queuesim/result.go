package queuesim

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

	// MergesPerHour is the merged PRs per hour from the first submit to
	// the last merge; P50 and P90 the time to merge (submit to merge) of
	// the merged PRs.
	MergesPerHour float64
	P50, P90      time.Duration
	// Phases are the figures of each step of the bad probability
	// (Config.BadSchedule; one phase without it).
	Phases []Phase
	// Autopilot are the autopilot's changes, in order (its events).
	Autopilot []mergequeue.AutopilotChange
	// Start is when the simulation began, on its virtual clock.
	Start time.Time

	Events   map[string]int // events by type
	Statuses int            // commit statuses set
	Steps    int            // engine steps, probes left out
	Probes   int            // steps made to prove ticks quiet, discarded
}

// Phase is the figures of the PRs of one phase: PR indexes From to To
// (exclusive), bad with probability BadRate. A CI run counts in the phase
// of its last PR under test. MergesPerHour is the phase's merges over the
// time from its first PR's submit to its last PR's conclusion: about the
// arrival rate when the queue keeps up, less the longer its PRs wait
// (for the PRs of the phase before too).
type Phase struct {
	From, To                                   int
	BadRate                                    float64
	Bad, Merged, Failed, BadFailed, BadMerged  int
	CIRuns                                     int
	MergesPerHour, RunsPerMerge, EjectedPer100 float64
	P50, P90                                   time.Duration
	firstSubmit, lastConclusion                time.Time
	toMerge                                    []time.Duration
}

func (s *simulation) result() Result {
	r := Result{Queue: s.snap.Queue, PRs: s.cfg.PRs, CIRuns: len(s.world.ci.runs), Retries: s.retries,
		FlakyTests: len(s.world.ci.suite.flaky), Events: s.world.events, Statuses: s.world.statuses, Steps: s.steps, Probes: s.probes}
	for _, t := range s.world.ci.suite.flaky {
		if t.shown.Status != "flaky" {
			r.UnknownFlakyTests++
		}
	}
	phaseOf := s.phases(&r)
	t := s.tally(&r, phaseOf)
	r.Elapsed = t.last.Sub(start)
	r.Window = t.windowEnd.Sub(start)
	merges, window := r.WindowMerges, r.Window
	if merges == 0 || window == 0 {
		merges, window = r.Merged, r.Elapsed
	}
	r.MergesPerT = perT(merges, window, s.cfg.TestTime)
	if r.Merged > 0 {
		r.RunsPerMerge = float64(r.CIRuns) / float64(r.Merged)
		r.EjectedPer100 = 100 * float64(r.Failed) / float64(r.Merged)
		r.MeanInQueue, r.P95InQueue = mean(t.inQueue), percentile(t.inQueue, 0.95)
		r.P50, r.P90 = percentile(t.inQueue, 0.5), percentile(t.inQueue, 0.9)
		r.MergesPerHour = float64(r.Merged) / t.lastMerge.Sub(start).Hours()
	}
	for i := range r.Phases {
		r.Phases[i].finish()
	}
	r.Autopilot, r.Start = s.autopilot, start
	s.bounds(&r)
	return r
}

// phases makes r's phases, with the CI runs of each, and returns the
// phase of a PR number.
func (s *simulation) phases(r *Result) func(pr int) *Phase {
	phases := s.cfg.phases()
	r.Phases = make([]Phase, len(phases))
	phaseOf := func(pr int) *Phase { // PR numbers count from 1
		for i, ph := range phases {
			if pr-1 < ph.To {
				return &r.Phases[i]
			}
		}
		return &r.Phases[len(phases)-1]
	}
	for i, ph := range phases {
		r.Phases[i].From, r.Phases[i].To, r.Phases[i].BadRate = ph.From, ph.To, ph.P
	}
	for _, run := range s.world.ci.runs {
		if run.pr > 0 {
			phaseOf(run.pr).CIRuns++
		}
	}
	return phaseOf
}

// prTally is what the PRs' outcomes give beside their counts: the times
// the merged PRs spent in the queue, the last conclusion, the end of the
// submission window's merges and the last merge.
type prTally struct {
	inQueue                    []time.Duration
	last, windowEnd, lastMerge time.Time
}

// tally counts the PRs' outcomes into r and their phases.
func (s *simulation) tally(r *Result, phaseOf func(pr int) *Phase) prTally {
	t := prTally{last: start, windowEnd: start, lastMerge: start}
	for _, p := range s.world.prs {
		ph := phaseOf(p.number)
		if ph.firstSubmit.IsZero() || p.submitted.Before(ph.firstSubmit) {
			ph.firstSubmit = p.submitted
		}
		ph.lastConclusion = later(ph.lastConclusion, p.concluded)
		if p.bad {
			r.Bad++
			ph.Bad++
			if p.state == mergequeue.PRMerged {
				r.BadMerged++
				ph.BadMerged++
			}
		}
		switch p.outcome {
		case mergequeue.Merged:
			r.Merged++
			ph.Merged++
			t.inQueue = append(t.inQueue, p.concluded.Sub(p.submitted))
			ph.toMerge = append(ph.toMerge, p.concluded.Sub(p.submitted))
			if !p.concluded.After(s.lastSubmit) {
				r.WindowMerges++
				t.windowEnd = later(t.windowEnd, p.concluded)
			}
			t.lastMerge = later(t.lastMerge, p.concluded)
		case mergequeue.Failed:
			if p.bad {
				r.BadFailed++
				ph.BadFailed++
			} else {
				r.Failed++
				ph.Failed++
			}
		case mergequeue.Cancelled:
			r.Cancelled++
		}
		t.last = later(t.last, p.concluded)
	}
	return t
}

// finish computes a phase's rates from its counts.
func (ph *Phase) finish() {
	if ph.Merged == 0 {
		return
	}
	ph.RunsPerMerge = float64(ph.CIRuns) / float64(ph.Merged)
	ph.EjectedPer100 = 100 * float64(ph.Failed) / float64(ph.Merged)
	ph.P50, ph.P90 = percentile(ph.toMerge, 0.5), percentile(ph.toMerge, 0.9)
	if span := ph.lastConclusion.Sub(ph.firstSubmit); span > 0 {
		ph.MergesPerHour = float64(ph.Merged) / span.Hours()
	}
}

// bounds gives r the models' figures that apply to the simulated queue.
func (s *simulation) bounds(r *Result) {
	q := s.snap.Queue
	c, p, f, k := q.Concurrency, s.cfg.BadRate, s.cfg.FlakeRate, s.cfg.Targets
	timeout := time.Duration(q.TestingTimeoutMinutes) * time.Minute
	rescued := q.CanOptimisticallyMerge && q.PendingFailureDepth > 0 && f > 0
	if !q.Batch && !q.Autopilot && s.cfg.Spread == 0 && s.cfg.LogNormal == 0 && len(s.cfg.BadSchedule) == 0 && s.cfg.arrival() == Saturated && timeout >= s.cfg.TestTime && !rescued && q.FlakyRetries == 0 {
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
