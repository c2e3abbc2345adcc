package queuesim

import (
	"bytes"
	"fmt"
	"testing"
	"text/tabwriter"
	"time"
)

// movingWorld is the world of the autopilot's test: 3,000 PRs whose bad
// rate moves 2% → 12% → 4% (a phase of 1,000 PRs each), arriving at 8 an
// hour with a burst of 100 PRs at 60 an hour in every 500, CI runs of a
// log-normal time (median 30 minutes, σ 0.3) that flake 1% of the time.
func movingWorld() Config {
	bad, err := ParseSchedule("0.02@0,0.12@1000,0.04@2000")
	if err != nil {
		panic(err)
	}
	var rates Schedule
	for from := 0; from < 3000; from += 500 {
		rates = append(rates, Point{From: from, Value: 8}, Point{From: from + 300, Value: 60}, Point{From: from + 400, Value: 8})
	}
	cfg := Config{
		PRs: 3000, BadSchedule: bad, FlakeRate: 0.01, TestTime: 30 * time.Minute, LogNormal: 0.3,
		Arrival: Scheduled, RateSchedule: rates, Seed: 1,
	}
	cfg.Queue.AutopilotPatch = AutopilotBounds(16, 8, 3)
	return cfg
}

// TestSweepAutopilotAgainstFixedSettings (a long sweep: run without the
// race detector) holds the autopilot, in one run of the moving world, to
// the best fixed setting of a sweep (concurrency 4, 8, 16 × batch size 1,
// 2, 4, 8) chosen in hindsight for each phase: at least 95% of its merges
// per hour at no more than 1.1 times its CI runs per merge; over the
// whole run at least 1.3 times the default settings' merges per hour and
// a p90 time to merge no worse than the best fixed setting's; never a bad
// PR merged. The sweep is logged beside it.
func TestSweepAutopilotAgainstFixedSettings(t *testing.T) {
	longSweep(t)
	t.Parallel()
	h, err := CompareFixed(movingWorld(), []int{4, 8, 16}, []int{1, 2, 4, 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + hindsightTable(h))
	ap := h.Autopilot
	for p, i := range h.Best {
		got, best := ap.Phases[p], h.Fixed[i].Result.Phases[p]
		name := fmt.Sprintf("phase %d (p = %g%%), best fixed C=%d B=%d", p+1, 100*got.BadRate, h.Fixed[i].Concurrency, h.Fixed[i].Batch)
		if got.MergesPerHour < 0.95*best.MergesPerHour {
			t.Errorf("%s: the autopilot merged %.2f per hour, under 95%% of %.2f", name, got.MergesPerHour, best.MergesPerHour)
		}
		if got.RunsPerMerge > 1.1*best.RunsPerMerge {
			t.Errorf("%s: the autopilot took %.2f CI runs per merge, over 1.1 × %.2f", name, got.RunsPerMerge, best.RunsPerMerge)
		}
	}
	if ap.MergesPerHour < 1.3*h.Default.MergesPerHour {
		t.Errorf("the autopilot merged %.2f per hour over the run, under 1.3 × the default settings' %.2f", ap.MergesPerHour, h.Default.MergesPerHour)
	}
	best := h.Fixed[h.BestOverall]
	if ap.P90 > best.Result.P90 {
		t.Errorf("p90 time to merge %v, above the best fixed setting's (C=%d B=%d) %v", ap.P90, best.Concurrency, best.Batch, best.Result.P90)
	}
	if ap.BadMerged != 0 {
		t.Errorf("the autopilot merged %d bad PRs", ap.BadMerged)
	}
	for _, f := range append([]Result{h.Default}, results(h.Fixed)...) {
		if f.BadMerged != 0 {
			t.Errorf("a fixed setting merged %d bad PRs", f.BadMerged)
		}
	}
	if len(ap.Autopilot) == 0 {
		t.Error("the autopilot changed nothing")
	}
}

func results(fs []Fixed) []Result {
	out := make([]Result, len(fs))
	for i, f := range fs {
		out[i] = f.Result
	}
	return out
}

// hindsightTable is the comparison as the test logs it: the autopilot,
// the default and every fixed setting, whole run and phase by phase
// (merges per hour, p90 time to merge, CI runs per merge), the best
// marked, then the autopilot's changes.
func hindsightTable(h Hindsight) string {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 2, 8, 2, ' ', tabwriter.AlignRight)
	head := "setting\twhole run\t"
	for p, ph := range h.Autopilot.Phases {
		head += fmt.Sprintf("phase %d, p = %g%%\t", p+1, 100*ph.BadRate)
	}
	fmt.Fprintln(tw, head+"best of\t")
	row := func(name string, r Result, mark string) {
		line := fmt.Sprintf("%s\t%.2f/h %v %.2f\t", name, r.MergesPerHour, r.P90.Round(time.Minute), r.RunsPerMerge)
		for _, ph := range r.Phases {
			line += fmt.Sprintf("%.2f/h %v %.2f\t", ph.MergesPerHour, ph.P90.Round(time.Minute), ph.RunsPerMerge)
		}
		fmt.Fprintln(tw, line+mark+"\t")
	}
	row("autopilot", h.Autopilot, "")
	row("default", h.Default, "")
	for i, f := range h.Fixed {
		mark := ""
		if i == h.BestOverall {
			mark = "run "
		}
		for p, b := range h.Best {
			if b == i {
				mark += fmt.Sprintf("%d ", p+1)
			}
		}
		row(fmt.Sprintf("C=%d B=%d", f.Concurrency, f.Batch), f.Result, mark)
	}
	_ = tw.Flush()
	fmt.Fprintf(&b, "(merges per hour, p90 time to merge, CI runs per merge)\nautopilot: %d changes\n", len(h.Autopilot.Autopilot))
	for _, c := range h.Autopilot.Autopilot {
		fmt.Fprintf(&b, "  %v  %s\n", c.At.Sub(h.Autopilot.Start).Round(time.Minute), c.Line)
	}
	return b.String()
}
