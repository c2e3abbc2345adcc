package testhealth

import (
	"fmt"
	"math"
	"time"
)

// MaxRecoveryRuns is the ceiling of the clean runs a flaky test needs to be
// healthy again: a test whose episode rate is below 1% needs no more than
// one at 1% (ln 0.05 / ln 0.99 ≈ 299). Without it a test that flaked once
// in a long history would need thousands of clean runs, and a fixed test
// would stay quarantined for months; at the ceiling, a test still flaking
// at 0.5% goes unnoticed through it one time in five (and is flagged again
// on its next failure). `mainguard sim health` shows the trade.
const MaxRecoveryRuns = 300

// EpisodePriorRuns are the passing runs a flaky episode's rate counts
// beyond its own (RecoveryRuns): three times the failure-rate monitor's
// default of 20 runs. `mainguard sim health` chose it: with 20, a young
// test that flaked in its first runs recovered before it flaked again
// often enough to change status three times in 14 days (its one or two
// early failures read as a rate of several percent); with 40, a few such
// tests still did in ten histories; with 60, none did, and every fixed
// test was still healthy again within the clean runs asked of it.
const EpisodePriorRuns = 60

// recoveryConfidence is the probability with which a test still flaking at
// its episode's rate would have failed in the clean runs asked of it.
const recoveryConfidence = 0.95

// RecoveryRuns is how many clean runs a flaky test needs to be healthy
// again, and the failure rate it is asked of: enough that a test still
// failing at its episode's rate r would, with 95% probability, have failed
// at least once, n = ⌈ln 0.05 / ln(1 − r)⌉, at most MaxRecoveryRuns. r is
// the episode's failures over its runs up to its last failure (its clean
// runs since say nothing of the rate it flaked at), with at least the one
// failure that made it flaky (the evidence may come from a branch the
// episode does not count), and with EpisodePriorRuns passing runs more: a
// young test's one failure in its first few runs is no evidence of a high
// rate (1 in 4 alone would ask 11 clean runs; with them, 191), and a
// test's own runs soon outweigh them (50 failures in 100 runs ask 8).
func RecoveryRuns(tc TestCase, s Settings) (n int, r float64) {
	runs := tc.EpisodeRuns - tc.CleanRuns
	if runs <= 0 {
		runs = tc.EpisodeRuns
	}
	r = float64(max(tc.EpisodeFailures, 1)) / float64(max(runs, 0)+EpisodePriorRuns)
	if r >= 1 {
		return 1, 1
	}
	n = int(math.Ceil(math.Log(1-recoveryConfidence) / math.Log1p(-r)))
	return min(max(n, 1), MaxRecoveryRuns), r
}

// recoveryDue is when a flaky test's floor ends: the repository's
// recovery days after its last sign of flaking, a monitored failure or a
// failure and pass on one commit.
func recoveryDue(tc TestCase, s Settings) time.Time {
	last := tc.LastFailure
	if tc.Flake != nil && tc.Flake.At.After(last) {
		last = tc.Flake.At
	}
	return last.Add(time.Duration(s.RecoveryDays) * Day)
}

// recovered reports whether a flaky test whose monitors have all resolved
// may be healthy again: it has had the clean runs RecoveryRuns asks and the
// recovery days have passed since it last flaked; or it has stopped running
// (no run in stale_hours, so no evidence will ever come).
func recovered(tc TestCase, s Settings, now time.Time) bool {
	if stale(tc, s, now) {
		return true
	}
	n, _ := RecoveryRuns(tc, s)
	return tc.CleanRuns >= n && !now.Before(recoveryDue(tc, s))
}

func stale(tc TestCase, s Settings, now time.Time) bool {
	return !tc.LastRun.IsZero() && now.Sub(tc.LastRun) >= time.Duration(s.StaleHours)*time.Hour
}

// recoveryClause states a flaky test's way back: how many clean runs it has
// and how many it needs, the rate they are asked of, and until when the
// recovery days hold it.
func recoveryClause(tc TestCase, s Settings, now time.Time) string {
	n, r := RecoveryRuns(tc, s)
	out := fmt.Sprintf("%d of the %s it needs (failure rate %s over its flaky episode)",
		tc.CleanRuns, count(n, "clean run"), percentOf(r))
	if due := recoveryDue(tc, s); now.Before(due) {
		out += fmt.Sprintf(", and no sign of flaking until %s", due.UTC().Format("15:04 UTC, 2 Jan 2006"))
	}
	return out
}

// percentOf spells a rate as a percentage, to a tenth below 10%.
func percentOf(r float64) string {
	if r < 0.1 && r > 0 {
		return fmt.Sprintf("%.1f%%", r*100)
	}
	return percent(r)
}
