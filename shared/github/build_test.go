package github_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/github/githubsim"
)

const (
	tempBranch  = "trunk-temp/pr-2/0f1e2d3c"
	finalBranch = "trunk-merge/pr-2/0f1e2d3c"
)

func TestBuildTestBranchMergesHeadsInOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	n1, sha1 := f.openPR(t, "feature-a", "a.txt", "a\n")
	n2, sha2 := f.openPR(t, "feature-b", "b.txt", "b\n")
	// main moves on after the PRs branched: the test branch is built on it.
	base, err := f.sim.CommitFile(fullName, "main", "c.txt", "c\n", "Unrelated change on main")
	if err != nil {
		t.Fatal(err)
	}

	got, err := f.c.BuildTestBranch(context.Background(), repo, base, []github.Head{{PR: n1, SHA: sha1}, {PR: n2, SHA: sha2}}, tempBranch, finalBranch)
	if err != nil {
		t.Fatal(err)
	}
	if head := f.head(t, finalBranch); got != head {
		t.Errorf("returned sha %s, final branch at %s", got, head)
	}
	if head := f.head(t, tempBranch); head != "" {
		t.Errorf("temporary branch left at %s", head)
	}
	wantSubjects := []string{
		"Merge pull request #2 (" + sha2[:7] + ") into " + tempBranch,
		"Merge pull request #1 (" + sha1[:7] + ") into " + tempBranch,
		"Unrelated change on main",
		"Initial commit",
	}
	if diff := cmp.Diff(f.subjects(t, finalBranch), wantSubjects); diff != "" {
		t.Errorf("test branch history (-got +want):\n%s", diff)
	}
	for _, path := range []string{"a.txt", "b.txt", "c.txt"} {
		if _, err := f.sim.FileAt(fullName, got, path); err != nil {
			t.Errorf("test branch lacks %s: %v", path, err)
		}
	}
	if head := f.head(t, "main"); head != base {
		t.Errorf("main moved to %s while building a test branch", head)
	}
}

func TestBuildTestBranchConflictNamesThePR(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	n1, sha1 := f.openPR(t, "feature-a", "same.txt", "one\n")
	n2, sha2 := f.openPR(t, "feature-b", "same.txt", "two\n")

	_, err := f.c.BuildTestBranch(context.Background(), repo, f.base, []github.Head{{PR: n1, SHA: sha1}, {PR: n2, SHA: sha2}}, tempBranch, finalBranch)
	var ce *github.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a ConflictError", err)
	}
	if diff := cmp.Diff(*ce, github.ConflictError{PR: n2, SHA: sha2}); diff != "" {
		t.Errorf("conflict (-got +want):\n%s", diff)
	}
	if !errs.Is(err, errs.Conflict) {
		t.Errorf("code %s, want conflict", errs.CodeOf(err))
	}
	if retry, _ := github.Retryable(err); retry {
		t.Error("a merge conflict is retryable")
	}
	branches, err := f.sim.Branches(fullName)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(branches, []string{"feature-a", "feature-b", "main"}); diff != "" {
		t.Errorf("branches after a conflict (-got +want):\n%s", diff)
	}
}

func TestBuildTestBranchHeadAlreadyInBase(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	n1, sha1 := f.openPR(t, "feature-a", "a.txt", "a\n")
	// The head is already contained in the base: /merges answers 204.
	got, err := f.c.BuildTestBranch(context.Background(), repo, sha1, []github.Head{{PR: n1, SHA: sha1}}, tempBranch, finalBranch)
	if err != nil {
		t.Fatal(err)
	}
	if got != sha1 {
		t.Errorf("got %s, want the base %s itself", got, sha1)
	}
}

