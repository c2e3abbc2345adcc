package testhealth

import "time"

// StreakStep is what one upload does to a test's broken streak.
type StreakStep int

// The steps of the broken streak (Tally.Streak).
const (
	StreakKeep   StreakStep = iota // nothing: not monitored, no run, or a commit already counted
	StreakReset                    // a pass on the commit: the streak is 0
	StreakAdd                      // a new commit whose every attempt failed: one more
	StreakSettle                   // the streak's commit failed again: its retry did not pass
)

// Tally is what one upload's runs of a test add to its aggregate: the
// counting rule the store applies with one blind update (package store)
// and the simulator applies in memory (Apply), so both count alike.
type Tally struct {
	Passed, Failed int  // runs that passed and that failed (an error is a failure); skips count for nothing
	Monitored      bool // the upload's Monitored
	Guarded        bool // the upload's Guarded
	// Streak and Open: the broken streak's step, and whether the commit
	// it adds has had one failed attempt only (a retry may pass it).
	Streak StreakStep
	Open   bool
}

// TallyRuns counts one upload's runs of a test. A commit counts once
// towards the broken streak, whatever how many uploads retry it: a pass
// anywhere on it resets the streak; a failure adds the commit unless an
// earlier upload of it failed (counted already) or passed (it passed on
// retry). A commit with two failed attempts or more is settled: the
// classifier may then call the test broken on it (see Classify).
func TallyRuns(up UploadRuns, runs []Run, onCommit CommitSoFar) Tally {
	t := Tally{Monitored: up.Monitored, Guarded: up.Guarded}
	for _, r := range runs {
		switch {
		case r.Status == "passed":
			t.Passed++
		case r.Failed():
			t.Failed++
		}
	}
	if !up.Monitored || t.Passed+t.Failed == 0 {
		return t
	}
	switch {
	case t.Passed > 0:
		t.Streak = StreakReset
	case onCommit.Passed:
		// Passed on an earlier attempt: the streak was reset then.
	case onCommit.Failed:
		t.Streak = StreakSettle
	default:
		t.Streak, t.Open = StreakAdd, t.Failed == 1
	}
	return t
}

// Outcome is the test's outcome in the upload: Passed, Failed or
// PassedOnRetry.
func (t Tally) Outcome() string {
	switch {
	case t.Failed > 0 && t.Passed > 0:
		return PassedOnRetry
	case t.Failed > 0:
		return Failed
	}
	return Passed
}

// Apply adds t, counted from runs at at, to tc as the store's update adds
// it to the test's counter item.
func (t Tally) Apply(tc *TestCase, upload string, at time.Time) {
	h := HourKey(at)
	add := func(m *map[string]int, n int) {
		if n == 0 {
			return
		}
		if *m == nil {
			*m = map[string]int{}
		}
		(*m)[h] += n
	}
	add(&tc.PassedByHour, t.Passed)
	add(&tc.FailedByHour, t.Failed)
	if t.Monitored {
		add(&tc.MonitoredPassedByHour, t.Passed)
		add(&tc.MonitoredFailedByHour, t.Failed)
	}
	switch t.Streak {
	case StreakReset:
		tc.Streak, tc.StreakOpen = 0, false
	case StreakAdd:
		tc.Streak, tc.StreakOpen = tc.Streak+1, t.Open
	case StreakSettle:
		tc.StreakOpen = false
	}
	if t.Monitored && t.Passed+t.Failed > 0 {
		tc.EpisodeRuns += t.Passed + t.Failed
		tc.EpisodeFailures += t.Failed
		if t.Failed > 0 {
			tc.CleanRuns, tc.LastFailure = 0, at
		} else {
			tc.CleanRuns += t.Passed
		}
	}
	tc.LastRun = at
	tc.LastUpload, tc.LastOutcome, tc.LastGuarded = upload, t.Outcome(), t.Guarded
}

// GuardCount counts an upload's test cases for the infrastructure guard: a
// test case failed when it had a failed run and no passing one, so one that
// passed on a retry inside the upload (Surefire's flakyFailure, a repeated
// testcase element) did not fail. It remembers the test cases that failed,
// up to a bound; beyond it, a further failed case counts as failed.
type GuardCount struct {
	cases    int
	failed   map[string]bool // id → passed too
	overflow int
	max      int
}

// NewGuardCount counts with at most max failed test cases remembered.
func NewGuardCount(max int) *GuardCount {
	return &GuardCount{failed: map[string]bool{}, max: max}
}

// Add counts one run of test id: its attempt in the report (0 for the
// first) and whether it passed or failed (neither: skipped).
func (g *GuardCount) Add(id string, attempt int, passed, failed bool) {
	if attempt == 0 && (passed || failed) {
		g.cases++
	}
	passedToo, seen := g.failed[id]
	switch {
	case failed && !seen && len(g.failed) < g.max:
		g.failed[id] = false
	case failed && !seen && attempt == 0:
		g.overflow++
	case passed && seen && !passedToo:
		g.failed[id] = true
	}
}

// Counts returns the test cases and, of them, those that failed.
func (g *GuardCount) Counts() (cases, failed int) {
	failed = g.overflow
	for _, passed := range g.failed {
		if !passed {
			failed++
		}
	}
	return g.cases, min(failed, g.cases)
}

// Failed reports whether test id had a failed run (among those remembered).
func (g *GuardCount) Failed(id string) bool {
	_, ok := g.failed[id]
	return ok
}

// FailedIDs are the remembered test cases with a failed run.
func (g *GuardCount) FailedIDs() map[string]bool {
	out := make(map[string]bool, len(g.failed))
	for id := range g.failed {
		out[id] = true
	}
	return out
}
