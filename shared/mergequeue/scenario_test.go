package mergequeue

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mainguard/mainguard/shared/errs"
)

func TestThirdOfFiveFails(t *testing.T) {
	for _, conc := range []int{1, 2, 5} {
		t.Run("concurrency "+string(rune('0'+conc)), func(t *testing.T) {
			s := newSim(t, conc)
			s.w.bad[3] = true
			for pr := 1; pr <= 5; pr++ {
				s.submit(pr, nil)
			}
			s.steps(20)

			got := map[int]PRState{}
			for pr := 1; pr <= 5; pr++ {
				got[pr] = s.state(pr)
			}
			want := map[int]PRState{1: Merged, 2: Merged, 3: Failed, 4: Merged, 5: Merged}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("states (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(s.mergedOrder(), []int{1, 2, 4, 5}); diff != "" {
				t.Errorf("merge order (-got +want):\n%s", diff)
			}
			if got := s.entry(3).Reason; got != ReasonStatusFailed {
				t.Errorf("PR 3 reason = %q, want %q", got, ReasonStatusFailed)
			}
			// 4 and 5 merged on runs without 3.
			for _, pr := range []int{4, 5} {
				run := s.runs[s.entry(pr).VerifiedByTestRun]
				if run.Status != RunSucceeded {
					t.Fatalf("PR %d verified by run %q with status %q", pr, run.ID, run.Status)
				}
				for _, p := range run.PRs {
					if p.PRNumber == 3 {
						t.Errorf("PR %d merged on run %s that contains PR 3", pr, run.ID)
					}
				}
			}
			if conc == 5 {
				// Tested predictively on top of 3 first, then retested without it.
				want := []string{
					">NOT_READY:API_REQUESTED", "NOT_READY>PENDING:MERGE_ITEM_NOW_READY",
					"PENDING>TESTING:TEST_RUN_STARTED", "TESTING>TESTS_PASSED:TEST_RUN_PASSED",
					"TESTS_PASSED>PENDING:PREREQUISITE_MERGE_ITEM_FAILED",
					"PENDING>TESTING:TEST_RUN_STARTED", "TESTING>TESTS_PASSED:TEST_RUN_PASSED",
					"TESTS_PASSED>MERGED:MERGE_GRAPH_MERGE",
				}
				if diff := cmp.Diff(s.transitionsOf(4), want); diff != "" {
					t.Errorf("PR 4 transitions (-got +want):\n%s", diff)
				}
			}
		})
	}
}

func TestCancelMidTest(t *testing.T) {
	s := newSim(t, 2)
	s.w.hold[1] = true
	s.submit(1, nil)
	s.submit(2, nil)
	s.steps(3)
	if s.state(1) != Testing || s.state(2) != Testing {
		t.Fatalf("states = %s, %s; want both TESTING", s.state(1), s.state(2))
	}
	run1 := s.runs[s.entry(1).RunID]
	s.cancel(1)
	if got := s.entry(1); got.State != Cancelled || got.Reason != ReasonUserRequested {
		t.Errorf("PR 1 = %s %s, want CANCELLED USER_REQUESTED", got.State, got.Reason)
	}
	if !s.w.deleted[run1.TestBranch] {
		t.Errorf("test branch %s of the cancelled run not deleted", run1.TestBranch)
	}
	s.steps(6)
	if diff := cmp.Diff(s.mergedOrder(), []int{2}); diff != "" {
		t.Errorf("merges (-got +want):\n%s", diff)
	}
	if got := s.transitionsOf(2); !slices.Contains(got, "TESTING>PENDING:PREREQUISITE_MERGE_ITEM_CANCELLED") {
		t.Errorf("PR 2 did not restart after the cancel: %v", got)
	}
	if _, _, err := Cancel(s.snap, CancelRequest{PRNumber: 2}, s.now); err == nil {
		t.Error("cancelling a merged PR succeeded")
	}
}

func TestPushWhileTesting(t *testing.T) {
	s := newSim(t, 1)
	s.w.hold[1] = true
	s.submit(1, nil)
	s.steps(3)
	s.w.push(1)
	s.steps(1)
	if got := s.entry(1); got.State != Cancelled || got.Reason != ReasonPRPushedTo {
		t.Errorf("PR 1 = %s %s, want CANCELLED PR_PUSHED_TO", got.State, got.Reason)
	}
	if got := s.w.statuses[1]; got.State != "error" || got.Context != "Trunk Merge Queue (main)" {
		t.Errorf("commit status = %+v", got)
	}
}

