package queueapi_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/queuesvc"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
)

// testing waits until PR n is in TESTING with its test branch built.
func (e *env) testing(n int) func() bool {
	return func() bool { return e.pr(n).State == "TESTING" }
}

func TestCancelMidTest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(map[string]any{"concurrency": 2}), nil)
	a, b := e.openPR("a"), e.openPR("b")
	e.ok("submitPullRequest", prq(a, nil), nil)
	e.ok("submitPullRequest", prq(b, nil), nil)
	if diff := cmp.Diff(e.states(a, b), []string{"TESTING", "TESTING"}); diff != "" {
		t.Fatalf("before cancel (-got +want):\n%s", diff)
	}
	e.ok("cancelPullRequest", prq(a, nil), nil)
	e.until(allDone(e, a, b))
	if diff := cmp.Diff(e.states(a, b), []string{"CANCELLED", "MERGED"}); diff != "" {
		t.Errorf("states (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(e.mergedOrder(), []int{b}); diff != "" {
		t.Errorf("merges (-got +want):\n%s", diff)
	}
	if code, body := e.call("cancelPullRequest", prq(b, nil)); code != 400 {
		t.Errorf("cancel of a merged PR: %d %s, want 400", code, body)
	}
	// Resubmitting the cancelled PR keeps its id and starts over.
	id := e.pr(a).ID
	e.ok("submitPullRequest", prq(a, nil), nil)
	if got := e.pr(a); got.ID != id || !got.IsCurrentlySubmittedToQueue {
		t.Errorf("resubmitted: %+v, want id %s and submitted", got, id)
	}
}

func TestPushWhileTestingCancels(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(nil), nil)
	a := e.openPR("a")
	e.ok("submitPullRequest", prq(a, nil), nil)
	e.until(e.testing(a))
	if _, err := e.Sim.PushPR(repoFull, a, "a2.txt", "more\n", "more"); err != nil {
		t.Fatal(err)
	}
	e.tick()
	if got := e.pr(a).State; got != "CANCELLED" {
		t.Errorf("after a push, PR is %s, want CANCELLED", got)
	}
	if got := e.mergedOrder(); len(got) != 0 {
		t.Errorf("merged %v", got)
	}
}

func TestUrgentJumpsAhead(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(nil), nil) // one testing slot
	a, b := e.openPR("a"), e.openPR("b")
	e.ok("submitPullRequest", prq(a, nil), nil)
	e.ok("submitPullRequest", prq(b, nil), nil)
	if diff := cmp.Diff(e.states(a, b), []string{"TESTING", "PENDING"}); diff != "" {
		t.Fatalf("before (-got +want):\n%s", diff)
	}
	u := e.openPR("u")
	e.ok("submitPullRequest", prq(u, map[string]any{"priority": "urgent"}), nil)
	if diff := cmp.Diff(e.states(a, b, u), []string{"TESTING", "PENDING", "NOT_READY"}); diff != "" {
		t.Errorf("at the urgent submit, its mergeability unknown yet (-got +want):\n%s", diff)
	}
	e.tick() // GitHub has computed u's mergeability by the next read
	if diff := cmp.Diff(e.states(a, b, u), []string{"PENDING", "PENDING", "TESTING"}); diff != "" {
		t.Errorf("after the urgent submit (-got +want):\n%s", diff)
	}
	e.until(allDone(e, a, b, u))
	if diff := cmp.Diff(e.mergedOrder(), []int{u, a, b}); diff != "" {
		t.Errorf("merges (-got +want):\n%s", diff)
	}
}

func TestTimeoutFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(nil), nil)
	e.ok("updateQueue", q(map[string]any{"testingTimeoutMinutes": 30}), nil)
	a := e.openPR("a")
	e.ok("submitPullRequest", prq(a, nil), nil)
	e.until(e.testing(a))
	e.Clock.Advance(31 * time.Minute) // CI never answers
	e.tick()
	if got := e.pr(a).State; got != "FAILED" {
		t.Fatalf("after the timeout, PR is %s, want FAILED", got)
	}
	var list struct {
		PullRequests []submitted `json:"pullRequests"`
	}
	e.ok("listPullRequests", q(map[string]any{"state": "failed"}), &list)
	if len(list.PullRequests) != 1 || list.PullRequests[0].State != "FAILED" {
		t.Errorf("listPullRequests state=failed: %+v", list)
	}
}

func TestPausedAndDraining(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(nil), nil)
	var qv struct {
		State string `json:"state"`
	}
	e.ok("updateQueue", q(map[string]any{"state": "paused"}), &qv)
	if qv.State != "PAUSED" {
		t.Fatalf("updateQueue answered state %q", qv.State)
	}
	a, b := e.openPR("a"), e.openPR("b")
	e.ok("submitPullRequest", prq(a, nil), nil) // accepted while paused
	for range 3 {
		e.ci()
		e.tick()
	}
	if got := e.pr(a).State; got != "PENDING" {
		t.Fatalf("paused: PR is %s, want PENDING (no test starts)", got)
	}
	e.ok("updateQueue", q(map[string]any{"state": "RUNNING"}), nil)
	if got := e.pr(a).State; got != "TESTING" {
		t.Fatalf("running again: PR is %s, want TESTING", got)
	}
	// Draining: a testing PR finishes and merges, a new one waits.
	e.ok("updateQueue", q(map[string]any{"state": "DRAINING"}), nil)
	e.ok("submitPullRequest", prq(b, nil), nil)
	e.until(func() bool { return e.pr(a).State == "MERGED" })
	for range 3 {
		e.ci()
		e.tick()
	}
	if got := e.pr(b).State; got != "PENDING" {
		t.Errorf("draining: PR %d is %s, want PENDING", b, got)
	}
	var full struct {
		State                string      `json:"state"`
		EnqueuedPullRequests []submitted `json:"enqueuedPullRequests"`
	}
	e.ok("getQueue", q(nil), &full)
	if full.State != "DRAINING" || len(full.EnqueuedPullRequests) != 1 {
		t.Errorf("getQueue while draining: %+v", full)
	}
}

