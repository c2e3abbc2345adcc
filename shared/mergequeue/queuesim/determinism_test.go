package queuesim

import (
	"reflect"
	"testing"
	"time"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// TestSameSeedSameResult: a simulation is a function of its Config, with
// every source of randomness on: Poisson arrivals, a spread, flaky tests,
// some unknown, whose failures may be retried, target groups, a
// pending-failure depth.
func TestSameSeedSameResult(t *testing.T) {
	t.Parallel()
	cfg := Config{
		Queue: mergequeue.QueuePatch{Concurrency: ptr(4), PendingFailureDepth: ptr(1), FlakyRetries: ptr(1)},
		PRs:   prs, BadRate: 0.05, FlakeRate: 0.08, UnknownFlaky: 0.5, UploadDelay: time.Minute,
		TestTime: testTime, Spread: 0.3, Arrival: Poisson, Rate: 3, Targets: 3, Seed: 7,
	}
	first, second := mustRun(t, cfg), mustRun(t, cfg)
	if !reflect.DeepEqual(first, second) {
		t.Errorf("the same seed gave two results:\n%+v\n%+v", first, second)
	}
	// That the seed is used at all needs no 2,000 PRs.
	cfg.PRs = 200
	small := mustRun(t, cfg)
	cfg.Seed = 8
	if other := mustRun(t, cfg); reflect.DeepEqual(small, other) {
		t.Error("another seed gave the same result: the seed is not used")
	}
}
