package queuesim

import (
	"testing"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// TestFourLanes: four independent lanes at p = 5%, C = 20 merge at least
// 16 PRs per T, where one line merges about 12.2.
func TestFourLanes(t *testing.T) {
	t.Parallel()
	r := mustRun(t, Config{
		Queue: mergequeue.QueuePatch{Mode: ptr("PARALLEL"), Concurrency: ptr(20)},
		PRs:   prs, BadRate: 0.05, TestTime: testTime, Targets: 4, Seed: 1,
	})
	t.Logf("merges/T %.3f (one line: %.3f), CI runs per merge %.2f", r.MergesPerT, Bound(0.05, 0, 20), r.RunsPerMerge)
	if r.MergesPerT < 16 {
		t.Errorf("four lanes merge %.3f PRs per T, want at least 16", r.MergesPerT)
	}
	if r.BadMerged != 0 {
		t.Errorf("%d bad PRs merged", r.BadMerged)
	}
}

// TestOptimisticMergeProtectsFromFlakes: at f = 5%, p = 2%, C = 5,
// optimistic merge with a pending-failure depth of 1 wrongly ejects at
// most 0.6 good PRs per 100 merges (about 5 without it), and depth 2 fewer
// still; never a bad PR merged.
func TestOptimisticMergeProtectsFromFlakes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		depth int
		max   float64
	}{{1, 0.6}, {2, 0.3}} {
		r := mustRun(t, Config{
			Queue: mergequeue.QueuePatch{Concurrency: ptr(5), PendingFailureDepth: ptr(c.depth), CanOptimisticallyMerge: ptr(true)},
			PRs:   prs, BadRate: 0.02, FlakeRate: 0.05, TestTime: testTime, Seed: 1,
		})
		t.Logf("depth %d: wrongly ejected per 100 merges %.2f; merges/T %.3f", c.depth, r.EjectedPer100, r.MergesPerT)
		if r.EjectedPer100 > c.max {
			t.Errorf("depth %d: %.2f good PRs wrongly ejected per 100 merges, want at most %.1f", c.depth, r.EjectedPer100, c.max)
		}
		if r.BadMerged != 0 || r.BadFailed != r.Bad {
			t.Errorf("depth %d: bad PRs %d merged, %d of %d failed", c.depth, r.BadMerged, r.BadFailed, r.Bad)
		}
	}
}

// TestBatchingWithBisection: at p = 2%, C = 5 (bisection on as many slots
// of its own, the default), batches of 4 merge at least 9 PRs per T and
// 1.9 times as many as single PRs; batches of 8 take at most 0.55 CI runs
// per merged PR. Bisection fails every bad PR and merges every good one.
func TestBatchingWithBisection(t *testing.T) {
	t.Parallel()
	single := mustRun(t, Config{Queue: mergequeue.QueuePatch{Concurrency: ptr(5)}, PRs: prs, BadRate: 0.02, TestTime: testTime, Seed: 1})
	batched := map[int]Result{}
	for _, b := range []int{4, 8} {
		r := mustRun(t, Config{
			Queue: mergequeue.QueuePatch{Concurrency: ptr(5), Batch: ptr(true), BatchingMinSize: ptr(b), OptimizationMode: ptr("BISECTION_SKIP_REDUNDANT_TESTS")},
			PRs:   prs, BadRate: 0.02, TestTime: testTime, Seed: 1,
		})
		batched[b] = r
		t.Logf("B=%d: merges/T %.3f (single %.3f, ×%.2f), CI runs per merge %.2f (single %.2f)",
			b, r.MergesPerT, single.MergesPerT, r.MergesPerT/single.MergesPerT, r.RunsPerMerge, single.RunsPerMerge)
		if r.BadMerged != 0 || r.BadFailed != r.Bad || r.Merged != r.PRs-r.Bad {
			t.Errorf("B=%d: %d merged of %d good; bad PRs %d merged, %d of %d failed", b, r.Merged, r.PRs-r.Bad, r.BadMerged, r.BadFailed, r.Bad)
		}
	}
	if r := batched[4]; r.MergesPerT < 9 || r.MergesPerT < 1.9*single.MergesPerT {
		t.Errorf("B=4: %.3f merges per T, want at least 9 and 1.9 × single PRs' %.3f", r.MergesPerT, single.MergesPerT)
	}
	if r := batched[8]; r.RunsPerMerge > 0.55 {
		t.Errorf("B=8: %.2f CI runs per merged PR, want at most 0.55", r.RunsPerMerge)
	}
}

