package queuesim

import (
	"math"
	"testing"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// TestThroughputMatchesTheModel holds the engine to the model over the
// grid: SINGLE mode, no batching, a fixed test time and a saturated queue
// merge q(1−q^C)/p PRs per T within 5%; no bad PR merges, every bad PR
// fails, and without flakes every good PR merges.
func TestThroughputMatchesTheModel(t *testing.T) {
	t.Parallel()
	for _, cfg := range Sweep(Config{PRs: prs, TestTime: testTime, Seed: 1}) {
		t.Run(label(cfg), func(t *testing.T) {
			t.Parallel()
			r := mustRun(t, cfg)
			if !r.HasBound {
				t.Fatal("the model should cover SINGLE mode without batching at a fixed T, saturated")
			}
			ratio := r.MergesPerT / r.Bound
			t.Logf("merges/T measured %.3f, bound %.3f, ratio %.3f; CI runs per merge %.2f; %d steps, %d probes",
				r.MergesPerT, r.Bound, ratio, r.RunsPerMerge, r.Steps, r.Probes)
			if math.Abs(ratio-1) > 0.05 {
				t.Errorf("merges per T %.3f is not within 5%% of the model's %.3f (ratio %.3f)", r.MergesPerT, r.Bound, ratio)
			}
			if r.BadMerged != 0 {
				t.Errorf("%d bad PRs merged", r.BadMerged)
			}
			if r.BadFailed != r.Bad {
				t.Errorf("%d of %d bad PRs ended FAILED", r.BadFailed, r.Bad)
			}
			if r.Failed != 0 || r.Merged != r.PRs-r.Bad {
				t.Errorf("without flakes every good PR should merge: %d merged of %d good, %d failed", r.Merged, r.PRs-r.Bad, r.Failed)
			}
		})
	}
}

// TestNothingFailsEveryRunMerges: with p = 0 every generation merges C
// PRs, exactly.
func TestNothingFailsEveryRunMerges(t *testing.T) {
	t.Parallel()
	r := mustRun(t, Config{Queue: mergequeue.QueuePatch{Concurrency: ptr(5)}, PRs: 500, TestTime: testTime})
	if r.MergesPerT != 5 || r.Bound != 5 || r.RunsPerMerge != 1 {
		t.Errorf("p = 0, C = 5: merges per T %v (bound %v), CI runs per merge %v; want 5, 5, 1", r.MergesPerT, r.Bound, r.RunsPerMerge)
	}
}
