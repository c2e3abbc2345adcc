package queuesim

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/mergequeue"
)

// TestInvalidConfigs: queue settings are refused as updateQueue refuses
// them, and a world that cannot be is refused too, each naming its fault.
func TestInvalidConfigs(t *testing.T) {
	t.Parallel()
	valid := Config{PRs: 10, TestTime: testTime}
	for name, c := range map[string]struct {
		change func(*Config)
		want   string
	}{
		"concurrency":   {func(c *Config) { c.Queue.Concurrency = ptr(0) }, "concurrency must be at least 1"},
		"mode":          {func(c *Config) { c.Queue.Mode = ptr("FAST") }, "mode must be SINGLE or PARALLEL"},
		"merge method":  {func(c *Config) { c.Queue.MergeMethod = ptr("OCTOPUS") }, "mergeMethod must be"},
		"depth":         {func(c *Config) { c.Queue.PendingFailureDepth = ptr(-1) }, "pendingFailureDepth must be 0 or more"},
		"batch size":    {func(c *Config) { c.Queue.BatchingMinSize = ptr(0) }, "batchingMinSize must be at least 1"},
		"status":        {func(c *Config) { c.Queue.RequiredStatuses = []string{""} }, "requiredStatuses must not hold empty strings"},
		"PRs":           {func(c *Config) { c.PRs = 0 }, "number of PRs"},
		"bad rate":      {func(c *Config) { c.BadRate = 1.5 }, "bad probability"},
		"test time":     {func(c *Config) { c.TestTime = 0 }, "test time"},
		"spread":        {func(c *Config) { c.Spread = 1 }, "spread"},
		"arrival":       {func(c *Config) { c.Arrival = "bursty" }, "arrivals must be"},
		"poisson rate":  {func(c *Config) { c.Arrival = Poisson }, "positive rate"},
		"target groups": {func(c *Config) { c.Targets = -1 }, "target groups"},
		"flake rate":    {func(c *Config) { c.FlakeRate = -0.1 }, "flake probability"},
		"unknown flaky": {func(c *Config) { c.UnknownFlaky = 2 }, "share of unknown flaky tests"},
		"upload delay":  {func(c *Config) { c.UploadDelay = -time.Second }, "upload delay"},
		"retries":       {func(c *Config) { c.Queue.FlakyRetries = ptr(4) }, "flakyRetries must be 0 to 3"},
		"retry policy":  {func(c *Config) { c.Queue.FlakyRetryPolicy = ptr("SOMETIMES") }, "flakyRetryPolicy must be"},
		"virtual bound": {func(c *Config) { c.MaxTime = -time.Hour }, "virtual time bound"},
	} {
		cfg := valid
		c.change(&cfg)
		if _, err := Run(cfg); !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want an invalid one saying %q", name, err, c.want)
		}
	}
	if _, err := Run(valid); err != nil {
		t.Errorf("the valid config: %v", err)
	}
}

// TestStuckQueueIsAnError: a paused queue never merges; the simulation
// says so when the virtual time runs out, and does not hang.
func TestStuckQueueIsAnError(t *testing.T) {
	t.Parallel()
	_, err := Run(Config{Queue: mergequeue.QueuePatch{State: ptr("PAUSED")}, PRs: 10, TestTime: testTime})
	if err == nil || errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), "10 of 10 PRs still in the queue") {
		t.Errorf("a paused queue: %v", err)
	}
}

// TestSettingsReachTheQueue: every setting is applied, and the CI reports
// the statuses the queue requires.
func TestSettingsReachTheQueue(t *testing.T) {
	t.Parallel()
	s, err := newSimulation(Config{PRs: 1, TestTime: testTime, Queue: mergequeue.QueuePatch{
		Mode: ptr("parallel"), Concurrency: ptr(3), TestingTimeoutMinutes: ptr(90), CanOptimisticallyMerge: ptr(true),
		PendingFailureDepth: ptr(2), Batch: ptr(true), BatchingMaxWaitTimeMinutes: ptr(7), BatchingMinSize: ptr(3),
		BisectionConcurrency: ptr(2), RequiredStatuses: []string{"build", "test"}, MergeMethod: ptr("rebase"),
		DirectMergeMode: ptr("ALWAYS"), OptimizationMode: ptr("BISECTION_SKIP_REDUNDANT_TESTS"),
		FlakyRetries: ptr(2), FlakyRetryPolicy: ptr("any_failure"), FlakyEvidenceWaitSeconds: ptr(300),
	}})
	if err != nil {
		t.Fatal(err)
	}
	q := s.snap.Queue
	if q.Mode != mergequeue.ModeParallel || q.Concurrency != 3 || q.TestingTimeoutMinutes != 90 || !q.CanOptimisticallyMerge ||
		q.PendingFailureDepth != 2 || !q.Batch || q.BatchingMaxWaitTimeMinutes != 7 || q.BatchingMinSize != 3 ||
		q.BisectionConcurrency != 2 || q.MergeMethod != mergequeue.Rebase || q.DirectMergeMode != mergequeue.DirectMergeAlways ||
		q.OptimizationMode != mergequeue.OptimizationBisectionSkipTests || q.FlakyRetries != 2 ||
		q.FlakyRetryPolicy != mergequeue.RetryAnyFailure || q.FlakyEvidenceWaitSeconds != 300 {
		t.Errorf("settings not applied: %+v", q)
	}
	if got := s.world.contexts; !reflect.DeepEqual(got, []string{"build", "test"}) {
		t.Errorf("CI reports %v", got)
	}
	if s.saturation() != 2*3*3 {
		t.Errorf("a saturated queue of 3 runs of batches of 3 keeps %d PRs waiting, want 18", s.saturation())
	}
}
