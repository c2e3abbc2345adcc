package queueapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/github/githubsim"
)

// Scenarios on the GitHub test server as strict as GitHub: required
// checks from rulesets and bound to Apps, merges GitHub refuses, mergeable
// null and secondary rate limits.

// transitions lists PR n's transitions as the queue recorded them, "FROM
// → TO (REASON)", oldest first.
func (e *env) transitions(n int) []string {
	e.tb.Helper()
	rec, err := e.App.Store.GetQueue(context.Background(), mainQueue)
	if err != nil {
		e.tb.Fatal(err)
	}
	var out []string
	for _, tr := range rec.Snapshot.Transitions {
		if tr.PRNumber == n {
			out = append(out, fmt.Sprintf("%s → %s (%s)", orNone(string(tr.From)), tr.To, tr.Reason))
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// straightThrough is the transitions of a PR that went through the queue
// with nothing going wrong.
var straightThrough = []string{
	"none → NOT_READY (API_REQUESTED)",
	"NOT_READY → PENDING (MERGE_ITEM_NOW_READY)",
	"PENDING → TESTING (TEST_RUN_STARTED)",
	"TESTING → TESTS_PASSED (TEST_RUN_PASSED)",
	"TESTS_PASSED → MERGED (MERGE_GRAPH_MERGE)",
}

// agreesWithGitHub fails unless the queue says MERGED of exactly the PRs
// GitHub merged.
func (e *env) agreesWithGitHub(prs ...int) {
	e.tb.Helper()
	for _, n := range prs {
		pr, err := e.Sim.PR(repoFull, n)
		if err != nil {
			e.tb.Fatal(err)
		}
		if state := e.pr(n).State; (state == "MERGED") != pr.Merged {
			e.tb.Errorf("PR %d: the queue says %s, GitHub merged: %v", n, state, pr.Merged)
		}
	}
}

// wentStraightThrough fails unless prs merged on main in that order, each
// with no transition but the straight-through ones, as GitHub agrees.
func (e *env) wentStraightThrough(prs ...int) {
	e.tb.Helper()
	for _, n := range prs {
		if diff := cmp.Diff(e.transitions(n), straightThrough); diff != "" {
			e.tb.Errorf("PR %d transitions (-got +want):\n%s", n, diff)
		}
	}
	if diff := cmp.Diff(e.mergedOrder(), prs); diff != "" {
		e.tb.Errorf("merges (-got +want):\n%s", diff)
	}
	e.agreesWithGitHub(prs...)
}

// ticksWithoutCI ticks n times with no CI reporting, and fails if PR pr
// leaves state or anything merges on main.
func (e *env) ticksWithoutCI(n, pr int, state string) {
	e.tb.Helper()
	for i := range n {
		e.tick()
		if got := e.pr(pr).State; got != state {
			e.tb.Fatalf("tick %d without CI: PR %d is %s, want %s", i+1, pr, got, state)
		}
	}
	if got := e.mergedOrder(); len(got) > 0 {
		e.tb.Fatalf("merged %v without CI", got)
	}
}

// A repository protected by an organization ruleset alone (no classic
// branch protection): its required status is the queue's — the PR waits
// in TESTING for it, and nothing merges, until CI reports it; then the PR
// merges. Without rulesets the queue would see no required status and
// fail the PR at once.
func TestRulesetOnlyRepositoryRequiredStatusBlocksThenAllowsMerge(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	if err := e.Sim.SetRequiredStatusChecks(repoFull, "main", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Sim.AddOrgRuleset("acme", githubsim.Ruleset{Name: "ci everywhere", Checks: []githubsim.RequiredCheck{{Context: "ci"}}}); err != nil {
		t.Fatal(err)
	}
	e.ok("createQueue", q(nil), nil)
	a := e.openPR("a")
	e.ok("submitPullRequest", prq(a, nil), nil)
	for range 5 {
		if e.pr(a).State == "TESTING" {
			break
		}
		e.tick()
	}
	e.ticksWithoutCI(3, a, "TESTING")
	var d struct {
		RequiredStatuses       []string `json:"requiredStatuses"`
		RequiredStatusesSource string   `json:"requiredStatusesSource"`
	}
	e.ok("getMergeQueueTestingDetails", map[string]any{"testRunId": e.currentRun(a)}, &d)
	if !cmp.Equal(d.RequiredStatuses, []string{"ci"}) || d.RequiredStatusesSource != "REPO_PROVIDER_BRANCH_PROTECTION" {
		t.Errorf("testing details: required %v from %s, want [ci] from REPO_PROVIDER_BRANCH_PROTECTION", d.RequiredStatuses, d.RequiredStatusesSource)
	}

	e.until(allDone(e, a))
	e.wentStraightThrough(a)
}

// A required check bound to an App (GitHub Actions here) is not
// satisfied by the same name from another App: another CI's "ci" success
// on the test branch and on the PR passes nothing; the bound App's does.
func TestRequiredCheckOfAnotherAppDoesNotPass(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	if err := e.Sim.SetRequiredStatusChecks(repoFull, "main", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Sim.AddRuleset(repoFull, githubsim.Ruleset{Checks: []githubsim.RequiredCheck{{Context: "ci", AppID: githubsim.CIAppID}}}); err != nil {
		t.Fatal(err)
	}
	const otherApp = 4242
	e.Sim.AddApp(otherApp, "other-ci")
	e.ok("createQueue", q(nil), nil)
	a := e.openPR("a")
	e.ok("submitPullRequest", prq(a, nil), nil)
	e.until(e.testing(a))
	head, _ := e.Sim.PR(repoFull, a)
	for _, sha := range []string{e.testBranchHead(a), head.HeadSHA} {
		if err := e.Sim.SetStatusFrom(otherApp, repoFull, sha, "ci", "success", "", ""); err != nil {
			t.Fatal(err)
		}
		if err := e.Sim.SetCheckRunFrom(otherApp, repoFull, sha, "ci", "completed", "success", ""); err != nil {
			t.Fatal(err)
		}
	}
	e.ticksWithoutCI(3, a, "TESTING")

	e.until(allDone(e, a)) // GitHub Actions reports ci
	e.wentStraightThrough(a)
}

// GitHub refuses to merge a PR whose own head lacks the status branch
// protection requires, though its test branch passed: the queue reports
// the PR FAILED with the merge refused, and never MERGED; main is
// unchanged. Under a strict policy, a PR the queue tested on top of
// another one is behind main once that one merged, and GitHub refuses it
// too.
func TestNeverMergedWhileGitHubRefuses(t *testing.T) {
	t.Parallel()
	t.Run("required status missing on the PR", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, nil)
		e.ok("createQueue", q(nil), nil)
		a := e.openPR("a")
		e.ok("submitPullRequest", prq(a, nil), nil)
		e.until(e.testing(a), "a.txt")                                                // CI fails the PR's own head…
		if err := e.CI.Report(repoFull, e.testBranchHead(a), "success"); err != nil { // …and passes its test branch
			t.Fatal(err)
		}
		for range 5 {
			if e.pr(a).State == "FAILED" {
				break
			}
			e.tick()
		}
		want := append(append([]string{}, straightThrough[:4]...), "TESTS_PASSED → FAILED (GITHUB_API_MERGE_PR_FAILED)")
		if diff := cmp.Diff(e.transitions(a), want); diff != "" {
			t.Errorf("transitions (-got +want):\n%s", diff)
		}
		if got := e.mergedOrder(); len(got) > 0 {
			t.Errorf("merged %v", got)
		}
		e.agreesWithGitHub(a)
	})
	t.Run("behind main under a strict policy", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, nil)
		if err := e.Sim.SetBranchProtection(repoFull, "main", &githubsim.Protection{Checks: []githubsim.RequiredCheck{{Context: "ci"}}, Strict: true}); err != nil {
			t.Fatal(err)
		}
		e.ok("createQueue", q(map[string]any{"concurrency": 2}), nil)
		a, b := e.openPR("a"), e.openPR("b")
		e.ok("submitPullRequest", prq(a, nil), nil)
		e.ok("submitPullRequest", prq(b, nil), nil)
		e.until(allDone(e, a, b))
		if diff := cmp.Diff(e.states(a, b), []string{"MERGED", "FAILED"}); diff != "" {
			t.Errorf("states (-got +want):\n%s", diff)
		}
		if diff := cmp.Diff(e.mergedOrder(), []int{a}); diff != "" {
			t.Errorf("merges (-got +want):\n%s", diff)
		}
		e.agreesWithGitHub(a, b)
	})
}

// GitHub answers mergeable: null while it computes, for as long as it
// takes: a PR waits in NOT_READY meanwhile (readiness IN_PROGRESS),
// neither cancelled nor failed, and goes on once it is known; a PR whose
// mergeability goes back to null while it tests (main moved under it: a
// PR ahead merged) is not disturbed. Both go straight through.
func TestQueueSurvivesMergeableNull(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(map[string]any{"concurrency": 2}), nil)
	a, b := e.openPR("a"), e.openPR("b")
	if err := e.Sim.SetMergeableUnknown(repoFull, a, true); err != nil {
		t.Fatal(err)
	}
	e.ok("submitPullRequest", prq(a, nil), nil)
	for range 4 {
		e.ci()
		e.tick()
		if got := e.pr(a); got.State != "NOT_READY" || got.Readiness.GitHubMergeability != "IN_PROGRESS" {
			t.Fatalf("while GitHub computes: PR %d %s, mergeability %s; want NOT_READY, IN_PROGRESS", a, got.State, got.Readiness.GitHubMergeability)
		}
	}
	if err := e.Sim.SetMergeableUnknown(repoFull, a, false); err != nil {
		t.Fatal(err)
	}
	e.ok("submitPullRequest", prq(b, nil), nil)
	e.until(func() bool { return e.pr(a).State == "TESTING" && e.pr(b).State == "TESTING" })
	if err := e.Sim.SetMergeableUnknown(repoFull, b, true); err != nil { // and stays so after a merges
		t.Fatal(err)
	}
	e.until(allDone(e, a, b))
	e.wentStraightThrough(a, b)
}