func TestUrgentJumpsTheLine(t *testing.T) {
	s := newSim(t, 2)
	s.w.hold[1], s.w.hold[2] = true, true
	s.submit(1, nil)
	s.submit(2, nil)
	s.steps(3)
	s.submit(3, ptr(0))
	s.steps(3)
	for _, pr := range []int{1, 2} {
		if got := s.transitionsOf(pr); !slices.Contains(got, "TESTING>PENDING:SKIP_THE_LINE_INTERRUPTED") {
			t.Errorf("PR %d was not interrupted: %v", pr, got)
		}
	}
	run3 := s.runs[s.entry(3).RunID]
	if len(run3.PRs) != 1 {
		t.Errorf("urgent PR tested on top of %v, want nothing ahead", run3.PRs)
	}
	delete(s.w.hold, 1)
	delete(s.w.hold, 2)
	s.steps(10)
	if diff := cmp.Diff(s.mergedOrder(), []int{3, 1, 2}); diff != "" {
		t.Errorf("merge order (-got +want):\n%s", diff)
	}
}

func TestTimeout(t *testing.T) {
	s := newSim(t, 1)
	s.w.hold[1] = true
	s.submit(1, nil)
	s.steps(3)
	created := s.runs[s.entry(1).RunID].CreatedAt
	s.now = created.Add(300*time.Minute - time.Second)
	s.step()
	if s.state(1) != Testing {
		t.Fatalf("PR 1 = %s before the timeout", s.state(1))
	}
	s.now = created.Add(300 * time.Minute)
	s.step()
	if diff := cmp.Diff(s.transitionsOf(1)[3:], []string{
		"TESTING>PENDING_FAILURE:TEST_RUN_TIMEOUT", "PENDING_FAILURE>FAILED:TEST_RUN_TIMEOUT",
	}); diff != "" {
		t.Errorf("transitions (-got +want):\n%s", diff)
	}
}

func TestPaused(t *testing.T) {
	s := newSim(t, 1)
	s.w.hold[1] = true
	s.submit(1, nil)
	s.submit(2, nil)
	s.steps(3)
	s.update(QueuePatch{State: ptr("paused")})
	delete(s.w.hold, 1)
	s.submit(3, nil)
	s.steps(5)
	got := []PRState{s.state(1), s.state(2), s.state(3)}
	if diff := cmp.Diff(got, []PRState{TestsPassed, Pending, Pending}); diff != "" {
		t.Errorf("states while paused (-got +want):\n%s", diff)
	}
	if len(s.w.merges) != 0 {
		t.Errorf("merged while paused: %v", s.mergedOrder())
	}
	s.update(QueuePatch{State: ptr("RUNNING")})
	s.steps(10)
	if diff := cmp.Diff(s.mergedOrder(), []int{1, 2, 3}); diff != "" {
		t.Errorf("merge order (-got +want):\n%s", diff)
	}
}

func TestDraining(t *testing.T) {
	s := newSim(t, 1)
	s.w.hold[1] = true
	s.submit(1, nil)
	s.submit(2, nil)
	s.steps(3)
	s.update(QueuePatch{State: ptr("DRAINING")})
	delete(s.w.hold, 1)
	s.steps(6)
	if diff := cmp.Diff(s.mergedOrder(), []int{1}); diff != "" {
		t.Errorf("merges while draining (-got +want):\n%s", diff)
	}
	if s.state(2) != Pending || s.snap.Queue.State != QueueDraining {
		t.Errorf("PR 2 = %s, queue = %s; want PENDING, DRAINING", s.state(2), s.snap.Queue.State)
	}
	s.update(QueuePatch{State: ptr("RUNNING")})
	s.steps(6)
	if diff := cmp.Diff(s.mergedOrder(), []int{1, 2}); diff != "" {
		t.Errorf("merges (-got +want):\n%s", diff)
	}
}

func TestSwitchingModes(t *testing.T) {
	s := newSim(t, 1)
	s.w.hold[1] = true
	s.submit(1, nil)
	s.submit(2, nil)
	s.steps(3)
	s.update(QueuePatch{Mode: ptr("parallel")})
	if s.snap.Queue.State != QueueSwitchingModes || s.snap.Queue.Mode != ModeSingle {
		t.Fatalf("queue = %s %s, want SWITCHING_MODES SINGLE", s.snap.Queue.State, s.snap.Queue.Mode)
	}
	if _, _, err := UpdateQueue(s.snap, QueuePatch{State: ptr("PAUSED")}, s.now); !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), "set mode to SINGLE to cancel") {
		t.Errorf("state while switching modes: %v", err)
	}
	// Set back, and forth again: the switch is called off, then resumed.
	s.update(QueuePatch{Mode: ptr("SINGLE"), Concurrency: ptr(2)})
	if q := s.snap.Queue; q.State != QueueRunning || q.Mode != ModeSingle || q.NextMode != "" || q.Concurrency != 2 {
		t.Fatalf("after setting mode back: %s %s next %q concurrency %d", q.State, q.Mode, q.NextMode, q.Concurrency)
	}
	s.update(QueuePatch{Mode: ptr("PARALLEL"), Concurrency: ptr(1)})
	if q := s.snap.Queue; q.State != QueueSwitchingModes || q.NextMode != ModeParallel || q.Concurrency != 1 {
		t.Fatalf("switching again: %s next %q concurrency %d", q.State, q.NextMode, q.Concurrency)
	}
	delete(s.w.hold, 1)
	s.steps(3)
	if s.snap.Queue.State != QueueRunning || s.snap.Queue.Mode != ModeParallel {
		t.Errorf("queue = %s %s, want RUNNING PARALLEL", s.snap.Queue.State, s.snap.Queue.Mode)
	}
	s.steps(6)
	if diff := cmp.Diff(s.mergedOrder(), []int{1, 2}); diff != "" {
		t.Errorf("merges (-got +want):\n%s", diff)
	}
}

