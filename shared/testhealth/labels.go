package testhealth

import (
	"fmt"
	"strconv"
	"time"
)

// Kinds of a failure's label: "was this failure mine?", answered from what
// test health knows of the test.
const (
	// LabelQuarantined: the test is quarantined; its failure does not fail
	// the build.
	LabelQuarantined = "quarantined"
	// LabelKnownFlaky: the test is flaky and not quarantined.
	LabelKnownFlaky = "known_flaky"
	// LabelFailingOnBranch: the test fails on the repository's default
	// branch too (its latest runs there failed, or it is broken).
	LabelFailingOnBranch = "failing_on_branch"
	// LabelNew: none of the above; probably the change under test.
	LabelNew = "new"
)

// LabelOrder is the order labels are listed in: the failures a change's
// author should look at first come first.
var LabelOrder = []string{LabelNew, LabelFailingOnBranch, LabelKnownFlaky, LabelQuarantined}

// FailureLabel is a failed test's label with its evidence.
type FailureLabel struct {
	Kind string // one of the Label kinds
	// Text is the label as people read it: "new", "failing on main",
	// "known flaky", "quarantined".
	Text string
	// Branch is the branch a LabelFailingOnBranch names.
	Branch string
	// Evidence is one sentence saying why.
	Evidence string
}

// FailedRun is what is known of the run whose failure is labelled.
type FailedRun struct {
	At time.Time // when it ran (the upload's time)
	// Recorded: the run is counted in the test already (its upload is
	// ingested), so its own failures are not "earlier" ones.
	Recorded bool
	// Streak is how many of its failed runs the test's streak on the
	// default branch counted (0 unless it ran there, recorded and not set
	// aside by the infrastructure guard): the streak before it is the rest.
	Streak int
}

// LabelWindow is how far back an earlier failure counts against "new".
const LabelWindow = 7 * 24 * time.Hour

// Label answers "was this failure mine?" for a test that failed in run,
// from the test as stored and its repository's settings, in this order:
// quarantined (contract 2.4); known flaky (its status is flaky); failing on
// the default branch (it is broken, or its runs there before this one
// failed: the broken-streak counter, which test health keeps for the
// default branch only); else new, with the test's earlier failures in the
// 7 days before the run as evidence (hour buckets: a failure in the run's
// own hour counts only when the run is not yet recorded).
func Label(tc TestCase, s Settings, run FailedRun, now time.Time) FailureLabel {
	st := Status(tc, s, now)
	branch := s.DefaultBranch
	switch {
	case Quarantined(tc, s):
		if tc.QuarantineOverride == AlwaysQuarantine {
			return FailureLabel{Kind: LabelQuarantined, Text: "quarantined",
				Evidence: "quarantined by its ALWAYS_QUARANTINE override: its failure does not fail the build"}
		}
		return FailureLabel{Kind: LabelQuarantined, Text: "quarantined",
			Evidence: fmt.Sprintf("quarantined as %s (%s): its failure does not fail the build", st.Value, st.Reason)}
	case st.Value == Flaky:
		why := "the repository does not quarantine"
		if s.QuarantineEnabled {
			why = "it is not quarantined"
			if tc.QuarantineOverride == NeverQuarantine {
				why = "its override is NEVER_QUARANTINE"
			}
		}
		return FailureLabel{Kind: LabelKnownFlaky, Text: "known flaky",
			Evidence: fmt.Sprintf("flaky (%s); %s", st.Reason, why)}
	case st.Value == Broken:
		return FailureLabel{Kind: LabelFailingOnBranch, Text: "failing on " + branch, Branch: branch,
			Evidence: fmt.Sprintf("broken (%s)", st.Reason)}
	case tc.Streak-run.Streak > 0:
		n := tc.Streak - run.Streak
		return FailureLabel{Kind: LabelFailingOnBranch, Text: "failing on " + branch, Branch: branch,
			Evidence: fmt.Sprintf("its last %s on %s failed too", count(n, "run"), branch)}
	}
	earlier := FailuresBefore(tc, run.At, !run.Recorded)
	if earlier == 0 {
		return FailureLabel{Kind: LabelNew, Text: "new",
			Evidence: "no failure in the 7 days before this run: probably this change"}
	}
	return FailureLabel{Kind: LabelNew, Text: "new",
		Evidence: fmt.Sprintf("healthy, %s in the 7 days before this run, and its latest runs on %s passed: probably this change",
			count(earlier, "earlier failed run"), branch)}
}

// FailuresBefore counts tc's failed runs in the LabelWindow before at, by
// hour bucket: the hours before at's own, and at's own hour too when
// withOwnHour.
func FailuresBefore(tc TestCase, at time.Time, withOwnHour bool) int {
	end := hourOf(at)
	if withOwnHour {
		end++
	}
	start := hourOf(at.Add(-LabelWindow))
	n := 0
	for k, c := range tc.FailedByHour {
		if h, err := strconv.ParseInt(k, 10, 64); err == nil && h >= start && h < end {
			n += c
		}
	}
	return n
}
