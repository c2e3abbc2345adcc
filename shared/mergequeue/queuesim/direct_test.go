package queuesim

import (
	"testing"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// TestDirectMerge: with directMergeMode ALWAYS and PRs arriving one per
// two test times, most PRs find the line empty and their branch up to
// date, and merge on their own checks without a test run; a bad PR's own
// checks fail, so it goes through the queue and fails there.
func TestDirectMerge(t *testing.T) {
	t.Parallel()
	cfg := Config{
		Queue: mergequeue.QueuePatch{Concurrency: ptr(3), DirectMergeMode: ptr("ALWAYS")},
		PRs:   500, BadRate: 0.05, TestTime: testTime, Arrival: Poisson, Rate: 0.5, Seed: 5,
	}
	r := mustRun(t, cfg)
	t.Logf("CI runs per merge %.2f, time in queue mean %v", r.RunsPerMerge, r.MeanInQueue)
	if r.RunsPerMerge > 0.5 || r.MeanInQueue > testTime/2 {
		t.Errorf("direct merge: %.2f CI runs per merge, %v in the queue on average; want most PRs merged at once", r.RunsPerMerge, r.MeanInQueue)
	}
	if r.BadMerged != 0 || r.BadFailed != r.Bad || r.Merged != r.PRs-r.Bad {
		t.Errorf("%d merged of %d good; bad PRs: %d merged, %d of %d failed", r.Merged, r.PRs-r.Bad, r.BadMerged, r.BadFailed, r.Bad)
	}
}
