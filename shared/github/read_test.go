package github_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/github/githubsim"
)

func TestPullRequestMergeability(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(t *testing.T, f *fixture, n int)
		want  func(p github.PullRequest) github.PullRequest
	}{
		{"open and clean", func(*testing.T, *fixture, int) {}, func(p github.PullRequest) github.PullRequest {
			p.Mergeability = github.Mergeable
			return p
		}},
		{"conflicting", func(t *testing.T, f *fixture, n int) {
			if _, err := f.sim.CommitFile(fullName, "main", "a.txt", "other\n", "Conflict"); err != nil {
				t.Fatal(err)
			}
		}, func(p github.PullRequest) github.PullRequest {
			p.Mergeability = github.NotMergeable
			return p
		}},
		{"still computing", func(t *testing.T, f *fixture, n int) {
			if err := f.sim.SetMergeableUnknown(fullName, n, true); err != nil {
				t.Fatal(err)
			}
		}, func(p github.PullRequest) github.PullRequest {
			p.Mergeability = github.InProgress
			return p
		}},
		{"draft", func(t *testing.T, f *fixture, n int) {
			if err := f.sim.ConvertToDraft(fullName, n); err != nil {
				t.Fatal(err)
			}
		}, func(p github.PullRequest) github.PullRequest {
			p.Draft, p.Mergeability = true, github.Mergeable
			return p
		}},
		{"closed", func(t *testing.T, f *fixture, n int) {
			if err := f.sim.ClosePR(fullName, n); err != nil {
				t.Fatal(err)
			}
		}, func(p github.PullRequest) github.PullRequest {
			p.Open, p.Mergeability = false, github.Unspecified
			return p
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			n, head := f.openPR(t, "feature", "a.txt", "a\n")
			tc.setup(t, f, n)
			want := tc.want(github.PullRequest{
				Number: n, Title: "Title of feature", Author: "octocat", HeadSHA: head, HeadRef: "feature", BaseRef: "main", Open: true,
			})
			// GitHub computes mergeability after the first read of a
			// change: that read says IN_PROGRESS, the next one knows.
			first := want
			if first.Open {
				first.Mergeability = github.InProgress
			}
			for i, want := range []github.PullRequest{first, want} {
				got, err := f.c.PullRequest(context.Background(), repo, n)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(got, want); diff != "" {
					t.Errorf("read %d (-got +want):\n%s", i+1, diff)
				}
			}
		})
	}
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.c.PullRequest(ctx, repo, 99)
	if !errs.Is(err, errs.NotFound) {
		t.Errorf("unknown pull request: got %v, want not found", err)
	}
	_, err = f.c.BranchHead(ctx, repo, "nope")
	if !errs.Is(err, errs.NotFound) {
		t.Errorf("unknown branch: got %v, want not found", err)
	}
	if retry, _ := github.Retryable(err); retry {
		t.Error("404 is retryable")
	}
	if _, err := f.c.BranchHead(ctx, github.Repo{Owner: "acme"}, "main"); !errs.Is(err, errs.Invalid) {
		t.Errorf("incomplete repo: got %v, want invalid", err)
	}
}

// Required checks are classic protection's and those of every active
// ruleset that applies, the repository's and its organization's, with
// the App each is bound to, merged: each context and App once.
func TestRequiredChecks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	got, err := f.c.RequiredChecks(ctx, repo, "main")
	if err != nil || got != nil {
		t.Errorf("unprotected branch: got %v, %v; want none", got, err)
	}
	must(t, f.sim.SetRequiredStatusChecks(fullName, "main", []string{"ci/test", "lint"}))
	got, err = f.c.RequiredChecks(ctx, repo, "main")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, []github.RequiredCheck{{Context: "ci/test"}, {Context: "lint"}}); diff != "" {
		t.Errorf("classic protection (-got +want):\n%s", diff)
	}

	must(t, f.sim.SetBranchProtection(fullName, "main", &githubsim.Protection{Checks: []githubsim.RequiredCheck{{Context: "lint", AppID: githubsim.CIAppID}}}))
	for _, rs := range []githubsim.Ruleset{
		{Checks: []githubsim.RequiredCheck{{Context: "ci/test"}, {Context: "lint", AppID: githubsim.CIAppID}}},
		{Include: []string{"refs/heads/release/*"}, Checks: []githubsim.RequiredCheck{{Context: "release-only"}}},
		{Enforcement: "evaluate", Checks: []githubsim.RequiredCheck{{Context: "evaluated"}}},
	} {
		if _, err := f.sim.AddRuleset(fullName, rs); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.sim.AddOrgRuleset("acme", githubsim.Ruleset{Include: []string{"~ALL"}, Checks: []githubsim.RequiredCheck{{Context: "security", AppID: 77}}, NoDeletion: true}); err != nil {
		t.Fatal(err)
	}
	got, err = f.c.RequiredChecks(ctx, repo, "main")
	if err != nil {
		t.Fatal(err)
	}
	want := []github.RequiredCheck{{Context: "lint", AppID: githubsim.CIAppID}, {Context: "ci/test"}, {Context: "security", AppID: 77}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("protection and rulesets (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(github.Contexts(got), []string{"lint", "ci/test", "security"}); diff != "" {
		t.Errorf("contexts (-got +want):\n%s", diff)
	}
	// Only the organization's rules apply to another branch, existing or
	// not.
	got, err = f.c.RequiredChecks(ctx, repo, "no-such-branch")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, []github.RequiredCheck{{Context: "security", AppID: 77}}); diff != "" {
		t.Errorf("another branch (-got +want):\n%s", diff)
	}
}

