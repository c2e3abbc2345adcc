package queuesim

import (
	"math"
	"testing"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// TestPoissonBelowCapacity: PRs arriving at 2.5 per T, well below what
// five runs at once merge at p = 5% (about 4.3 per T), all conclude; the
// queue keeps up (merges follow the good arrivals), and a merged PR spent
// at least a run in the queue on average, and not without bound.
func TestPoissonBelowCapacity(t *testing.T) {
	t.Parallel()
	const rate = 2.5
	r := mustRun(t, Config{
		Queue: mergequeue.QueuePatch{Concurrency: ptr(5)},
		PRs:   prs, BadRate: 0.05, TestTime: testTime, Spread: 0.25, Arrival: Poisson, Rate: rate, Seed: 3,
	})
	t.Logf("merges/T %.3f; time in queue mean %v, p95 %v; CI runs per merge %.2f", r.MergesPerT, r.MeanInQueue, r.P95InQueue, r.RunsPerMerge)
	if done := r.Merged + r.Failed + r.BadFailed + r.Cancelled; done != r.PRs {
		t.Errorf("%d of %d PRs concluded", done, r.PRs)
	}
	if r.Merged != r.PRs-r.Bad || r.BadMerged != 0 {
		t.Errorf("%d merged of %d good, %d bad merged", r.Merged, r.PRs-r.Bad, r.BadMerged)
	}
	if r.MeanInQueue < testTime || r.MeanInQueue > 10*testTime {
		t.Errorf("mean time in queue %v: want at least T = %v and bounded", r.MeanInQueue, testTime)
	}
	if good := rate * (1 - 0.05); math.Abs(r.MergesPerT/good-1) > 0.1 {
		t.Errorf("merges per T %.3f, while good PRs arrive at %.3f per T: the queue does not keep up", r.MergesPerT, good)
	}
	if r.HasBound {
		t.Error("the model does not cover Poisson arrivals")
	}
}
