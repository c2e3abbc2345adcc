package queueapi_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testBranch is PR n's current test branch (trunk-merge/pr-{n}/{run id}).
func (e *env) testBranch(n int) string {
	e.tb.Helper()
	branches, err := e.Sim.Branches(repoFull)
	if err != nil {
		e.tb.Fatal(err)
	}
	for _, b := range branches {
		if strings.HasPrefix(b, "trunk-merge/pr-"+strconv.Itoa(n)+"/") {
			return b
		}
	}
	e.tb.Fatalf("PR %d has no test branch among %v", n, branches)
	return ""
}

// testBranchHead is the head of PR n's current test branch.
func (e *env) testBranchHead(n int) string {
	e.tb.Helper()
	head, err := e.Sim.BranchHead(repoFull, e.testBranch(n))
	if err != nil {
		e.tb.Fatal(err)
	}
	return head
}

// currentRun is the id of PR n's current test run, from its branch name.
func (e *env) currentRun(n int) string {
	b := e.testBranch(n)
	return b[strings.LastIndex(b, "/")+1:]
}

// TestOptimisticMergeRescuesAFlakyFailure: A's run fails once (a flake),
// B's run, built on top of A, passes; with canOptimisticallyMerge and a
// pending-failure depth of 1 both merge, verified by B's run.
func TestOptimisticMergeRescuesAFlakyFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(map[string]any{"concurrency": 2}), nil)
	e.ok("updateQueue", q(map[string]any{"canOptimisticallyMerge": true, "pendingFailureDepth": 1}), nil)
	a, b := e.openPR("a"), e.openPR("b")
	e.ok("submitPullRequest", prq(a, nil), nil)
	e.ok("submitPullRequest", prq(b, nil), nil)
	if diff := cmp.Diff(e.states(a, b), []string{"TESTING", "TESTING"}); diff != "" {
		t.Fatalf("(-got +want):\n%s", diff)
	}
	if err := e.CI.Report(repoFull, e.testBranchHead(a), "failure"); err != nil {
		t.Fatal(err)
	}
	e.tick()
	if got := e.pr(a).State; got != "PENDING_FAILURE" {
		t.Fatalf("A after its failed run: %s, want PENDING_FAILURE (waiting for B)", got)
	}
	e.until(allDone(e, a, b))
	if diff := cmp.Diff(e.states(a, b), []string{"MERGED", "MERGED"}); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(e.mergedOrder(), []int{a, b}); diff != "" {
		t.Errorf("merges on main (-got +want):\n%s", diff)
	}
	if va, vb := e.pr(a).VerifiedByTestRun, e.pr(b).VerifiedByTestRun; va == "" || va != vb {
		t.Errorf("A verified by %q, B by %q: want both B's run", va, vb)
	}
}

// TestParallelLanesThroughTheAPI: in PARALLEL mode, A (api) and B (web)
// are tested on the target branch alone and C (api) on top of A; a PR
// without impacted targets waits in NOT_READY until they are set.
func TestParallelLanesThroughTheAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(map[string]any{"concurrency": 3, "mode": "PARALLEL"}), nil)
	targets := map[string][]string{"a": {"api"}, "b": {"web"}, "c": {"api", "docs"}}
	prs := map[string]int{}
	for _, name := range []string{"a", "b", "c", "d"} {
		n := e.openPR(name)
		prs[name] = n
		if t, ok := targets[name]; ok {
			e.setTargets(n, t)
		}
		e.ok("submitPullRequest", prq(n, nil), nil)
	}
	e.tick()
	d := e.pr(prs["d"])
	if d.State != "NOT_READY" || d.Readiness.HasImpactedTargets {
		t.Fatalf("D without targets: %+v", d)
	}
	dependents := func(n int) []int {
		var det struct {
			DependentPrs []struct {
				PRNumber int `json:"prNumber"`
			} `json:"dependentPrs"`
		}
		e.ok("getMergeQueueTestingDetails", map[string]any{"testRunId": e.currentRun(n)}, &det)
		var out []int
		for _, p := range det.DependentPrs {
			out = append(out, p.PRNumber)
		}
		return out
	}
	if da, db, dc := dependents(prs["a"]), dependents(prs["b"]), dependents(prs["c"]); len(da) != 0 || len(db) != 0 || !cmp.Equal(dc, []int{prs["a"]}) {
		t.Errorf("tested on top of: A %v, B %v, C %v; want none, none, [A]", da, db, dc)
	}
	e.setTargets(prs["d"], []string{"web"})
	e.until(allDone(e, prs["a"], prs["b"], prs["c"], prs["d"]))
	if diff := cmp.Diff(e.states(prs["a"], prs["b"], prs["c"], prs["d"]), []string{"MERGED", "MERGED", "MERGED", "MERGED"}); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

// setTargets posts PR n's impacted targets for its current head.
func (e *env) setTargets(n int, targets []string) {
	e.tb.Helper()
	pr, err := e.Sim.PR(repoFull, n)
	if err != nil {
		e.tb.Fatal(err)
	}
	e.ok("setImpactedTargets", q(map[string]any{"pr": map[string]any{"number": n, "sha": pr.HeadSHA}, "impactedTargets": targets}), nil)
}