func TestManualMergeAndPush(t *testing.T) {
	s := newSim(t, 2)
	s.w.hold[1], s.w.hold[2] = true, true
	s.submit(1, nil)
	s.submit(2, nil)
	s.steps(3)
	s.w.mergeByHand(1)
	s.steps(1)
	if got := s.entry(1); got.State != Merged || got.Reason != ReasonManualMerge {
		t.Errorf("PR 1 = %s %s, want MERGED MANUAL_MERGE", got.State, got.Reason)
	}
	if got := s.transitionsOf(2); !slices.Contains(got, "TESTING>PENDING:PREREQUISITE_MERGE_ITEM_MANUALLY_MERGED") {
		t.Errorf("PR 2 not restarted: %v", got)
	}
	if run := s.runs[s.entry(2).RunID]; run.BaseSHA != s.w.head || len(run.PRs) != 1 {
		t.Errorf("PR 2 retested on %s with %v; want the new head %s alone", run.BaseSHA, run.PRs, s.w.head)
	}
	// A push to the target branch restarts what tests on the old base.
	s.w.pushTarget()
	s.steps(1)
	if got := s.transitionsOf(2); !slices.Contains(got, "TESTING>PENDING:MANUAL_PUSH_TO_TARGET_BRANCH") {
		t.Errorf("PR 2 not restarted by the push: %v", got)
	}
	delete(s.w.hold, 2)
	s.steps(6)
	if diff := cmp.Diff(s.mergedOrder(), []int{1, 2}); diff != "" {
		t.Errorf("merges (-got +want):\n%s", diff)
	}
	if w := s.w.merges[1]; w.manual || s.runs[w.runID].BaseEpoch != s.snap.BaseEpoch {
		t.Errorf("PR 2 merged on a run of an old epoch: %+v", s.runs[w.runID])
	}
}

func TestFailuresOfOneKind(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(s *sim)
		want  string
	}{
		{"no required statuses", func(s *sim) { s.w.protection = nil }, ReasonNoRequiredStatuses},
		{"merge conflict", func(s *sim) { s.w.conflicts[1] = true }, ReasonMergeConflict},
		{"merge refused", func(s *sim) { s.w.refuse[1] = true }, ReasonMergeFailed},
		{"checks fail", func(s *sim) { s.w.bad[1] = true }, ReasonStatusFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, 1)
			tc.setup(s)
			s.submit(1, nil)
			s.submit(2, nil)
			s.steps(10)
			if got := s.entry(1); got.State != Failed || got.Reason != tc.want {
				t.Errorf("PR 1 = %s %s, want FAILED %s", got.State, got.Reason, tc.want)
			}
			if tc.want == ReasonNoRequiredStatuses {
				if s.state(2) != Failed {
					t.Errorf("PR 2 = %s, want FAILED", s.state(2))
				}
				return
			}
			if diff := cmp.Diff(s.mergedOrder(), []int{2}); diff != "" {
				t.Errorf("merges (-got +want):\n%s", diff)
			}
		})
	}
}

func TestRequiredStatusesFromQueue(t *testing.T) {
	s := newSim(t, 1)
	s.w.protection = nil
	s.update(QueuePatch{RequiredStatuses: []string{"ci"}})
	s.submit(1, nil)
	s.steps(6)
	if s.state(1) != Merged {
		t.Fatalf("PR 1 = %s, want MERGED", s.state(1))
	}
	run := s.runs[s.entry(1).VerifiedByTestRun]
	if run.RequiredStatusesSource != SourceMergeInstance || !slices.Equal(run.RequiredStatuses, []string{"ci"}) {
		t.Errorf("run statuses %v from %s", run.RequiredStatuses, run.RequiredStatusesSource)
	}
}

func TestRestartInPlace(t *testing.T) {
	s := newSim(t, 2)
	s.w.hold[1] = true
	s.submit(1, nil)
	s.submit(2, nil)
	s.steps(3)
	old1, run2 := s.entry(1).RunID, s.entry(2).RunID
	snap, out, err := Restart(s.snap, RestartRequest{PRNumber: 1}, s.now)
	if err != nil {
		t.Fatal(err)
	}
	s.snap = snap
	s.record(out)
	s.w.apply(out.Effects)
	s.steps(1)
	if got := s.entry(1); got.State != Testing || got.RunID == old1 {
		t.Errorf("PR 1 = %s on run %s; want TESTING on a new run", got.State, got.RunID)
	}
	if got := s.entry(2).RunID; got != run2 {
		t.Errorf("PR 2 moved from run %s to %s; a restart in place keeps the runs behind", run2, got)
	}
	delete(s.w.hold, 1)
	s.steps(6)
	if diff := cmp.Diff(s.mergedOrder(), []int{1, 2}); diff != "" {
		t.Errorf("merges (-got +want):\n%s", diff)
	}
}

