package testhealth

import (
	"testing"
	"time"
)

// TestHealthyReasonStatesEvidence shows that a healthy test's reason says
// what its runs were and which threshold each monitor has not reached,
// never a sentence that could be false ("no failures recorded").
func TestHealthyReasonStatesEvidence(t *testing.T) {
	h := func(d time.Duration) string { return HourKey(now.Add(-d)) }
	defaults := SettingsOf(HealthSettings{}, "main")
	off := defaults
	off.FailureRate = false
	tests := []struct {
		name string
		tc   TestCase
		s    Settings
		want string
	}{
		{
			name: "failed its only run",
			tc: TestCase{
				FailedByHour: map[string]int{h(time.Hour): 1}, MonitoredFailedByHour: map[string]int{h(time.Hour): 1},
				LastRun: now.Add(-time.Hour), Streak: 1,
			},
			s:    defaults,
			want: "1 failure in 1 run in 7 days; below the failure-rate monitor's 20 runs; every attempt failed on the last commit on main, below the broken-streak monitor's 3 commits",
		},
		{
			name: "runs only off the monitored branches",
			tc: TestCase{
				PassedByHour: map[string]int{h(0): 3}, FailedByHour: map[string]int{h(2 * time.Hour): 2},
				LastRun: now,
			},
			s:    defaults,
			want: "2 failures in 5 runs in 7 days; below the failure-rate monitor's 20 runs (0 runs on main)",
		},
		{
			name: "enough runs, below the threshold",
			tc: TestCase{
				PassedByHour: map[string]int{h(0): 38}, FailedByHour: map[string]int{h(0): 2},
				MonitoredPassedByHour: map[string]int{h(0): 38}, MonitoredFailedByHour: map[string]int{h(0): 2},
				LastRun: now,
			},
			s:    defaults,
			want: "2 failures in 40 runs in 7 days; failure rate 5% on main, below the flaky threshold of 10%",
		},
		{
			name: "no runs at all",
			tc:   TestCase{LastRun: now.Add(-30 * Day)},
			s:    defaults,
			want: "0 failures in 0 runs in 7 days; below the failure-rate monitor's 20 runs",
		},
		{
			name: "stale",
			tc: TestCase{
				MonitoredPassedByHour: map[string]int{h(0): 30}, PassedByHour: map[string]int{h(0): 30},
				LastRun: now.Add(-200 * time.Hour),
			},
			s:    defaults,
			want: "0 failures in 30 runs in 7 days; no run in 7 days, so the failure-rate monitor does not judge it",
		},
		{
			name: "monitor off, an old flake",
			tc: TestCase{
				PassedByHour: map[string]int{h(0): 1},
				Flake:        &FlakeEvidence{At: now.Add(-10 * Day), SHA: "abc", Branch: "main"},
			},
			s:    off,
			want: "0 failures in 1 run in 7 days; the failure-rate monitor is off; last passed on retry 2026-07-13, over 7 days ago",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HealthyReason(tt.tc, tt.s, now); got != tt.want {
				t.Errorf("reason\n got %q\nwant %q", got, tt.want)
			}
			// The classifier agrees the test is healthy, and says so with
			// the same evidence.
			if st := Classify(tt.tc, tt.s, now); st.Value != Healthy || st.Reason != tt.want {
				t.Errorf("Classify = %+v, want healthy with the same reason", st)
			}
		})
	}
}

// TestStatusOfUnclassifiedTest: a test never classified is healthy since it
// was first seen, with its evidence; a stored unhealthy status is kept as
// it is, and a recovery's reason says what it recovered from.
func TestStatusOfUnclassifiedTest(t *testing.T) {
	first := now.Add(-3 * time.Hour)
	tc := TestCase{FirstSeen: first, FailedByHour: map[string]int{HourKey(now): 1}}
	st := Status(tc, SettingsOf(HealthSettings{}, "main"), now)
	if st.Value != Healthy || !st.Timestamp.Equal(first) || st.Reason != "1 failure in 1 run in 7 days; below the failure-rate monitor's 20 runs (0 runs on main)" {
		t.Errorf("Status = %+v", st)
	}
	// Stored broken, no longer broken by any monitor: the stored reason is
	// kept until a decision writes the new value.
	tc.Status = TestStatus{Value: Broken, Reason: "broken-streak: x", Timestamp: first}
	if st := Status(tc, SettingsOf(HealthSettings{}, "main"), now); st != tc.Status {
		t.Errorf("unhealthy status rewritten: %+v", st)
	}
	if st := Classify(tc, SettingsOf(HealthSettings{}, "main"), now); st.Reason != "recovered (was broken): 1 failure in 1 run in 7 days; below the failure-rate monitor's 20 runs (0 runs on main)" {
		t.Errorf("recovery reason = %q", st.Reason)
	}
}