// TestSwitchingModesAndBack: a mode change while a PR tests waits in
// SWITCHING_MODES; setting the mode back calls it off; set again, the
// switch completes once the PR has merged.
func TestSwitchingModesAndBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(nil), nil)
	a := e.openPR("a")
	e.ok("submitPullRequest", prq(a, nil), nil)
	queue := func() (state, mode string) {
		var v struct{ State, Mode string }
		e.ok("getQueue", q(nil), &v)
		return v.State, v.Mode
	}
	step := func(mode, wantState, wantMode string) {
		t.Helper()
		e.ok("updateQueue", q(map[string]any{"mode": mode}), nil)
		if s, m := queue(); s != wantState || m != wantMode {
			t.Fatalf("after mode %s: %s %s, want %s %s", mode, s, m, wantState, wantMode)
		}
	}
	e.until(e.testing(a)) // once GitHub has computed its mergeability
	step("PARALLEL", "SWITCHING_MODES", "SINGLE")
	if code, body := e.call("updateQueue", q(map[string]any{"state": "PAUSED"})); code != 400 || !strings.Contains(body, "switching modes") {
		t.Errorf("state while switching: %d %s", code, body)
	}
	step("SINGLE", "RUNNING", "SINGLE")
	step("PARALLEL", "SWITCHING_MODES", "SINGLE")
	e.until(allDone(e, a))
	e.tick()
	if s, m := queue(); s != "RUNNING" || m != "PARALLEL" {
		t.Errorf("after the PR merged: %s %s, want RUNNING PARALLEL", s, m)
	}
}

// TestDirectMergeOfAnUpToDatePR: with directMergeMode ALWAYS, a PR made
// from main's head whose own ci passed merges without a test run (no CI
// ever judges a test branch here); B, opened before that merge and so
// behind main now, is tested as usual.
func TestDirectMergeOfAnUpToDatePR(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(nil), nil)
	e.ok("updateQueue", q(map[string]any{"directMergeMode": "ALWAYS"}), nil)
	a, b := e.openPR("a"), e.openPR("b")
	for _, n := range []int{a, b} {
		pr, err := e.Sim.PR(repoFull, n)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.CI.Report(repoFull, pr.HeadSHA, "success"); err != nil {
			t.Fatal(err)
		}
	}
	e.ok("submitPullRequest", prq(a, nil), nil)
	e.tick()
	if got := e.pr(a).State; got != "MERGED" {
		t.Fatalf("A: %s, want MERGED without a test run", got)
	}
	if branches, _ := e.Sim.Branches(repoFull); slices.ContainsFunc(branches, func(b string) bool { return strings.HasPrefix(b, "trunk-") }) {
		t.Errorf("a test branch was made for a direct merge: %v", branches)
	}
	e.ok("submitPullRequest", prq(b, nil), nil)
	e.tick()
	if got := e.pr(b).State; got != "TESTING" {
		t.Errorf("B, behind main: %s, want TESTING", got)
	}
	e.until(allDone(e, b))
	if diff := cmp.Diff(e.mergedOrder(), []int{a, b}); diff != "" {
		t.Errorf("merges on main (-got +want):\n%s", diff)
	}
}

// TestBatchOfFourWithOneCulprit: four PRs tested as one batch; C's file
// fails CI. Bisection finds C: A and B merge, C fails, D is retested
// without it and merges; main's history is in order.
func TestBatchOfFourWithOneCulprit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(nil), nil)
	e.ok("updateQueue", q(map[string]any{"batch": true, "batchingMinSize": 4, "optimizationMode": "BISECTION_SKIP_REDUNDANT_TESTS"}), nil)
	var prs []int
	for _, name := range []string{"a", "b", "c", "d"} {
		n := e.openPR(name)
		prs = append(prs, n)
		e.ok("submitPullRequest", prq(n, nil), nil)
	}
	e.tick()
	var d0 struct {
		TestedPullRequests []struct {
			PRNumber int `json:"prNumber"`
		} `json:"testedPullRequests"`
	}
	e.ok("getMergeQueueTestingDetails", map[string]any{"testRunId": e.currentRun(prs[3])}, &d0)
	if len(d0.TestedPullRequests) != 4 {
		t.Fatalf("the four are not one batch: %+v", d0)
	}
	e.until(allDone(e, prs...), "c.txt")
	if diff := cmp.Diff(e.states(prs...), []string{"MERGED", "MERGED", "FAILED", "MERGED"}); diff != "" {
		t.Errorf("states (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(e.mergedOrder(), []int{prs[0], prs[1], prs[3]}); diff != "" {
		t.Errorf("merges on main (-got +want):\n%s", diff)
	}
	var d struct {
		TestBranch         string `json:"testBranch"`
		TestedPullRequests []struct {
			PRNumber int `json:"prNumber"`
		} `json:"testedPullRequests"`
	}
	e.ok("getMergeQueueTestingDetails", map[string]any{"testRunId": e.pr(prs[0]).VerifiedByTestRun}, &d)
	if !strings.Contains(d.TestBranch, "-bisection-") || len(d.TestedPullRequests) != 2 {
		t.Errorf("A verified by %+v, want the bisection run of A and B", d)
	}
}
