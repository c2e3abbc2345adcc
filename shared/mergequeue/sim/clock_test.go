package sim

import (
	"reflect"
	"testing"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// TestSkippedTicksChangeNothing holds the tick skipping to stepping every
// minute, where ticks matter: nothing but a tick makes a run time out, or
// a short batch stop waiting for more PRs.
func TestSkippedTicksChangeNothing(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]Config{
		// Runs take 15 to 45 minutes and time out at 40.
		"timeouts": {
			Queue: mergequeue.QueuePatch{Concurrency: ptr(3), TestingTimeoutMinutes: ptr(40)},
			PRs:   300, BadRate: 0.05, FlakeRate: 0.02, TestTime: testTime, Spread: 0.5,
			Arrival: Poisson, Rate: 1.5, Seed: 11,
		},
		// Batches of 4 wait up to 7 minutes for PRs arriving 3 per T.
		"batching wait": {
			Queue: mergequeue.QueuePatch{Concurrency: ptr(2), Batch: ptr(true), BatchingMinSize: ptr(4), BatchingMaxWaitTimeMinutes: ptr(7)},
			PRs:   300, BadRate: 0.05, TestTime: testTime, Spread: 0.2, Arrival: Poisson, Rate: 3, Seed: 12,
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			skipping := mustRun(t, cfg)
			cfg.everyTick = true
			every := mustRun(t, cfg)
			t.Logf("skipping: %d steps and %d probes; every tick: %d steps", skipping.Steps, skipping.Probes, every.Steps)
			if skipping.Steps+skipping.Probes > every.Steps/2 {
				t.Errorf("skipping ticks took %d steps and %d probes, against %d stepping every tick", skipping.Steps, skipping.Probes, every.Steps)
			}
			skipping.Steps, skipping.Probes, every.Steps, every.Probes = 0, 0, 0, 0
			if !reflect.DeepEqual(skipping, every) {
				t.Errorf("skipping ticks changed the result:\n%+v\nstepping every tick:\n%+v", skipping, every)
			}
		})
	}
}

// TestTimeoutsFireOnTicks: the timeouts of the test above do happen, so
// the ticks it compares matter.
func TestTimeoutsFireOnTicks(t *testing.T) {
	t.Parallel()
	r := mustRun(t, Config{
		Queue: mergequeue.QueuePatch{Concurrency: ptr(3), TestingTimeoutMinutes: ptr(40)},
		PRs:   100, TestTime: testTime, Spread: 0.5, Arrival: Poisson, Rate: 1.5, Seed: 11,
	})
	if r.Failed == 0 {
		t.Error("no good PR failed: no run timed out")
	}
}
