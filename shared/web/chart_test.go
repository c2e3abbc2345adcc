package web

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// TestYAxis: ticks at round values in the unit that fits the range, from
// the values the issue met ("0 min, 0.0 min, 0.1 min", "1.2, 2.5, 3.8").
func TestYAxis(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		kind valueKind
		peak float64
		want string
	}{
		{countKind, 5, "0 2 4 6"},
		{countKind, 3.8, "0 1 2 3 4"},
		{countKind, 0, "0 1"},
		{countKind, 1, "0 1"},
		{countKind, 37, "0 10 20 30 40"},
		{durationKind, 6, "0 s,2 s,4 s,6 s"}, // 0.1 min
		{durationKind, 0, "0 s,1 s"},
		{durationKind, 119, "0 s,50 s,100 s,150 s"},
		{durationKind, 45 * 60, "0 min,20 min,40 min,60 min"},
		{durationKind, 5 * 3600, "0 h,2 h,4 h,6 h"},
		{percentKind, 66.7, "0%,20%,40%,60%,80%"},
		{percentKind, 100, "0%,50%,100%"},
		{percentKind, 0.4, "0%,1%"},
	} {
		a := yAxis(c.kind, c.peak)
		var got []string
		for _, v := range a.ticks() {
			got = append(got, a.label(v))
		}
		sep := ","
		if c.kind == countKind {
			sep = " "
		}
		if strings.Join(got, sep) != c.want {
			t.Errorf("yAxis(%d, %g) ticks %q, want %q", c.kind, c.peak, strings.Join(got, sep), c.want)
		}
		if top := a.Top * a.Per; top < c.peak {
			t.Errorf("yAxis(%d, %g): top %g below the peak", c.kind, c.peak, top)
		}
	}
}

// TestDailyChartSpansTheKeptDays: a test with one day of runs has a bar
// for that day among empty days, not one bar across the chart.
func TestDailyChartSpansTheKeptDays(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 11, 18, 0, 0, time.UTC)
	tc := testhealth.TestCase{
		PassedByHour: map[string]int{testhealth.HourKey(now): 3},
		FailedByHour: map[string]int{testhealth.HourKey(now): 1},
	}
	c := dailyRateChart(tc, now)
	full := slices.IndexFunc(c.Bars, func(b bar) bool { return !b.Empty })
	if len(c.Bars) < 8 || full != len(c.Bars)-1 || c.Bars[full].Value != 25 {
		t.Fatalf("%d bars, the one with runs at %d: %+v", len(c.Bars), full, c.Bars)
	}
	if !strings.Contains(string(c.SVG()), `width="40.0"`) {
		t.Errorf("the bar is not a bar's width:\n%s", c.SVG())
	}
}

func TestStamp(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := time.Date(2026, 11, 27, 12, 18, 5, 0, time.FixedZone("CET", 3600)) // 11:18 UTC
	if got := stampOf(at, now); got != (stamp{"11:18 UTC, 27 Nov", "2026-11-27T11:18:05Z"}) {
		t.Errorf("stampOf = %+v", got)
	}
	if got := stampOf(at.AddDate(-1, 0, 0), now).Text; got != "11:18 UTC, 27 Nov 2025" {
		t.Errorf("last year's: %q", got)
	}
	if got := stampOf(time.Time{}, now); got != (stamp{}) {
		t.Errorf("zero: %+v", got)
	}
}

// TestRunLabel: a queue row says what its PR is tested on (the branch and
// the PRs ahead in its run, a batch, a bisection), never a lane number.
func TestRunLabel(t *testing.T) {
	t.Parallel()
	prs := func(ahead []int, under ...int) []mergequeue.RunPR {
		var out []mergequeue.RunPR
		for _, n := range ahead {
			out = append(out, mergequeue.RunPR{PRNumber: n})
		}
		for _, n := range under {
			out = append(out, mergequeue.RunPR{PRNumber: n, UnderTest: true})
		}
		return out
	}
	for _, c := range []struct {
		run  mergequeue.Run
		want string
	}{
		{mergequeue.Run{PRs: prs(nil, 4)}, "on main"},
		{mergequeue.Run{PRs: prs([]int{2, 3}, 4)}, "on main with #2, #3"},
		{mergequeue.Run{PRs: prs([]int{1, 2, 3, 5}, 6)}, "on main and 4 PRs ahead"},
		{mergequeue.Run{PRs: prs([]int{2}, 4, 5, 6)}, "on main with #2, batch of 3"},
		{mergequeue.Run{PRs: prs(nil, 4), Bisection: true}, "on main, bisection"},
	} {
		c.run.ID = "r"
		snap := mergequeue.Snapshot{Runs: []mergequeue.Run{c.run}}
		e := mergequeue.Entry{RunID: "r", State: mergequeue.Testing}
		if got := runLabel(snap, e, "main"); got != c.want {
			t.Errorf("%+v: %q, want %q", c.run.PRs, got, c.want)
		}
	}
}