func TestReadinessAndCancellations(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(p *ghPR)
		want   PRState
		reason string
	}{
		{"closed", func(p *ghPR) { p.state = PRClosed }, Cancelled, ReasonPRClosed},
		{"draft", func(p *ghPR) { p.draft = true }, Cancelled, ReasonConvertedDraft},
		{"base changed", func(p *ghPR) { p.base = "release" }, Cancelled, ReasonBaseChanged},
		{"not mergeable", func(p *ghPR) { p.mergeability = NotMergeable }, Pending, ReasonNowReady},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, 1)
			s.update(QueuePatch{State: ptr("PAUSED")}) // keep it in PENDING
			s.submit(1, nil)
			s.steps(1)
			tc.change(s.w.prs[1])
			s.steps(1)
			if got := s.entry(1); got.State != tc.want || got.Reason != tc.reason {
				t.Errorf("PR 1 = %s %s, want %s %s", got.State, got.Reason, tc.want, tc.reason)
			}
		})
	}
	t.Run("waits for mergeability and base", func(t *testing.T) {
		s := newSim(t, 1)
		s.w.openPR(1)
		s.w.prs[1].mergeability = MergeabilityBusy
		s.submit(1, nil)
		s.steps(2)
		if s.state(1) != NotReady {
			t.Fatalf("PR 1 = %s, want NOT_READY", s.state(1))
		}
		s.w.prs[1].mergeability = Mergeable
		s.steps(6)
		if s.state(1) != Merged {
			t.Errorf("PR 1 = %s, want MERGED", s.state(1))
		}
	})
}

func TestEventsAndStatuses(t *testing.T) {
	s := newSim(t, 1)
	s.submit(1, nil)
	s.steps(6)
	var types []string
	for _, e := range s.w.eventLog {
		types = append(types, e.Type)
	}
	want := []string{"pull_request.submitted", "pull_request.queued", "pull_request.testing", "pull_request.merged"}
	if diff := cmp.Diff(types, want); diff != "" {
		t.Errorf("events (-got +want):\n%s", diff)
	}
	if got := s.w.eventLog[2]; got.TestBranch == "" || got.IsBisection == nil || *got.IsBisection {
		t.Errorf("testing event lacks its run fields: %+v", got)
	}
	if got := s.w.eventLog[3].MergedReason; got != ReasonMergeGraphMerge {
		t.Errorf("merged_reason = %q", got)
	}
	if got := s.w.statuses[1]; got.State != "success" {
		t.Errorf("final commit status = %+v, want success", got)
	}
}

// TestOptimisticMerge: PR 1's run fails (a flake: the world fails a bad PR
// only where it is under test), PR 2's run, built on top of PR 1, passes.
// With canOptimisticallyMerge and a depth of 1 that pass merges both; with
// depth 0 or without the setting, PR 1 fails and PR 2 is retested alone.
func TestOptimisticMerge(t *testing.T) {
	for _, c := range []struct {
		name       string
		optimistic bool
		depth      int
		merged     []int
		pr1        []string
	}{
		{"optimistic, depth 1", true, 1, []int{1, 2}, []string{"TESTING>PENDING_FAILURE:TEST_RUN_REQUIRED_STATUS_FAILED", "PENDING_FAILURE>MERGED:MERGE_GRAPH_MERGE"}},
		{"optimistic, depth 0", true, 0, []int{2}, []string{"TESTING>PENDING_FAILURE:TEST_RUN_REQUIRED_STATUS_FAILED", "PENDING_FAILURE>FAILED:TEST_RUN_REQUIRED_STATUS_FAILED"}},
		{"not optimistic, depth 1", false, 1, []int{2}, []string{"TESTING>PENDING_FAILURE:TEST_RUN_REQUIRED_STATUS_FAILED", "PENDING_FAILURE>FAILED:TEST_RUN_REQUIRED_STATUS_FAILED"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSim(t, 2)
			s.update(QueuePatch{CanOptimisticallyMerge: ptr(c.optimistic), PendingFailureDepth: ptr(c.depth)})
			s.w.bad[1] = true
			s.submit(1, nil)
			s.submit(2, nil)
			s.steps(12)
			if diff := cmp.Diff(s.mergedOrder(), c.merged); diff != "" {
				t.Errorf("merges (-got +want):\n%s", diff)
			}
			if got := s.transitionsOf(1); !slices.Equal(got[len(got)-2:], c.pr1) {
				t.Errorf("PR 1 transitions %v, want them to end %v", got, c.pr1)
			}
			if c.optimistic && c.depth > 0 {
				// Both verified by PR 2's run, which contained PR 1.
				e1, e2 := s.entry(1), s.entry(2)
				if e1.VerifiedByTestRun != e2.VerifiedByTestRun || s.runs[e2.VerifiedByTestRun].Status != RunSucceeded {
					t.Errorf("PR 1 verified by %q, PR 2 by %q", e1.VerifiedByTestRun, e2.VerifiedByTestRun)
				}
			}
		})
	}
}