// GitHub's secondary rate limit (403 with retry-after) on the queue's
// reads and on its merge: no PR is ejected for it, nothing reaches GitHub
// until the retry-after has passed, and both PRs then go straight
// through.
func TestQueueSurvivesSecondaryRateLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(map[string]any{"concurrency": 2}), nil)
	a, b := e.openPR("a"), e.openPR("b")
	e.ok("submitPullRequest", prq(a, nil), nil)
	e.ok("submitPullRequest", prq(b, nil), nil)
	e.until(func() bool { return e.pr(a).State == "TESTING" && e.pr(b).State == "TESTING" })

	// A limited read while testing, then the limit's quiet: a tick well
	// within the retry-after asks GitHub nothing.
	limit := func(f githubsim.Fault) {
		t.Helper()
		f.Kind, f.RetryAfter = githubsim.FaultSecondaryRateLimit, 90*time.Second
		e.Sim.InjectFault(f)
		e.tick()
		before := e.Sim.RequestCount("", "/")
		e.tick()
		if n := e.Sim.RequestCount("", "/") - before; n != 0 {
			t.Errorf("%d requests reached GitHub within the retry-after", n)
		}
		if diff := cmp.Diff(e.states(a, b), []string{"TESTING", "TESTING"}); diff != "" && f.Method == "GET" {
			t.Errorf("after a limited read (-got +want):\n%s", diff)
		}
	}
	limit(githubsim.Fault{Method: "GET", PathPrefix: "/repos/acme/web/pulls/"})
	e.ci()
	limit(githubsim.Fault{Method: "PUT", PathPrefix: fmt.Sprintf("/repos/acme/web/pulls/%d/merge", a)})
	for _, n := range []int{a, b} {
		if got := e.pr(n).State; got != "TESTS_PASSED" {
			t.Errorf("PR %d after a limited merge: %s, want TESTS_PASSED", n, got)
		}
	}

	e.until(allDone(e, a, b))
	e.wentStraightThrough(a, b)
	if n := e.Sim.RequestCount("PUT", fmt.Sprintf("/repos/acme/web/pulls/%d/merge", a)); n != 2 {
		t.Errorf("PR %d's merge asked %d times, want 2 (limited, then merged)", a, n)
	}
	e.agreesWithGitHub(a, b)
}