// A check bound to an App is satisfied by that App's status or check run
// only: the App behind a status is its creator's; the same name from
// another App, or from a person's token, is not the required check.
func TestChecksFromRequiredApps(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.sim.AddApp(77, "other-ci")
	must(t, f.sim.SetStatusFrom(77, fullName, f.base, "ci", "success", "", ""))
	must(t, f.sim.SetStatus(fullName, f.base, "lint", "success", "", ""))
	must(t, f.sim.SetCheckRunFrom(77, fullName, f.base, "build", "completed", "success", ""))
	must(t, f.sim.SetCheckRun(fullName, f.base, "build", "completed", "failure", ""))
	must(t, f.c.SetStatus(ctx, repo, f.base, "mine", "success", "", ""))
	checks, err := f.c.Checks(ctx, repo, f.base)
	if err != nil {
		t.Fatal(err)
	}
	apps := map[string]int64{}
	for _, c := range checks {
		apps[c.Kind+"/"+c.Name+"/"+c.State+c.Conclusion] = c.AppID
	}
	wantApps := map[string]int64{
		"status/ci/success": 77, "status/lint/success": githubsim.CIAppID, "status/mine/success": 0,
		"check_run/build/success": 77, "check_run/build/failure": githubsim.CIAppID,
	}
	if diff := cmp.Diff(apps, wantApps); diff != "" {
		t.Errorf("the Apps of the checks (-got +want):\n%s", diff)
	}
	required := []github.RequiredCheck{{Context: "ci", AppID: githubsim.CIAppID}, {Context: "build", AppID: 77}, {Context: "lint"}, {Context: "mine", AppID: 77}}
	var kept []string
	for _, c := range github.FromRequiredApps(required, checks) {
		kept = append(kept, c.Kind+"/"+c.Name+"/"+c.State+c.Conclusion)
	}
	if diff := cmp.Diff(kept, []string{"status/lint/success", "check_run/build/success"}, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("checks kept (-got +want):\n%s", diff)
	}
	// Each bot's App is asked for once.
	if _, err := f.c.Checks(ctx, repo, f.base); err != nil {
		t.Fatal(err)
	}
	if n := f.sim.RequestCount("GET", "/apps/"); n != 3 {
		t.Errorf("GET /apps/ asked %d times, want 3 (other-ci, github-actions, githubsim-app)", n)
	}
}

