package queuesim

import (
	"testing"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// TestFlakesEjectGoodPRs: with flaky CI and no pending-failure depth nor
// optimistic merge, a good PR whose run flakes is failed. The model
// expects f/(1−f) ≈ 5.3 good PRs failed per 100 merges at f = 5%; the
// engine must stay at or below 7, and still never merge a bad PR.
func TestFlakesEjectGoodPRs(t *testing.T) {
	t.Parallel()
	r := mustRun(t, Config{
		Queue: mergequeue.QueuePatch{Concurrency: ptr(5), PendingFailureDepth: ptr(0), CanOptimisticallyMerge: ptr(false)},
		PRs:   prs, BadRate: 0.02, FlakeRate: 0.05, TestTime: testTime, Seed: 1,
	})
	t.Logf("wrongly ejected per 100 merges %.2f (model %.2f): %d good PRs failed, %d merged; merges/T %.3f (model %.3f)",
		r.EjectedPer100, r.ModelEjectedPer100, r.Failed, r.Merged, r.MergesPerT, r.Bound)
	if r.EjectedPer100 > 7 {
		t.Errorf("%.2f good PRs wrongly ejected per 100 merges; the model expects %.2f, at most 7 is allowed", r.EjectedPer100, r.ModelEjectedPer100)
	}
	if r.BadMerged != 0 || r.BadFailed != r.Bad {
		t.Errorf("bad PRs: %d merged, %d of %d failed", r.BadMerged, r.BadFailed, r.Bad)
	}
	if r.Failed == 0 {
		t.Error("no good PR was ejected: the simulated CI does not flake")
	}
}
