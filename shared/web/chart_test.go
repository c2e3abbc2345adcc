package web

import (
	"slices"
	"strings"
	"testing"
	"time"

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
