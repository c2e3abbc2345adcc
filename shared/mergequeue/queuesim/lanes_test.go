package queuesim

import (
	"math"
	"testing"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// TestLanesMatchTheModel holds PARALLEL mode to the model: with each PR
// in one of 5 independent target groups, the lanes share the runs in
// submit order and merge SharedLanesBound per T within 5%: far more than
// one line, and less than evenly loaded lanes would (7.2 per T here, 7%
// above the model, so the test tells the two apart).
func TestLanesMatchTheModel(t *testing.T) {
	t.Parallel()
	r := mustRun(t, Config{
		Queue: mergequeue.QueuePatch{Mode: ptr("PARALLEL"), Concurrency: ptr(10)},
		PRs:   prs, BadRate: 0.2, TestTime: testTime, Targets: 5, Seed: 1,
	})
	single := Bound(0.2, 0, 10)
	t.Logf("merges/T %.3f: model %.3f (ratio %.3f), evenly loaded lanes %.3f, one line %.3f",
		r.MergesPerT, r.Bound, r.MergesPerT/r.Bound, r.LanesBound, single)
	if !r.HasBound || math.Abs(r.MergesPerT/r.Bound-1) > 0.05 {
		t.Errorf("merges per T %.3f is not within 5%% of the model's %.3f", r.MergesPerT, r.Bound)
	}
	if r.MergesPerT < 1.5*single || r.MergesPerT > r.LanesBound {
		t.Errorf("merges per T %.3f: want well above one line's %.3f, below evenly loaded lanes' %.3f", r.MergesPerT, single, r.LanesBound)
	}
	if r.BadMerged != 0 || r.BadFailed != r.Bad || r.Merged != r.PRs-r.Bad {
		t.Errorf("%d merged of %d good; bad PRs: %d merged, %d of %d failed", r.Merged, r.PRs-r.Bad, r.BadMerged, r.BadFailed, r.Bad)
	}
}
