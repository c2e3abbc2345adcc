package healthsim

import (
	"time"

	"github.com/mainguard/mainguard/shared/testhealth"
)

// Classifier is a classifier the simulator replays a history through: how
// it counts an upload's runs of a test into the test's aggregate, and how
// it decides the test's health from it.
type Classifier struct {
	Name     string
	Settings testhealth.Settings
	// Count adds the runs of one upload of a test (of which the commit's
	// earlier uploads showed onCommit) to its aggregate.
	Count func(tc *testhealth.TestCase, up testhealth.UploadRuns, runs []testhealth.Run, onCommit testhealth.CommitSoFar)
	// Decide is the health decision at now, with the test's new evidence
	// of a failure and a pass on one commit, if any.
	Decide func(tc testhealth.TestCase, commit *testhealth.CommitResult, now time.Time) testhealth.TestCase
	// RecoveryRuns, when the classifier has them, is how many clean runs
	// a flaky test needs to be healthy again (testhealth.RecoveryRuns).
	RecoveryRuns func(tc testhealth.TestCase) int
}

// Current is the service's classifier under the repository settings h:
// the store's counting rule and the ingest's decision.
func Current(h testhealth.HealthSettings) Classifier {
	s := testhealth.SettingsOf(h, "main")
	return Classifier{
		Name:     "current",
		Settings: s,
		Count: func(tc *testhealth.TestCase, up testhealth.UploadRuns, runs []testhealth.Run, onCommit testhealth.CommitSoFar) {
			testhealth.TallyRuns(up, runs, onCommit).Apply(tc, up.Upload, up.At)
		},
		Decide: func(tc testhealth.TestCase, commit *testhealth.CommitResult, now time.Time) testhealth.TestCase {
			after, _ := testhealth.Decide(tc, commit, s, now)
			return after
		},
		RecoveryRuns: func(tc testhealth.TestCase) int {
			n, _ := testhealth.RecoveryRuns(tc, s)
			return n
		},
	}
}
