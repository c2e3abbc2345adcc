package queuesim

import (
	"reflect"
	"testing"
	"time"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// TestSkippedTicksChangeNothing holds the tick skipping to stepping every
// minute, where ticks matter: nothing but a tick makes a run time out, a
// short batch stop waiting for more PRs, or a failed run stop waiting for
// its test results.
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
		// Runs of 15 to 45 minutes upload their results 90 seconds after
		// their checks, while their failures wait 2 minutes for them: the
		// uploads are events between ticks.
		"uploads": {
			Queue: mergequeue.QueuePatch{Concurrency: ptr(3), FlakyRetries: ptr(1)},
			PRs:   200, BadRate: 0.05, FlakeRate: 0.05, UploadDelay: 90 * time.Second, TestTime: testTime, Spread: 0.5, Seed: 13,
		},
		// The same, the uploads coming after 3 minutes: the failures stop
		// waiting on a tick before.
		"evidence waits": {
			Queue: mergequeue.QueuePatch{Concurrency: ptr(3), FlakyRetries: ptr(1)},
			PRs:   200, BadRate: 0.05, FlakeRate: 0.05, UploadDelay: 3 * time.Minute, TestTime: testTime, Spread: 0.5, Seed: 13,
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

// TestEvidenceWaitsEnd: the uploads of the test above come in time for
// flaky retries, or too late: then the failures stand once the wait of 2
// minutes is over, and the flakes eject more good PRs (in time, only a PR
// that flakes on its retry too is ejected).
func TestEvidenceWaitsEnd(t *testing.T) {
	t.Parallel()
	run := func(upload time.Duration) Result {
		return mustRun(t, Config{
			Queue: mergequeue.QueuePatch{Concurrency: ptr(3), FlakyRetries: ptr(1)},
			PRs:   100, FlakeRate: 0.05, UploadDelay: upload, TestTime: testTime, Spread: 0.5, Seed: 13,
		})
	}
	inTime, late := run(90*time.Second), run(3*time.Minute)
	if late.Retries != 0 || late.Failed == 0 || inTime.Retries == 0 || inTime.Failed >= late.Failed {
		t.Errorf("uploads in time: %d retries, %d good PRs failed; too late: %d retries, %d failed",
			inTime.Retries, inTime.Failed, late.Retries, late.Failed)
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
