package queuesim

import (
	"fmt"
	"math"
	"testing"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// TestSweepBatchModel (a long sweep: run without the race detector) holds
// the engine, batching and bisecting, to the model the autopilot
// maximises (mergequeue.Predict): SINGLE mode, a saturated queue, a fixed
// test time, batches of 2, 4 and 8 on 4 and 8 slots (bisection on as
// many), p of 2% and 10%. Merges per T over the whole run (the drain at
// the end included: the steady window of Result.MergesPerT ends on a
// merge, which flatters the long failed generations of batches) within
// 5% of the model's, and CI runs per merge within 5%; and the model
// ranks the batch sizes of each point as the engine does wherever the
// engine tells them apart by more than 10%.
func TestSweepBatchModel(t *testing.T) {
	longSweep(t)
	t.Parallel()
	type point struct {
		p    float64
		c, b int
	}
	var points []point
	for _, p := range []float64{0.02, 0.10} {
		for _, c := range []int{4, 8} {
			for _, b := range []int{1, 2, 4, 8} {
				points = append(points, point{p, c, b})
			}
		}
	}
	measured := make([]float64, len(points))
	predicted := make([]mergequeue.Prediction, len(points))
	// The points run side by side (each on one goroutine): the group
	// returns when all have, and the ranking below reads them all.
	t.Run("points", func(t *testing.T) {
		for i, pt := range points {
			t.Run(fmt.Sprintf("p=%g%%/C=%d/B=%d", 100*pt.p, pt.c, pt.b), func(t *testing.T) {
				t.Parallel()
				r := mustRun(t, Config{
					Queue: mergequeue.QueuePatch{Concurrency: ptr(pt.c), BisectionConcurrency: ptr(pt.c), Batch: ptr(pt.b > 1), BatchingMinSize: ptr(pt.b)},
					PRs:   prs / 2, BadRate: pt.p, TestTime: testTime, Seed: 1,
				})
				x := mergequeue.Predict(pt.p, 0, mergequeue.Plan{Concurrency: pt.c, Batch: pt.b, Bisection: pt.c, Rerun: true})
				perT := perT(r.Merged, r.Elapsed, testTime)
				measured[i], predicted[i] = perT, x
				t.Logf("merges/T %.3f, model %.3f (ratio %.3f); CI runs per merge %.3f, model %.3f (ratio %.3f)",
					perT, x.MergesPerRun, perT/x.MergesPerRun, r.RunsPerMerge, x.RunsPerMerge, r.RunsPerMerge/x.RunsPerMerge)
				if math.Abs(perT/x.MergesPerRun-1) > 0.05 {
					t.Errorf("merges per T %.3f is not within 5%% of the model's %.3f", perT, x.MergesPerRun)
				}
				if math.Abs(r.RunsPerMerge/x.RunsPerMerge-1) > 0.05 {
					t.Errorf("CI runs per merge %.3f is not within 5%% of the model's %.3f", r.RunsPerMerge, x.RunsPerMerge)
				}
				if r.BadMerged != 0 || r.BadFailed != r.Bad {
					t.Errorf("bad PRs: %d merged, %d of %d failed", r.BadMerged, r.BadFailed, r.Bad)
				}
			})
		}
	})
	for i := range points {
		for j := range points {
			if points[i].p != points[j].p || points[i].c != points[j].c || measured[i] <= 1.1*measured[j] {
				continue
			}
			if predicted[i].MergesPerRun <= predicted[j].MergesPerRun {
				t.Errorf("p=%g C=%d: the engine merges more with batches of %d (%.3f) than of %d (%.3f); the model says otherwise (%.3f, %.3f)",
					points[i].p, points[i].c, points[i].b, measured[i], points[j].b, measured[j], predicted[i].MergesPerRun, predicted[j].MergesPerRun)
			}
		}
	}
}