// TestOptimisticMergeOfATestingPR: PR 1's own run is slow; PR 2's run,
// which contains PR 1, passes first. PR 1 passes on it (TESTS_PASSED, its
// own run cancelled and its branch deleted), then both merge in order.
func TestOptimisticMergeOfATestingPR(t *testing.T) {
	s := newSim(t, 2)
	s.update(QueuePatch{CanOptimisticallyMerge: ptr(true), PendingFailureDepth: ptr(1)})
	s.w.slow[1] = true
	s.submit(1, nil)
	s.submit(2, nil)
	s.steps(3)
	own := s.entry(1).RunID
	s.steps(6)
	if diff := cmp.Diff(s.mergedOrder(), []int{1, 2}); diff != "" {
		t.Errorf("merges (-got +want):\n%s", diff)
	}
	want := []string{
		">NOT_READY:API_REQUESTED", "NOT_READY>PENDING:MERGE_ITEM_NOW_READY", "PENDING>TESTING:TEST_RUN_STARTED",
		"TESTING>TESTS_PASSED:LATER_TEST_RUN_PASSED", "TESTS_PASSED>MERGED:MERGE_GRAPH_MERGE",
	}
	if diff := cmp.Diff(s.transitionsOf(1), want); diff != "" {
		t.Errorf("PR 1 transitions (-got +want):\n%s", diff)
	}
	if r := s.runs[own]; r.Status != RunCancelled || r.Reason != ReasonLaterRunPassed || !s.w.deleted[r.TestBranch] {
		t.Errorf("PR 1's own run: %s %s, branch deleted %v", r.Status, r.Reason, s.w.deleted[r.TestBranch])
	}
}

// TestParallelLanes: in PARALLEL mode PRs 1 (api) and 2 (web) test side by
// side on the target branch alone; PR 3 (api, docs) is tested on top of
// PR 1 only. PR 1 is slow, so PR 2 merges first; a PR without targets waits
// in NOT_READY.
func TestParallelLanes(t *testing.T) {
	s := newSim(t, 3)
	s.update(QueuePatch{Mode: ptr("PARALLEL")})
	s.w.targets[1], s.w.targets[2], s.w.targets[3] = []string{"api"}, []string{"web"}, []string{"api", "docs"}
	s.w.slow[1] = true
	for pr := 1; pr <= 4; pr++ {
		s.submit(pr, nil)
	}
	s.steps(4)
	if got := s.state(4); got != NotReady {
		t.Errorf("PR 4 without targets is %s, want NOT_READY", got)
	}
	dependents := func(pr int) []int {
		var out []int
		for _, p := range s.runs[s.entry(pr).RunID].PRs {
			if !p.UnderTest {
				out = append(out, p.PRNumber)
			}
		}
		return out
	}
	if d1, d2, d3 := dependents(1), dependents(2), dependents(3); len(d1) != 0 || len(d2) != 0 || !slices.Equal(d3, []int{1}) {
		t.Errorf("tested on top of: PR 1 %v, PR 2 %v, PR 3 %v; want [], [], [1]", d1, d2, d3)
	}
	if diff := cmp.Diff(s.mergedOrder(), []int{2}); diff != "" {
		t.Errorf("while PR 1 tests (-got +want):\n%s", diff)
	}
	delete(s.w.slow, 1)
	s.steps(6)
	if diff := cmp.Diff(s.mergedOrder(), []int{2, 1, 3}); diff != "" {
		t.Errorf("merges (-got +want):\n%s", diff)
	}
}

// TestParallelFailureResetsOnlyItsLane: PR 1 (api) fails; PR 3, tested on
// top of it, restarts without it; PR 2 (web) is not touched.
func TestParallelFailureResetsOnlyItsLane(t *testing.T) {
	s := newSim(t, 3)
	s.update(QueuePatch{Mode: ptr("PARALLEL")})
	s.w.targets[1], s.w.targets[2], s.w.targets[3] = []string{"api"}, []string{"web"}, []string{"api"}
	s.w.bad[1] = true
	s.w.slow[2] = true
	for pr := 1; pr <= 3; pr++ {
		s.submit(pr, nil)
	}
	s.steps(8)
	if s.state(1) != Failed || s.state(3) != Merged || s.state(2) != Testing {
		t.Fatalf("states 1 %s, 2 %s, 3 %s; want FAILED, TESTING, MERGED", s.state(1), s.state(2), s.state(3))
	}
	if got := s.transitionsOf(3); !slices.Contains(got, "TESTS_PASSED>PENDING:PREREQUISITE_MERGE_ITEM_FAILED") && !slices.Contains(got, "TESTING>PENDING:PREREQUISITE_MERGE_ITEM_FAILED") {
		t.Errorf("PR 3 did not restart after PR 1 failed: %v", got)
	}
	if got := s.transitionsOf(2); slices.ContainsFunc(got, func(tr string) bool { return strings.HasSuffix(tr, "PREREQUISITE_MERGE_ITEM_FAILED") }) {
		t.Errorf("PR 2, in another lane, restarted: %v", got)
	}
}