// Every step of a build may lose its answer after doing its work; the
// driver then calls BuildTestBranch again with the same names, and must get
// one correct test branch and no leftovers.
func TestBuildTestBranchRetriedAfterLostResponse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		fault githubsim.Fault
	}{
		{"create temp ref", githubsim.Fault{Method: "POST", PathPrefix: "/repos/acme/app/git/refs"}},
		{"first merge", githubsim.Fault{Method: "POST", PathPrefix: "/repos/acme/app/merges"}},
		{"second merge", githubsim.Fault{Method: "POST", PathPrefix: "/repos/acme/app/merges", Skip: 1}},
		{"publish final ref", githubsim.Fault{Method: "POST", PathPrefix: "/repos/acme/app/git/refs", Skip: 1}},
		{"delete temp ref", githubsim.Fault{Method: "DELETE", PathPrefix: "/repos/acme/app/git/refs"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			n1, sha1 := f.openPR(t, "feature-a", "a.txt", "a\n")
			n2, sha2 := f.openPR(t, "feature-b", "b.txt", "b\n")
			heads := []github.Head{{PR: n1, SHA: sha1}, {PR: n2, SHA: sha2}}
			tc.fault.Kind = githubsim.FaultLoseResponse
			f.sim.InjectFault(tc.fault)

			_, err := f.c.BuildTestBranch(context.Background(), repo, f.base, heads, tempBranch, finalBranch)
			if retry, _ := github.Retryable(err); err == nil || !retry {
				t.Fatalf("first attempt: got %v, want a retryable error", err)
			}
			got, err := f.c.BuildTestBranch(context.Background(), repo, f.base, heads, tempBranch, finalBranch)
			if err != nil {
				t.Fatalf("retry: %v", err)
			}
			if head := f.head(t, finalBranch); got != head {
				t.Errorf("returned %s, final branch at %s", got, head)
			}
			if head := f.head(t, tempBranch); head != "" {
				t.Errorf("temporary branch left at %s", head)
			}
			want := []string{
				"Merge pull request #2 (" + sha2[:7] + ") into " + tempBranch,
				"Merge pull request #1 (" + sha1[:7] + ") into " + tempBranch,
				"Initial commit",
			}
			if diff := cmp.Diff(f.subjects(t, finalBranch), want); diff != "" {
				t.Errorf("history (-got +want):\n%s", diff)
			}
		})
	}
}

func TestDeleteBranchIsIdempotent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.sim.CreateBranch(fullName, "gone", "main"); err != nil {
		t.Fatal(err)
	}
	f.sim.InjectFault(githubsim.Fault{Method: "DELETE", Kind: githubsim.FaultLoseResponse})
	if err := f.c.DeleteBranch(ctx, repo, "gone"); err == nil {
		t.Fatal("lost response: no error")
	}
	if head := f.head(t, "gone"); head != "" {
		t.Fatalf("branch still at %s after the lost delete", head)
	}
	for i := range 2 {
		if err := f.c.DeleteBranch(ctx, repo, "gone"); err != nil {
			t.Errorf("delete #%d of a deleted branch: %v", i+2, err)
		}
	}
}

// TestPointTestBranchReusesACommit: a flaky retry's test branch points at
// the commit a failed run built, even after that run's branch was deleted;
// repeating is harmless; a commit that does not exist is errs.NotFound.
func TestPointTestBranchReusesACommit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	n1, sha1 := f.openPR(t, "feature-a", "a.txt", "a\n")
	base := f.head(t, "main")
	built, err := f.c.BuildTestBranch(ctx, repo, base, []github.Head{{PR: n1, SHA: sha1}}, tempBranch, finalBranch)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.c.DeleteBranch(ctx, repo, finalBranch); err != nil {
		t.Fatal(err)
	}
	const retry = "trunk-merge/pr-1/retry"
	for range 2 {
		if err := f.c.PointTestBranch(ctx, repo, built, retry); err != nil {
			t.Fatal(err)
		}
	}
	if head := f.head(t, retry); head != built {
		t.Errorf("retry branch at %s, want the failed run's head %s", head, built)
	}
	err = f.c.PointTestBranch(ctx, repo, "0123456789abcdef0123456789abcdef01234567", "trunk-merge/pr-1/gone")
	if !errs.Is(err, errs.NotFound) {
		t.Errorf("pointing at a missing commit: %v, want NotFound", err)
	}
}