// ENUM_CASE=lower spells merge-queue enums in lowercase.
func TestLowerEnums(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(v map[string]string) { v["ENUM_CASE"] = "lower" })
	e.ok("createQueue", q(nil), nil)
	var qv struct {
		State       string `json:"state"`
		Mode        string `json:"mode"`
		MergeMethod string `json:"mergeMethod"`
	}
	e.ok("getQueue", q(nil), &qv)
	if diff := cmp.Diff(qv, struct {
		State       string `json:"state"`
		Mode        string `json:"mode"`
		MergeMethod string `json:"mergeMethod"`
	}{"running", "single", "squash"}); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

// TestSubmittedByBranchAndPaging reads submitted pull requests the two ways
// the golden files cannot (they have no GitHub to learn head branches
// from): getSubmittedPullRequest by branch, and listPullRequests page by
// page, one a page, until nextCursor runs out.
func TestSubmittedByBranchAndPaging(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(nil), nil)
	prs := []int{e.openPR("alpha"), e.openPR("beta"), e.openPR("gamma")}
	for _, n := range prs {
		e.ok("submitPullRequest", prq(n, nil), nil)
	}
	for i, branch := range []string{"alpha", "beta", "gamma"} {
		var got struct {
			PRNumber int    `json:"prNumber"`
			ID       string `json:"id"`
		}
		e.ok("getSubmittedPullRequest", q(map[string]any{"pr": map[string]any{"branch": branch}}), &got)
		if got.PRNumber != prs[i] || got.ID != e.pr(prs[i]).ID {
			t.Errorf("by branch %s: PR %d (%s), want %d (%s)", branch, got.PRNumber, got.ID, prs[i], e.pr(prs[i]).ID)
		}
	}
	if code, body := e.call("getSubmittedPullRequest", q(map[string]any{"pr": map[string]any{"branch": "delta"}})); code != 404 {
		t.Errorf("an unknown branch: %d %s, want 404", code, body)
	}

	var seen []int
	cursor := ""
	for page := 0; ; page++ {
		if page > len(prs) {
			t.Fatalf("more than %d pages for %d pull requests: %v", len(prs), len(prs), seen)
		}
		req := q(map[string]any{"take": 1})
		if cursor != "" {
			req["cursor"] = cursor
		}
		var got struct {
			PullRequests []struct {
				PRNumber int `json:"prNumber"`
			} `json:"pullRequests"`
			NextCursor string `json:"nextCursor"`
		}
		e.ok("listPullRequests", req, &got)
		if len(got.PullRequests) > 1 {
			t.Fatalf("page %d holds %d pull requests, take was 1", page, len(got.PullRequests))
		}
		for _, p := range got.PullRequests {
			seen = append(seen, p.PRNumber)
		}
		if got.NextCursor == "" {
			break
		}
		cursor = got.NextCursor
	}
	if diff := cmp.Diff(seen, prs); diff != "" {
		t.Errorf("pages (-got +want):\n%s", diff)
	}
}

// faultyEvidence is the store with the evidence lookup failing while down
// is set: DynamoDB throttling or unreachable mid-step.
type faultyEvidence struct {
	queuesvc.Store
	down *atomic.Bool
}

func (f faultyEvidence) TestBranchUploads(ctx context.Context, org string, repo repository.Ref, sha string, since time.Time) ([]store.Upload, error) {
	if f.down.Load() {
		return nil, errs.E(errs.Unavailable, "the store is busy")
	}
	return f.Store.TestBranchUploads(ctx, org, repo, sha, since)
}

// TestEvidenceLookupFaultDecidesNothing: while the evidence lookup fails,
// a PR whose run failed stays TESTING however long the grace period has
// passed (no ejection on a half-read); once the store answers, the next
// tick decides (no upload came: the PR fails, with no retry).
func TestEvidenceLookupFaultDecidesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	down := &atomic.Bool{}
	d := e.App.MergeQueue.Driver
	d.Store = faultyEvidence{Store: d.Store, down: down}
	e.ok("createQueue", q(nil), nil)
	e.ok("updateQueue", q(map[string]any{"flakyRetries": 1, "flakyEvidenceWaitSeconds": 60}), nil)
	a := e.openPR("a")
	e.ok("submitPullRequest", prq(a, nil), nil)
	e.until(e.testing(a))
	down.Store(true)
	e.ci("a.txt")
	for range 3 {
		e.tick()
	}
	if got := e.pr(a); got.State != "TESTING" {
		t.Fatalf("with the evidence lookup failing for 3 minutes, PR is %s, want TESTING", got.State)
	}
	down.Store(false)
	e.tick()
	if got := e.pr(a); got.State != "FAILED" || got.FlakyRetriesUsed != 0 {
		t.Errorf("after the store came back: %s after %d retries, want FAILED after 0", got.State, got.FlakyRetriesUsed)
	}
}