// TestDirectMerge: with directMergeMode ALWAYS and nothing testing, an
// up-to-date PR whose own checks passed merges without a test run; one
// behind the target branch, or with a failing check, is tested as usual.
func TestDirectMerge(t *testing.T) {
	for _, c := range []struct {
		name       string
		upToDate   bool
		bad        bool
		wantReason string
		wantBuilds int
	}{
		{"up to date and passing", true, false, ReasonDirectMerge, 0},
		{"behind the target branch", false, false, ReasonMergeGraphMerge, 1},
		{"its own check failing", true, true, "", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSim(t, 1)
			s.update(QueuePatch{DirectMergeMode: ptr("ALWAYS")})
			s.w.openPR(1)
			s.w.upToDate[1], s.w.bad[1] = c.upToDate, c.bad
			s.submit(1, nil)
			s.steps(6)
			e := s.entry(1)
			if c.bad {
				if e.State != Failed {
					t.Errorf("PR 1 with a failing check: %s, want FAILED after its test run", e.State)
				}
			} else if e.State != Merged || e.Reason != c.wantReason {
				t.Errorf("PR 1: %s %s, want MERGED %s", e.State, e.Reason, c.wantReason)
			}
			if got := len(s.w.built); got != c.wantBuilds {
				t.Errorf("%d test branches built, want %d", got, c.wantBuilds)
			}
			if c.wantReason == ReasonDirectMerge {
				want := []string{
					">NOT_READY:API_REQUESTED", "NOT_READY>PENDING:MERGE_ITEM_NOW_READY",
					"PENDING>TESTING:DIRECT_MERGE_CHECKS_PASSED", "TESTING>TESTS_PASSED:DIRECT_MERGE_CHECKS_PASSED",
					"TESTS_PASSED>MERGED:MERGE_GRAPH_DIRECT_MERGE",
				}
				if diff := cmp.Diff(s.transitionsOf(1), want); diff != "" {
					t.Errorf("transitions (-got +want):\n%s", diff)
				}
			}
		})
	}
}

