package testhealth

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var now = time.Date(2026, 7, 23, 12, 30, 0, 0, time.UTC)

func TestFailureRateWindows(t *testing.T) {
	h := func(d time.Duration) string { return HourKey(now.Add(-d)) }
	tc := TestCase{
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
	if got := FailureRate(TestCase{}, Week, now); got != 0 {
		t.Errorf("no runs: %v", got)
	}
}

func TestMostCommonFailures(t *testing.T) {
	d := func(days int) string { return DayKey(now.Add(-time.Duration(days) * Day)) }
	tc := TestCase{Failures: map[string]FailureCluster{
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
	if got := MostCommonFailures(TestCase{}, 5, now); got == nil || len(got) != 0 {
		t.Errorf("none: %#v, want empty non-nil", got)
	}
}

func TestPullRequestsImpacted(t *testing.T) {
	tc := TestCase{FailedPRs: map[string]time.Time{
		"1": now.Add(-time.Hour), "2": now.Add(-6 * Day), "3": now.Add(-8 * Day),
	}}
	if got := PullRequestsImpacted(tc, now); got != 2 {
		t.Errorf("got %d, want 2", got)
	}
}

func TestPruneDropsWhatLeftEveryWindow(t *testing.T) {
	h := func(d time.Duration) string { return HourKey(now.Add(-d)) }
	d := func(days int) string { return DayKey(now.Add(-time.Duration(days) * Day)) }
	tc := TestCase{
		PassedByHour:          map[string]int{h(0): 1, h(8*Day - time.Hour): 2, h(8*Day + time.Hour): 3},
		FailedByHour:          map[string]int{h(9 * Day): 1},
		MonitoredPassedByHour: map[string]int{h(10 * Day): 1},
		Failures: map[string]FailureCluster{
			"fresh": {Summary: "f", Last: now, ByDay: map[string]int{d(0): 1, d(9): 4}},
			"stale": {Summary: "s", Last: now.Add(-9 * Day), ByDay: map[string]int{d(9): 2}},
		},
		FailedPRs: map[string]time.Time{"7": now.Add(-Day), "8": now.Add(-9 * Day)},
	}
	got, pruned := Prune(tc, now)
	want := TestCase{
		PassedByHour:          map[string]int{h(0): 1, h(8*Day - time.Hour): 2},
		FailedByHour:          map[string]int{},
		MonitoredPassedByHour: map[string]int{},
		MonitoredFailedByHour: map[string]int{},
		Failures:              map[string]FailureCluster{"fresh": {Summary: "f", Last: now, ByDay: map[string]int{d(0): 1}}},
		FailedPRs:             map[string]time.Time{"7": now.Add(-Day)},
	}
	if pruned == 0 {
		t.Error("nothing pruned")
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
	if len(tc.PassedByHour) != 3 || len(tc.Failures["fresh"].ByDay) != 2 {
		t.Error("Prune changed its argument")
	}
	if _, again := Prune(got, now); again != 0 {
		t.Error("a pruned test prunes again")
	}
}

func TestPruneKeepsTheMostRecentClusters(t *testing.T) {
	tc := TestCase{Failures: map[string]FailureCluster{}}
	for i := range MaxClusters + 3 {
		tc.Failures[fmt.Sprintf("k%02d", i)] = FailureCluster{
			Summary: "f", Last: now.Add(time.Duration(i-60) * time.Minute), ByDay: map[string]int{DayKey(now): 1},
		}
	}
	got, pruned := Prune(tc, now)
	if pruned == 0 || len(got.Failures) != MaxClusters {
		t.Fatalf("pruned %v, %d clusters left", pruned, len(got.Failures))
	}
	for _, k := range []string{"k00", "k01", "k02"} { // the three oldest go
		if _, ok := got.Failures[k]; ok {
			t.Errorf("%s kept", k)
		}
	}
	if _, pruned := Prune(got, now); pruned != 0 {
		t.Error("at the bound, Prune still drops")
	}
}

// TestPruneKeepsTheMostRecentPullRequests: failures on more pull requests
// than MaxFailedPRs within the week keep the most recent; the count of
// pull requests impacted then reads the bound.
func TestPruneKeepsTheMostRecentPullRequests(t *testing.T) {
	tc := TestCase{FailedPRs: map[string]time.Time{}}
	for i := range MaxFailedPRs + 5 {
		tc.FailedPRs[fmt.Sprint(i)] = now.Add(-time.Duration(i) * time.Minute)
	}
	got, pruned := Prune(tc, now)
	if pruned != 5 || len(got.FailedPRs) != MaxFailedPRs || PullRequestsImpacted(got, now) != MaxFailedPRs {
		t.Fatalf("pruned %v, %d pull requests left", pruned, len(got.FailedPRs))
	}
	for i := MaxFailedPRs; i < MaxFailedPRs+5; i++ { // the oldest go
		if _, ok := got.FailedPRs[fmt.Sprint(i)]; ok {
			t.Errorf("PR %d kept", i)
		}
	}
	if _, pruned := Prune(got, now); pruned != 0 {
		t.Error("at the bound, Prune still drops")
	}
}
