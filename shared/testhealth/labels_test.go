package testhealth

import (
	"testing"
	"time"
)

// TestLabel: each label from what test health holds, in its order of
// precedence, with its evidence.
func TestLabel(t *testing.T) {
	t.Parallel()
	h := func(d time.Duration) string { return HourKey(now.Add(-d)) }
	on := true
	quarantining := SettingsOf(HealthSettings{QuarantineEnabled: &on}, "main")
	plain := SettingsOf(HealthSettings{}, "main")
	flaky := TestStatus{Value: Flaky, Reason: "pass-on-retry: failed and passed on commit 1a2b3c4 (main)", Timestamp: now.Add(-time.Hour)}
	flake := &FlakeEvidence{At: now.Add(-time.Hour), SHA: "1a2b3c4d", Branch: "main"}
	run := FailedRun{At: now, Recorded: true}
	tests := []struct {
		name string
		tc   TestCase
		s    Settings
		run  FailedRun
		want FailureLabel
	}{
		{"always quarantined", TestCase{QuarantineOverride: AlwaysQuarantine}, quarantining, run,
			FailureLabel{Kind: LabelQuarantined, Text: "quarantined", Evidence: "quarantined by its ALWAYS_QUARANTINE override: its failure does not fail the build"}},
		{"flaky and quarantined", TestCase{Status: flaky, Flake: flake}, quarantining, run,
			FailureLabel{Kind: LabelQuarantined, Text: "quarantined", Evidence: "quarantined as flaky (pass-on-retry: failed and passed on commit 1a2b3c4 (main); recovery: 0 of the 179 clean runs it needs (failure rate 1.7% over its flaky episode), and no sign of flaking until 11:30 UTC, 30 Jul 2026): its failure does not fail the build"}},
		{"flaky, quarantine off", TestCase{Status: flaky, Flake: flake}, plain, run,
			FailureLabel{Kind: LabelKnownFlaky, Text: "known flaky", Evidence: "flaky (pass-on-retry: failed and passed on commit 1a2b3c4 (main); recovery: 0 of the 179 clean runs it needs (failure rate 1.7% over its flaky episode), and no sign of flaking until 11:30 UTC, 30 Jul 2026); the repository does not quarantine"}},
		{"flaky, never quarantined", TestCase{Status: flaky, Flake: flake, QuarantineOverride: NeverQuarantine}, quarantining, run,
			FailureLabel{Kind: LabelKnownFlaky, Text: "known flaky", Evidence: "flaky (pass-on-retry: failed and passed on commit 1a2b3c4 (main); recovery: 0 of the 179 clean runs it needs (failure rate 1.7% over its flaky episode), and no sign of flaking until 11:30 UTC, 30 Jul 2026); its override is NEVER_QUARANTINE"}},
		{"failing on main before this run", TestCase{Streak: 2, FailedByHour: map[string]int{h(time.Hour): 2}}, plain, run,
			FailureLabel{Kind: LabelFailingOnBranch, Text: "failing on main", Branch: "main", Evidence: "its last 2 runs on main failed too"}},
		{"a push to main: its own failure is not the branch's", TestCase{Streak: 1, FailedByHour: map[string]int{h(0): 1}}, plain, FailedRun{At: now, Recorded: true, Streak: 1},
			FailureLabel{Kind: LabelNew, Text: "new", Evidence: "no failure in the 7 days before this run: probably this change"}},
		{"broken on main", TestCase{Streak: 6, Status: TestStatus{Value: Broken, Reason: "broken-streak: the last 6 runs on main all failed"}}, plain, run,
			FailureLabel{Kind: LabelFailingOnBranch, Text: "failing on main", Branch: "main", Evidence: "broken (broken-streak: every attempt failed on the last 6 commits on main)"}},
		{"never failed before", TestCase{FailedByHour: map[string]int{h(0): 1}, PassedByHour: map[string]int{h(3 * time.Hour): 40}}, plain, run,
			FailureLabel{Kind: LabelNew, Text: "new", Evidence: "no failure in the 7 days before this run: probably this change"}},
		{"failed elsewhere before, passing on main", TestCase{FailedByHour: map[string]int{h(0): 1, h(30 * time.Hour): 2, h(9 * Day): 5}}, plain, run,
			FailureLabel{Kind: LabelNew, Text: "new", Evidence: "healthy, 2 earlier failed runs in the 7 days before this run, and its latest runs on main passed: probably this change"}},
		{"not yet recorded: its hour's failures are earlier ones", TestCase{FailedByHour: map[string]int{h(0): 1}}, plain, FailedRun{At: now},
			FailureLabel{Kind: LabelNew, Text: "new", Evidence: "healthy, 1 earlier failed run in the 7 days before this run, and its latest runs on main passed: probably this change"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Label(tt.tc, tt.s, tt.run, now); got != tt.want {
				t.Errorf("Label:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