// TestBatchWithOneCulprit: four PRs test as one batch; PR 3 is bad. The
// batch fails, bisection finds PR 3 on its two slots (the first PR and the
// first two at once, then the first three; never the whole batch again
// with BISECTION_SKIP_REDUNDANT_TESTS), 1 and 2 merge on the passing
// bisection run, 3 fails, 4 is retested and merges. With optimizationMode
// OFF the whole batch is run again once, on one of the two slots.
func TestBatchWithOneCulprit(t *testing.T) {
	for _, c := range []struct {
		mode string
		runs int
	}{{"BISECTION_SKIP_REDUNDANT_TESTS", 5}, {"OFF", 5}} {
		t.Run(c.mode, func(t *testing.T) {
			s := newSim(t, 1)
			s.update(QueuePatch{Batch: ptr(true), BatchingMinSize: ptr(4), BisectionConcurrency: ptr(2), OptimizationMode: ptr(c.mode)})
			s.w.bad[3] = true
			for pr := 1; pr <= 4; pr++ {
				s.submit(pr, nil)
			}
			s.steps(20)
			got := map[int]PRState{}
			for pr := 1; pr <= 4; pr++ {
				got[pr] = s.state(pr)
			}
			if diff := cmp.Diff(got, map[int]PRState{1: Merged, 2: Merged, 3: Failed, 4: Merged}); diff != "" {
				t.Errorf("states (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(s.mergedOrder(), []int{1, 2, 4}); diff != "" {
				t.Errorf("merges (-got +want):\n%s", diff)
			}
			if got := len(s.w.built); got != c.runs {
				t.Errorf("%d test branches built, want %d", got, c.runs)
			}
			v := s.runs[s.entry(1).VerifiedByTestRun]
			if !v.Bisection || v.Prefix != 2 || !strings.Contains(v.TestBranch, "-bisection-") {
				t.Errorf("PR 1 verified by %+v, want the bisection run of the first two", v)
			}
			if got := s.transitionsOf(3); got[len(got)-1] != "PENDING_FAILURE>FAILED:TEST_RUN_REQUIRED_STATUS_FAILED" {
				t.Errorf("PR 3 transitions: %v", got)
			}
			// Their conclusions were a bisection's verdict (metrics count
			// them in the bisection series); PR 4's was not.
			for _, tr := range s.trans {
				if tr.To.Terminal() && tr.Bisection != (tr.PRNumber != 4) {
					t.Errorf("PR %d %s: bisection %v", tr.PRNumber, tr.To, tr.Bisection)
				}
			}
		})
	}
}

// TestBatchWaitsToFill: a batch of two waits for a second PR up to
// batchingMaxWaitTimeMinutes, then runs short.
func TestBatchWaitsToFill(t *testing.T) {
	s := newSim(t, 2)
	s.update(QueuePatch{Batch: ptr(true), BatchingMinSize: ptr(2), BatchingMaxWaitTimeMinutes: ptr(5)})
	s.w.hold[1] = true
	s.submit(1, nil)
	s.steps(2)
	if got := s.state(1); got != Pending {
		t.Fatalf("PR 1 alone: %s, want PENDING (waiting for a second PR)", got)
	}
	s.now = s.now.Add(5 * time.Minute)
	s.steps(1)
	if got := s.state(1); got != Testing {
		t.Fatalf("PR 1 after the wait: %s, want TESTING", got)
	}
	s.submit(2, nil)
	s.submit(3, nil)
	s.steps(2)
	r2, r3 := s.entry(2).RunID, s.entry(3).RunID
	if r2 == "" || r2 != r3 || countUnderTest(ptr(s.runs[r2])) != 2 {
		t.Errorf("PRs 2 and 3 not batched together: runs %q %q", r2, r3)
	}
}

// TestBatchEvents: a batch of two that passes sends one
// pull_request_batch.testing and one pull_request_batch.merged, naming
// both PRs.
func TestBatchEvents(t *testing.T) {
	s := newSim(t, 1)
	s.update(QueuePatch{Batch: ptr(true), BatchingMinSize: ptr(2)})
	s.submit(1, nil)
	s.submit(2, nil)
	s.steps(6)
	var batch []Event
	for _, ev := range s.w.eventLog {
		if strings.HasPrefix(ev.Type, "pull_request_batch.") {
			batch = append(batch, ev)
		}
	}
	if len(batch) != 2 || batch[0].Type != "pull_request_batch.testing" || batch[1].Type != "pull_request_batch.merged" {
		t.Fatalf("batch events: %+v", batch)
	}
	if b := batch[0]; !slices.Equal(b.PRNumbers, []int{1, 2}) || b.IsBisection == nil || *b.IsBisection || b.TestBranch == "" {
		t.Errorf("batch testing event: %+v", b)
	}
}

// TestFlakyRetries: PR 1's run fails; what happens next depends on the
// retry settings and on what test health says of the failed tests.
func TestFlakyRetries(t *testing.T) {
	flaky := []FailedTest{{Name: "TestA", Status: "flaky"}}
	for _, c := range []struct {
		name     string
		patch    QueuePatch
		flakes   int
		evidence []FailedTest
		wait     time.Duration // virtual time let pass
		want     PRState
		retries  int
	}{
		{"flaky test: retried, then merges", QueuePatch{FlakyRetries: ptr(1)}, 1, flaky, 0, Merged, 1},
		{"quarantined test: retried", QueuePatch{FlakyRetries: ptr(1)}, 1, []FailedTest{{Name: "TestQ", Status: "broken", Quarantined: true}}, 0, Merged, 1},
		{"healthy test: failed at once", QueuePatch{FlakyRetries: ptr(1)}, 1, []FailedTest{{Name: "TestA", Status: "flaky"}, {Name: "TestB", Status: "healthy"}}, 0, Failed, 0},
		{"no wait: the first look still counts", QueuePatch{FlakyRetries: ptr(1), FlakyEvidenceWaitSeconds: ptr(0)}, 1, flaky, 0, Merged, 1},
		{"no wait and no upload: fails at the first look", QueuePatch{FlakyRetries: ptr(1), FlakyEvidenceWaitSeconds: ptr(0)}, 1, nil, 0, Failed, 0},
		{"no upload: waits, then fails", QueuePatch{FlakyRetries: ptr(1), FlakyEvidenceWaitSeconds: ptr(1800)}, 1, nil, 31 * time.Minute, Failed, 0},
		{"any failure: retried without evidence", QueuePatch{FlakyRetries: ptr(1), FlakyRetryPolicy: ptr("ANY_FAILURE")}, 1, nil, 0, Merged, 1},
		{"retries used up", QueuePatch{FlakyRetries: ptr(1)}, 2, flaky, 0, Failed, 1},
		{"no retries set", QueuePatch{}, 1, flaky, 0, Failed, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSim(t, 1)
			s.update(c.patch)
			s.w.openPR(1)
			s.w.flakes[1] = c.flakes
			s.w.reuseLag = 2 // a retry first sees the failure it repeats
			if c.evidence != nil {
				s.w.evidence[1] = c.evidence
			}
			s.submit(1, nil)
			s.steps(4)
			if c.wait > 0 {
				if got := s.state(1); got != Testing {
					t.Fatalf("PR 1 waiting for evidence: %s, want TESTING", got)
				}
				s.now = s.now.Add(c.wait)
			}
			s.steps(8)
			e := s.entry(1)
			if e.State != c.want || e.Retries != c.retries {
				t.Errorf("PR 1: %s after %d retries (%v), want %s after %d", e.State, e.Retries, s.transitionsOf(1), c.want, c.retries)
			}
			retried := 0
			for _, ev := range s.w.eventLog {
				if strings.HasPrefix(ev.QueuedReason, "RETRY_") {
					retried++
				}
				if ev.QueuedReason == ReasonRetryKnownFlaky && !slices.Equal(ev.FlakyTests, []string{c.evidence[0].Name}) {
					t.Errorf("retry event names %v, want %s", ev.FlakyTests, c.evidence[0].Name)
				}
			}
			if retried != e.Retries {
				t.Errorf("%d pull_request.queued events of a retry, want %d", retried, e.Retries)
			}
			// Each retry tested the very head that failed: test health sees
			// a failure and a pass on one sha.
			if got := len(s.w.reused); got != e.Retries {
				t.Errorf("%d runs reused a failed head, want %d (one per retry)", got, e.Retries)
			}
			for id, sha := range s.w.reused {
				r := s.runs[id]
				if old := s.runs[r.RetryOf]; r.RetryOf == "" || old.HeadSHA != sha || r.HeadSHA != sha {
					t.Errorf("run %s reused %s: retry of %q (head %s), own head %s", id, sha, r.RetryOf, old.HeadSHA, r.HeadSHA)
				}
			}
		})
	}
}

