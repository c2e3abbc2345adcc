package github_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/github/githubsim"
)

// twoCommitPR opens a pull request of two commits after main has moved, so
// every merge method has real work to do.
func twoCommitPR(t *testing.T, f *fixture) (int, string) {
	t.Helper()
	if _, err := f.sim.CommitFile(fullName, "feature", "a.txt", "a1\n", "First change"); err != nil {
		t.Fatal(err)
	}
	head, err := f.sim.CommitFile(fullName, "feature", "b.txt", "b1\n", "Second change")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.sim.CommitFile(fullName, "main", "c.txt", "c1\n", "Main moves on"); err != nil {
		t.Fatal(err)
	}
	n, err := f.sim.OpenPR(fullName, "feature", "main", "Add a and b", "octocat")
	if err != nil {
		t.Fatal(err)
	}
	return n, head
}

func TestMergeMethodsLeaveTheirHistory(t *testing.T) {
	t.Parallel()
	cases := []struct {
		method      github.MergeMethod
		subjects    []string
		headParents int
	}{
		{github.MergeCommit, []string{"Merge pull request #1 from acme/feature", "Main moves on", "Initial commit"}, 2},
		{github.Squash, []string{"Add a and b (#1)", "Main moves on", "Initial commit"}, 1},
		{github.Rebase, []string{"Second change", "First change", "Main moves on", "Initial commit"}, 1},
	}
	for _, tc := range cases {
		t.Run(string(tc.method), func(t *testing.T) {
			f := newFixture(t)
			n, head := twoCommitPR(t, f)

			sha, err := f.c.Merge(context.Background(), repo, n, head, tc.method)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.head(t, "main"); got != sha {
				t.Errorf("main at %s, merge returned %s", got, sha)
			}
			hist, err := f.sim.History(fullName, "main")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(f.subjects(t, "main"), tc.subjects); diff != "" {
				t.Errorf("main history (-got +want):\n%s", diff)
			}
			if got := len(hist[0].Parents); got != tc.headParents {
				t.Errorf("head commit has %d parents, want %d", got, tc.headParents)
			}
			for path, want := range map[string]string{"a.txt": "a1\n", "b.txt": "b1\n", "c.txt": "c1\n"} {
				if got, err := f.sim.FileAt(fullName, "main", path); err != nil || got != want {
					t.Errorf("main:%s = %q, %v; want %q", path, got, err, want)
				}
			}
			pr, err := f.c.PullRequest(context.Background(), repo, n)
			if err != nil {
				t.Fatal(err)
			}
			want := github.PullRequest{
				Number: n, Title: "Add a and b", Author: "octocat", HeadSHA: head, HeadRef: "feature", BaseRef: "main",
				Merged: true, MergeCommitSHA: sha, Mergeability: github.Unspecified,
			}
			if diff := cmp.Diff(pr, want); diff != "" {
				t.Errorf("pull request after merge (-got +want):\n%s", diff)
			}
		})
	}
}

// The first merge call does its work but its answer is lost; the retry must
// report the same merge, not fail on "not mergeable", and not merge twice.
func TestMergeRetriedAfterLostResponse(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	n, head := twoCommitPR(t, f)
	f.sim.InjectFault(githubsim.Fault{Method: "PUT", PathPrefix: "/repos/acme/app/pulls/1/merge", Kind: githubsim.FaultLoseResponse})

	_, err := f.c.Merge(context.Background(), repo, n, head, github.Squash)
	if retry, _ := github.Retryable(err); !retry {
		t.Fatalf("first attempt: got %v, want a retryable error", err)
	}
	sha, err := f.c.Merge(context.Background(), repo, n, head, github.Squash)
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	if got := f.head(t, "main"); got != sha {
		t.Errorf("retry returned %s, main at %s", sha, got)
	}
	want := []string{"Add a and b (#1)", "Main moves on", "Initial commit"}
	if diff := cmp.Diff(f.subjects(t, "main"), want); diff != "" {
		t.Errorf("main history (-got +want):\n%s", diff)
	}
}

func TestMergeRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(t *testing.T, f *fixture, n int) // after the PR is open
		want  error
	}{
		{"head pushed after testing", func(t *testing.T, f *fixture, n int) {
			if _, err := f.sim.PushPR(fullName, n, "late.txt", "late\n", "Late push"); err != nil {
				t.Fatal(err)
			}
		}, github.ErrHeadChanged},
		{"conflict with base", func(t *testing.T, f *fixture, n int) {
			if _, err := f.sim.CommitFile(fullName, "main", "b.txt", "other\n", "Conflicting change"); err != nil {
				t.Fatal(err)
			}
		}, github.ErrNotMergeable},
		{"draft", func(t *testing.T, f *fixture, n int) {
			if err := f.sim.ConvertToDraft(fullName, n); err != nil {
				t.Fatal(err)
			}
		}, github.ErrNotMergeable},
		{"closed", func(t *testing.T, f *fixture, n int) {
			if err := f.sim.ClosePR(fullName, n); err != nil {
				t.Fatal(err)
			}
		}, github.ErrNotMergeable},
		{"merged by hand at another head", func(t *testing.T, f *fixture, n int) {
			if _, err := f.sim.PushPR(fullName, n, "late.txt", "late\n", "Late push"); err != nil {
				t.Fatal(err)
			}
			if _, err := f.sim.MergePR(fullName, n, githubsim.MethodMerge); err != nil {
				t.Fatal(err)
			}
		}, github.ErrHeadChanged},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			n, head := twoCommitPR(t, f)
			tc.setup(t, f, n)
			before := f.head(t, "main")

			_, err := f.c.Merge(context.Background(), repo, n, head, github.MergeCommit)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if !errs.Is(err, errs.Conflict) {
				t.Errorf("code %s, want conflict", errs.CodeOf(err))
			}
			if retry, _ := github.Retryable(err); retry {
				t.Error("refusal is retryable")
			}
			if got := f.head(t, "main"); got != before {
				t.Errorf("main moved from %s to %s", before, got)
			}
		})
	}
}

func TestMergeRejectsUnknownMethod(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, err := f.c.Merge(context.Background(), repo, 1, f.base, "FAST_FORWARD")
	if !errs.Is(err, errs.Invalid) {
		t.Errorf("got %v, want invalid", err)
	}
}

// GitHub answers 405 "Base branch was modified" when the base moves during a
// merge; that one is worth retrying, unlike the other 405s.
func TestMergeBaseModifiedIsRetryable(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPut {
			w.WriteHeader(http.StatusMethodNotAllowed)
			io.WriteString(w, `{"message":"Base branch was modified. Review and try the merge again.","documentation_url":"https://docs.github.com/rest"}`)
			return
		}
		io.WriteString(w, `{"number":1,"state":"open","merged":false,"head":{"sha":"abc","ref":"f"},"base":{"ref":"main"}}`)
	}))
	t.Cleanup(srv.Close)
	c, err := github.New(github.Config{BaseURL: srv.URL, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Merge(context.Background(), repo, 1, "abc", github.Squash)
	if retry, _ := github.Retryable(err); !retry {
		t.Errorf("got %v, want retryable", err)
	}
}
