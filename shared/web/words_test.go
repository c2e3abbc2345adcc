package web

import (
	"testing"
	"time"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// TestStamp: a moment in the reader's words, the year when it is not this
// year's, the exact time beside it; the zero time is none.
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
