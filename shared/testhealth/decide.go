package testhealth

import "time"

// Decide is the whole health decision for one test at now, as an ingest or
// the scheduled reclassification makes it: counters that left every
// window pruned once there are enough of them (PruneDue; it reports how
// many there are), new flake evidence from
// its commit, an ended quarantine override set aside (Expire), the status,
// the start of a flaky episode, and when it became a quarantine candidate.
// It does no I/O; package healthsvc writes what changed, and the simulator
// (package healthsim) replays histories through it.
func Decide(tc TestCase, commit *CommitResult, s Settings, now time.Time) (TestCase, int) {
	after, pruned := PruneDue(Expire(tc, now), now)
	if commit != nil && s.PassOnRetry {
		if at, ok := commit.Flaky(); ok && (tc.Flake == nil || at.After(tc.Flake.At)) {
			after.Flake = &FlakeEvidence{At: at, SHA: commit.SHA, Branch: commit.Branch}
		}
	}
	if Previous(tc) != Flaky {
		// A flaky episode starts with the runs the failure-rate monitor
		// sees now, so its rate is measured over them and not over the one
		// or two runs of the evidence alone.
		passed, failed := monitored(after, time.Duration(s.WindowHours)*time.Hour, now)
		after.EpisodeRuns, after.EpisodeFailures = passed+failed, failed
	}
	// Decided on every test of every upload; put in words only where the
	// value changes (a read states a kept value's evidence as of then).
	if v := judge(after, s, now); v.value != Previous(tc) {
		after.Status = v.status(after, s, now)
	} else {
		after.Status = tc.Status
	}
	if !EpisodeStarted(tc, after) {
		after.EpisodeRuns, after.EpisodeFailures = tc.EpisodeRuns, tc.EpisodeFailures
	}
	if Previous(tc) == Broken && after.Status.Value != Broken {
		after.BrokenUntil = now
	}
	if after.QuarantineCandidate() != "" && tc.QuarantineCandidate() == "" {
		after.QuarantineSince = now
	}
	return after, pruned
}

// EpisodeStarted reports whether Decide started a flaky episode going from
// before to after: the episode's counts are to be written.
func EpisodeStarted(before, after TestCase) bool {
	return after.Status.Value == Flaky && Previous(before) != Flaky
}

// Expire sets aside tc's quarantine override once its end has come: the
// override moves to ExpiredOverride, so that the repository's rule applies
// to every reader at once, and a health write removes it from the store
// with its event, once (Decide keeps ExpiredOverride for it).
func Expire(tc TestCase, now time.Time) TestCase {
	if tc.QuarantineOverride != "" && !tc.QuarantineUntil.IsZero() && !now.Before(tc.QuarantineUntil) {
		tc.ExpiredOverride, tc.QuarantineOverride = tc.QuarantineOverride, ""
	}
	return tc
}