// TestRetryWaitsForThePRsAhead: under ANY_FAILURE, PR 2 flakes while PR 1,
// which its run was built on, really fails: PR 2 is not retried (the
// failure may be PR 1's), and once PR 1 has failed it is restarted without
// spending its retry, and merges.
func TestRetryWaitsForThePRsAhead(t *testing.T) {
	s := newSim(t, 2)
	s.update(QueuePatch{FlakyRetries: ptr(1), FlakyRetryPolicy: ptr("ANY_FAILURE")})
	s.w.bad[1] = true
	s.w.flakes[2] = 1
	s.submit(1, nil)
	s.submit(2, nil)
	s.steps(12)
	if e := s.entry(1); e.State != Failed || e.Retries != 1 {
		t.Errorf("PR 1: %s after %d retries, want FAILED after 1", e.State, e.Retries)
	}
	if e := s.entry(2); e.State != Merged || e.Retries != 0 {
		t.Errorf("PR 2: %s after %d retries (%v), want MERGED after 0", e.State, e.Retries, s.transitionsOf(2))
	}
}

// TestNothingJoinsWhileEvidenceIsAwaited: while PR 1's failed run waits for
// test health (KNOWN_FLAKY, no upload yet), PR 2 does not start on top of
// it; once the wait is over with no upload, PR 1 fails and PR 2 is tested
// on the target branch alone.
func TestNothingJoinsWhileEvidenceIsAwaited(t *testing.T) {
	s := newSim(t, 2)
	s.update(QueuePatch{FlakyRetries: ptr(1), FlakyEvidenceWaitSeconds: ptr(600)})
	s.w.flakes[1] = 1
	s.submit(1, nil)
	s.steps(4)
	s.submit(2, nil)
	s.steps(4)
	if a, b := s.state(1), s.state(2); a != Testing || b != Pending {
		t.Fatalf("while PR 1 awaits evidence: PR 1 %s, PR 2 %s; want TESTING and PENDING", a, b)
	}
	s.now = s.now.Add(11 * time.Minute)
	s.steps(8)
	if a, b := s.state(1), s.state(2); a != Failed || b != Merged {
		t.Fatalf("after the wait: PR 1 %s, PR 2 %s; want FAILED and MERGED", a, b)
	}
	for _, r := range s.runs {
		if r.PRNumber == 2 && len(r.PRs) != 1 {
			t.Errorf("PR 2 was tested on top of %v", r.PRs)
		}
	}
}

// TestRetriesLoweredWhileWaiting: a failed run waits for its evidence, then
// flakyRetries is set to 0: the PR fails, and evidence of a flake coming
// after that retries nothing.
func TestRetriesLoweredWhileWaiting(t *testing.T) {
	s := newSim(t, 1)
	s.update(QueuePatch{FlakyRetries: ptr(1), FlakyEvidenceWaitSeconds: ptr(1800)})
	s.w.flakes[1] = 1
	s.submit(1, nil)
	s.steps(4)
	if got := s.state(1); got != Testing {
		t.Fatalf("PR 1 waiting for evidence: %s, want TESTING", got)
	}
	s.update(QueuePatch{FlakyRetries: ptr(0)})
	s.w.evidence[1] = []FailedTest{{Name: "TestA", Status: "flaky"}}
	s.steps(4)
	if e := s.entry(1); e.State != Failed || e.Retries != 0 {
		t.Errorf("PR 1: %s after %d retries, want FAILED after 0", e.State, e.Retries)
	}
}
