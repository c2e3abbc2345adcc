package testhealth

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mainguard/mainguard/shared/store"
)

var now = time.Date(2026, 7, 23, 12, 30, 0, 0, time.UTC)

func TestFailureRateWindows(t *testing.T) {
	h := func(d time.Duration) string { return HourKey(now.Add(-d)) }
	tc := store.TestCase{
		PassedByHour: map[string]int{h(0): 6, h(23 * time.Hour): 2, h(24 * time.Hour): 10, h(6 * Day): 5, h(8 * Day): 100},
		FailedByHour: map[string]int{h(0): 2, h(30 * time.Hour): 5, h(8 * Day): 100, "junk": 9},
	}
	// 24 h: the current hour and the 23 before: 8 passed, 2 failed.
	if got := FailureRate(tc, Day, now); got != 0.2 {
		t.Errorf("24h rate = %v, want 0.2", got)
	}
	// 7 d: 6+2+10+5 passed, 2+5 failed; the 8-day-old runs are out.
	if got, want := FailureRate(tc, Week, now), 7.0/30.0; got != want {
		t.Errorf("7d rate = %v, want %v", got, want)
	}
	if got := FailureRate(store.TestCase{}, Week, now); got != 0 {
		t.Errorf("no runs: %v", got)
	}
}

func TestMostCommonFailures(t *testing.T) {
	d := func(days int) string { return DayKey(now.Add(-time.Duration(days) * Day)) }
	tc := store.TestCase{Failures: map[string]store.FailureCluster{
		"a": {Summary: "timeout after 30s", Last: now.Add(-time.Hour), ByDay: map[string]int{d(0): 2, d(3): 1}},
		"b": {Summary: "nil pointer", Last: now.Add(-2 * time.Hour), ByDay: map[string]int{d(1): 5}},
		"c": {Summary: "old", Last: now.Add(-9 * Day), ByDay: map[string]int{d(9): 50}},
		"d": {Summary: "tie newer", Last: now, ByDay: map[string]int{d(0): 3}},
	}}
	got := MostCommonFailures(tc, 2, now)
	want := []Failure{{"nil pointer", 5, now.Add(-2 * time.Hour)}, {"tie newer", 3, now}}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("(-got +want):\n%s", d)
	}
	if got := MostCommonFailures(store.TestCase{}, 5, now); got == nil || len(got) != 0 {
		t.Errorf("none: %#v, want empty non-nil", got)
	}
}

func TestPullRequestsImpacted(t *testing.T) {
	tc := store.TestCase{FailedPRs: map[string]time.Time{
		"1": now.Add(-time.Hour), "2": now.Add(-6 * Day), "3": now.Add(-8 * Day),
	}}
	if got := PullRequestsImpacted(tc, now); got != 2 {
		t.Errorf("got %d, want 2", got)
	}
}