// TestFlakyRetriesProtectFromKnownFlakes: at p = 2%, C = 5, with flaky
// tests test health knows failing 5% of runs, one flaky retry
// (KNOWN_FLAKY) wrongly ejects at most 0.5 good PRs per 100 merges (about
// 5 without it) for at most 1.15 times the CI runs per merged PR; bad
// PRs fail on the healthy tests they break, every one of them.
func TestFlakyRetriesProtectFromKnownFlakes(t *testing.T) {
	t.Parallel()
	cfg := Config{Queue: mergequeue.QueuePatch{Concurrency: ptr(5)}, PRs: prs, BadRate: 0.02, FlakeRate: 0.05, TestTime: testTime, Seed: 1}
	without := mustRun(t, cfg)
	cfg.Queue.FlakyRetries = ptr(1)
	with := mustRun(t, cfg)
	t.Logf("wrongly ejected per 100 merges %.2f (without retries %.2f); CI runs per merge %.3f (%.3f); %d retries; merges/T %.3f (%.3f)",
		with.EjectedPer100, without.EjectedPer100, with.RunsPerMerge, without.RunsPerMerge, with.Retries, with.MergesPerT, without.MergesPerT)
	if with.EjectedPer100 > 0.5 {
		t.Errorf("%.2f good PRs wrongly ejected per 100 merges with a flaky retry, want at most 0.5", with.EjectedPer100)
	}
	if with.RunsPerMerge > 1.15*without.RunsPerMerge {
		t.Errorf("%.3f CI runs per merged PR with a flaky retry, want at most 1.15 × %.3f without", with.RunsPerMerge, without.RunsPerMerge)
	}
	if with.Retries == 0 || without.Retries != 0 {
		t.Errorf("%d retries with a flaky retry, %d without", with.Retries, without.Retries)
	}
	for _, r := range []Result{without, with} {
		if r.BadMerged != 0 || r.BadFailed != r.Bad {
			t.Errorf("%d flaky retries: bad PRs %d merged, %d of %d failed", r.Queue.FlakyRetries, r.BadMerged, r.BadFailed, r.Bad)
		}
	}
}

// TestUnknownFlakesAreNotRetried: when test health knows none of the flaky
// tests, their failures look real, so KNOWN_FLAKY retries nothing and
// changes nothing; ANY_FAILURE retries them.
func TestUnknownFlakesAreNotRetried(t *testing.T) {
	t.Parallel()
	// A quarter of the PRs: the ejections are ~25, not a figure to hold.
	cfg := Config{Queue: mergequeue.QueuePatch{Concurrency: ptr(5)}, PRs: prs / 4, BadRate: 0.02, FlakeRate: 0.05, UnknownFlaky: 1, TestTime: testTime, Seed: 1}
	without := mustRun(t, cfg)
	cfg.Queue.FlakyRetries = ptr(1)
	known := mustRun(t, cfg)
	cfg.Queue.FlakyRetryPolicy = ptr("ANY_FAILURE")
	anyFailure := mustRun(t, cfg)
	t.Logf("good PRs failed: %d without retries, %d with KNOWN_FLAKY, %d with ANY_FAILURE (%d retries); CI runs %d, %d, %d",
		without.Failed, known.Failed, anyFailure.Failed, anyFailure.Retries, without.CIRuns, known.CIRuns, anyFailure.CIRuns)
	// The evidence comes at the instant a run fails, a run's flakes do not
	// depend on the runs cancelled before, and no PR joins the line while
	// a failed run's evidence is read: every PR concludes as without
	// retries, at the same time, after the same CI runs.
	if known.Retries != 0 || known.Failed != without.Failed || known.Merged != without.Merged || known.Elapsed != without.Elapsed || known.CIRuns != without.CIRuns {
		t.Errorf("KNOWN_FLAKY retries of unknown flaky tests: %d retries, %d good PRs failed and %d merged in %v after %d CI runs; without retries %d and %d in %v after %d",
			known.Retries, known.Failed, known.Merged, known.Elapsed, known.CIRuns, without.Failed, without.Merged, without.Elapsed, without.CIRuns)
	}
	if anyFailure.Retries == 0 || anyFailure.Failed >= without.Failed/2 {
		t.Errorf("ANY_FAILURE: %d retries, %d good PRs failed (%d without retries)", anyFailure.Retries, anyFailure.Failed, without.Failed)
	}
	if anyFailure.BadMerged != 0 || anyFailure.BadFailed != anyFailure.Bad {
		t.Errorf("ANY_FAILURE: bad PRs %d merged, %d of %d failed", anyFailure.BadMerged, anyFailure.BadFailed, anyFailure.Bad)
	}
}