func TestChecksListsStatusesAndRunsAcrossPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	sha := f.base
	// More than one page (100) of each, so pagination is exercised.
	const n = 103
	var want []github.Check
	for i := range n {
		ctx := fmt.Sprintf("status-%03d", i)
		if err := f.sim.SetStatus(fullName, sha, ctx, "pending", "", ""); err != nil {
			t.Fatal(err)
		}
		// The latest status of a context replaces the earlier ones.
		if err := f.sim.SetStatus(fullName, sha, ctx, "success", "ok", "https://ci/"+ctx); err != nil {
			t.Fatal(err)
		}
		want = append(want, github.Check{Kind: github.KindStatus, Name: ctx, State: "success", URL: "https://ci/" + ctx, AppID: githubsim.CIAppID})
	}
	var runs []github.Check
	for i := range n {
		name := fmt.Sprintf("run-%03d", i)
		if err := f.sim.SetCheckRun(fullName, sha, name, "completed", "failure", "https://ci/"+name); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, github.Check{Kind: github.KindCheckRun, Name: name, Status: "completed", Conclusion: "failure", URL: "https://ci/" + name, AppID: githubsim.CIAppID})
	}
	// Check runs come newest first.
	for i := len(runs) - 1; i >= 0; i-- {
		want = append(want, runs[i])
	}
	got, err := f.c.Checks(context.Background(), repo, sha)
	if err != nil {
		t.Fatal(err)
	}
	// Each result has its own id (GitHub's numbering is its own): a
	// retry tells a new result from an old one by it.
	ids := map[int64]bool{}
	for i := range got {
		if got[i].ID == 0 || ids[got[i].ID] {
			t.Errorf("%s: id %d is missing or repeated", got[i].Name, got[i].ID)
		}
		ids[got[i].ID] = true
		got[i].ID = 0
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

func TestEvaluate(t *testing.T) {
	t.Parallel()
	status := func(name, state string) github.Check {
		return github.Check{Kind: github.KindStatus, Name: name, State: state}
	}
	run := func(name, st, concl string) github.Check {
		return github.Check{Kind: github.KindCheckRun, Name: name, Status: st, Conclusion: concl}
	}
	cases := []struct {
		name     string
		required []string
		checks   []github.Check
		want     github.Evaluation
	}{
		{"all passed", []string{"a", "b"}, []github.Check{status("a", "success"), run("b", "completed", "success")},
			github.Evaluation{Verdict: github.Passed}},
		{"neutral and skipped pass", []string{"a", "b"}, []github.Check{run("a", "completed", "neutral"), run("b", "completed", "skipped")},
			github.Evaluation{Verdict: github.Passed}},
		{"one missing", []string{"a", "b"}, []github.Check{status("a", "success")},
			github.Evaluation{Verdict: github.Pending, Waiting: []string{"b"}}},
		{"in progress", []string{"a"}, []github.Check{run("a", "in_progress", "")},
			github.Evaluation{Verdict: github.Pending, Waiting: []string{"a"}}},
		{"status pending", []string{"a"}, []github.Check{status("a", "pending")},
			github.Evaluation{Verdict: github.Pending, Waiting: []string{"a"}}},
		{"failure names the first required context that failed", []string{"a", "b", "c"},
			[]github.Check{status("a", "success"), status("c", "error"), run("b", "completed", "timed_out")},
			github.Evaluation{Verdict: github.Failed, Context: "b", State: "timed_out"}},
		{"failure while another pending", []string{"a", "b"}, []github.Check{status("b", "failure")},
			github.Evaluation{Verdict: github.Failed, Context: "b", State: "failure"}},
		{"cancelled", []string{"a"}, []github.Check{run("a", "completed", "cancelled")},
			github.Evaluation{Verdict: github.Failed, Context: "a", State: "cancelled"}},
		{"action required", []string{"a"}, []github.Check{run("a", "completed", "action_required")},
			github.Evaluation{Verdict: github.Failed, Context: "a", State: "action_required"}},
		{"failure beats success of the same name", []string{"a"}, []github.Check{status("a", "success"), run("a", "completed", "failure")},
			github.Evaluation{Verdict: github.Failed, Context: "a", State: "failure"}},
		{"unrequired failure ignored", []string{"a"}, []github.Check{status("a", "success"), status("x", "failure")},
			github.Evaluation{Verdict: github.Passed}},
		{"nothing required", nil, []github.Check{status("a", "success")},
			github.Evaluation{Verdict: github.Pending}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(github.Evaluate(tc.required, tc.checks), tc.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

func TestSetStatus(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	const name = "Trunk Merge Queue (main)"
	for _, state := range []string{github.StatePending, github.StateSuccess} {
		if err := f.c.SetStatus(ctx, repo, f.base, name, state, "queued", "https://mainguard/pr/1"); err != nil {
			t.Fatal(err)
		}
	}
	got, err := f.c.Checks(ctx, repo, f.base)
	if err != nil {
		t.Fatal(err)
	}
	want := []github.Check{{Kind: github.KindStatus, Name: name, State: "success", URL: "https://mainguard/pr/1"}}
	if diff := cmp.Diff(got, want, cmpopts.IgnoreFields(github.Check{}, "ID")); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
	if err := f.c.SetStatus(ctx, repo, f.base, name, "done", "", ""); !errs.Is(err, errs.Invalid) {
		t.Errorf("bad state: got %v, want invalid", err)
	}
}

// A status's description and context are cut to GitHub's limits (140 and
// 255 characters), the same way each time so that a repeated status
// replaces the last one; GitHub would refuse them whole (422).
func TestSetStatusWithinGitHubsLimits(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	name := "Trunk Merge Queue (release/" + strings.Repeat("é", 250) + ")"
	for _, state := range []string{github.StatePending, github.StateFailure} {
		if err := f.c.SetStatus(ctx, repo, f.base, name, state, strings.Repeat("d", 200), ""); err != nil {
			t.Fatalf("%s: %v", state, err)
		}
	}
	got, err := f.c.Checks(ctx, repo, f.base)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].State != github.StateFailure || len([]rune(got[0].Name)) != 255 || !strings.HasPrefix(got[0].Name, "Trunk Merge Queue (release/éé") {
		t.Errorf("statuses: %+v, want one failure, its context cut to 255 characters", got)
	}
}

// TestUpToDate: a branch made from main's head is up to date with it until
// main moves; main is not up to date with the branch's extra commit.
func TestUpToDate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	_, head := f.openPR(t, "feature", "f.txt", "f\n")
	check := func(base, h string, want bool) {
		t.Helper()
		got, err := f.c.UpToDate(ctx, repo, base, h)
		if err != nil || got != want {
			t.Errorf("UpToDate(%s, %s) = %v %v, want %v", base, h, got, err, want)
		}
	}
	check("main", head, true)
	check(head, "main", false)
	if _, err := f.sim.CommitFile(fullName, "main", "m.txt", "m\n", "Move main"); err != nil {
		t.Fatal(err)
	}
	check("main", head, false)
	if _, err := f.c.UpToDate(ctx, repo, "main", "no-such-branch"); !errs.Is(err, errs.NotFound) {
		t.Errorf("unknown head: %v, want NotFound", err)
	}
}