// A test pull request's title stays within GitHub's 256 characters,
// whatever the target branch's name (up to 255): GitHub refuses a longer
// one (422), and CI that runs on pull requests would then never run.
func TestTestPRTitleFitsGitHubsLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	branch := "release/" + strings.Repeat("x", 230)
	if _, err := e.Sim.CreateBranch(repoFull, branch, "main"); err != nil {
		t.Fatal(err)
	}
	e.ok("createQueue", map[string]any{"repo": map[string]string{"host": "github.com", "owner": "acme", "name": "web"}, "targetBranch": branch}, nil)
	if _, err := e.Sim.CommitFile(repoFull, "a", "a.txt", "a\n", "add a"); err != nil {
		t.Fatal(err)
	}
	n, err := e.Sim.OpenPR(repoFull, "a", branch, "Add a", "dev")
	if err != nil {
		t.Fatal(err)
	}
	e.ok("updateQueue", map[string]any{"repo": map[string]string{"host": "github.com", "owner": "acme", "name": "web"}, "targetBranch": branch,
		"createPrsForTestingBranches": true, "requiredStatuses": []string{"ci"}}, nil)
	e.ok("submitPullRequest", map[string]any{"repo": map[string]string{"host": "github.com", "owner": "acme", "name": "web"}, "targetBranch": branch,
		"pr": map[string]any{"number": n}}, nil)
	var titles []string
	for range 5 {
		e.tick()
		all, err := e.Sim.PullRequests(repoFull)
		if err != nil {
			t.Fatal(err)
		}
		titles = titles[:0]
		for _, p := range all {
			if strings.HasPrefix(p.HeadRef, "trunk-merge/") {
				titles = append(titles, p.Title)
			}
		}
		if len(titles) > 0 {
			break
		}
	}
	if len(titles) != 1 || len([]rune(titles[0])) > 256 || !strings.HasPrefix(titles[0], fmt.Sprintf("[mainguard] test run for #%d into release/xxx", n)) {
		t.Errorf("test pull requests: %q, want one titled within 256 characters", titles)
	}
	// The queue's commit status on the PR, whose context names the
	// branch, is within GitHub's 255 characters too.
	c, err := github.New(github.Config{BaseURL: e.Sim.URL(), Token: "local"})
	if err != nil {
		t.Fatal(err)
	}
	head, _ := e.Sim.PR(repoFull, n)
	checks, err := c.Checks(context.Background(), github.Repo{Owner: "acme", Name: "web"}, head.HeadSHA)
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 1 || !strings.HasPrefix(checks[0].Name, "Trunk Merge Queue (release/xxx") || len([]rune(checks[0].Name)) != 255 {
		t.Errorf("statuses on the PR: %+v, want the queue's, its context cut to 255 characters", checks)
	}
}
