package queueapi_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func allDone(e *env, prs ...int) func() bool {
	// A finished PR stays finished while the returned func is in use, so
	// each is asked about until it is: a long scenario polls only what
	// is still in the queue.
	open := slices.Clone(prs)
	return func() bool {
		open = slices.DeleteFunc(open, func(n int) bool {
			s := e.pr(n).State
			return s == "MERGED" || s == "FAILED" || s == "CANCELLED"
		})
		return len(open) == 0
	}
}

// Five PRs tested predictively five at a time; the third fails its
// required status: it alone fails, 4 and 5 are retested without it, and
// the rest merge in order on GitHub.
func TestFivePRsThirdFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(map[string]any{"concurrency": 5}), nil)
	var prs []int
	for _, name := range []string{"f1", "f2", "f3", "f4", "f5"} {
		n := e.openPR(name)
		prs = append(prs, n)
		e.ok("submitPullRequest", prq(n, nil), nil)
	}
	e.until(allDone(e, prs...), "f3.txt")

	if diff := cmp.Diff(e.states(prs...), []string{"MERGED", "MERGED", "FAILED", "MERGED", "MERGED"}); diff != "" {
		t.Errorf("states (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(e.mergedOrder(), []int{1, 2, 4, 5}); diff != "" {
		t.Errorf("merges on main, oldest first (-got +want):\n%s", diff)
	}
	if pr, _ := e.Sim.PR(repoFull, 3); pr.Merged {
		t.Error("PR 3 merged on GitHub")
	}
	// 4 and 5 merged on runs that did not contain 3.
	for _, n := range []int{4, 5} {
		run := e.pr(n).VerifiedByTestRun
		var d struct {
			Status             string `json:"status"`
			TestedPullRequests []struct {
				PRNumber int `json:"prNumber"`
			} `json:"testedPullRequests"`
			DependentPrs []struct {
				PRNumber int `json:"prNumber"`
			} `json:"dependentPrs"`
			StatusChecks []struct {
				Context string `json:"context"`
				State   string `json:"state"`
			} `json:"statusChecks"`
		}
		e.ok("getMergeQueueTestingDetails", map[string]any{"testRunId": run}, &d)
		if d.Status != "SUCCEEDED" || len(d.TestedPullRequests) != 1 || d.TestedPullRequests[0].PRNumber != n {
			t.Errorf("PR %d verified by run %+v", n, d)
		}
		for _, dp := range d.DependentPrs {
			if dp.PRNumber == 3 {
				t.Errorf("PR %d merged on a run containing PR 3: %+v", n, d)
			}
		}
		if !slices.ContainsFunc(d.StatusChecks, func(c struct {
			Context string `json:"context"`
			State   string `json:"state"`
		}) bool {
			return c.Context == "ci" && c.State == "success"
		}) {
			t.Errorf("run of PR %d shows no passing ci: %+v", n, d.StatusChecks)
		}
	}
	// Test branches are cleaned up.
	branches, _ := e.Sim.Branches(repoFull)
	for _, b := range branches {
		if len(b) > 11 && (b[:11] == "trunk-merge" || b[:10] == "trunk-temp") {
			t.Errorf("test branch %s left behind", b)
		}
	}
}
