package github_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/github/githubsim"
)

func TestRetryableClassifiesEachFault(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		kind      githubsim.FaultKind
		wait      time.Duration // announced by the fault
		wantAfter time.Duration
	}{
		{"500", githubsim.FaultServerError, 0, 0},
		{"502", githubsim.FaultBadGateway, 0, 0},
		{"primary rate limit 403", githubsim.FaultRateLimit, 90 * time.Second, 90 * time.Second},
		{"secondary rate limit 403", githubsim.FaultSecondaryRateLimit, 30 * time.Second, 30 * time.Second},
		{"secondary rate limit 429", githubsim.FaultSecondaryRateLimit429, 30 * time.Second, 30 * time.Second},
		{"hang until timeout", githubsim.FaultHang, 0, 0},
		{"lost response", githubsim.FaultLoseResponse, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A short per-call timeout for the hanging request, which is cut
			// by it; a patient one otherwise, so that a busy machine's slow
			// answer is not taken for a fault.
			timeout := time.Minute
			if tc.kind == githubsim.FaultHang {
				timeout = 300 * time.Millisecond
			}
			f := newFixture(t, func(c *github.Config) { c.Timeout = timeout })
			f.sim.InjectFault(githubsim.Fault{Method: "GET", PathPrefix: "/repos/acme/app/git/ref/", Kind: tc.kind, RetryAfter: tc.wait})

			_, err := f.c.BranchHead(context.Background(), repo, "main")
			if err == nil {
				t.Fatal("no error")
			}
			retry, after := github.Retryable(err)
			if !retry || after != tc.wantAfter {
				t.Errorf("Retryable(%v) = %v, %v; want true, %v", err, retry, after, tc.wantAfter)
			}
			if !errs.Is(err, errs.Unavailable) {
				t.Errorf("code %s, want unavailable", errs.CodeOf(err))
			}
			// The fault is spent: the retry succeeds (with a patient client).
			patient, err := github.New(github.Config{BaseURL: f.sim.URL(), Token: "test-token", Now: f.clock.Now, Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if sha, err := patient.BranchHead(context.Background(), repo, "main"); err != nil || sha != f.base {
				t.Errorf("retry: %s, %v; want %s", sha, err, f.base)
			}
		})
	}
}

func TestRetryableNonRetryable(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	// Branch protection's 404 is "none", so use refs for a 404 and a 422.
	_, notFound := f.c.BranchHead(ctx, repo, "missing")
	_, invalid := f.c.BuildTestBranch(ctx, repo, "0000000000000000000000000000000000000000", nil, "t/x", "f/x")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, canceled := f.c.BranchHead(cancelled, repo, "main")
	bad, err := github.New(github.Config{BaseURL: f.sim.URL(), Token: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	_, unauthorized := bad.BranchHead(ctx, repo, "main")

	for name, err := range map[string]error{"404": notFound, "422": invalid, "cancelled": canceled, "401": unauthorized} {
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if retry, _ := github.Retryable(err); retry {
			t.Errorf("%s: %v is retryable", name, err)
		}
	}
	if !errs.Is(invalid, errs.Invalid) {
		t.Errorf("422: code %s, want invalid", errs.CodeOf(invalid))
	}
	if retry, _ := github.Retryable(nil); retry {
		t.Error("nil is retryable")
	}
}

func TestRetryableConnectionRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	url := f.sim.URL()
	f.sim.Close()
	c, err := github.New(github.Config{BaseURL: url, Token: "test-token"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.BranchHead(context.Background(), repo, "main")
	if retry, _ := github.Retryable(err); !retry {
		t.Errorf("connection refused: %v not retryable", err)
	}
	if errors.Is(err, context.Canceled) {
		t.Errorf("unexpected cancellation: %v", err)
	}
}

// After a rate limit, the client keeps its token's calls from GitHub
// until the time GitHub named (a secondary limit's retry-after, a primary
// limit's reset): they fail at once, retryable after what is left of the
// wait, and reach GitHub again once it has passed.
func TestRateLimitedTokenIsHeld(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		kind githubsim.FaultKind
	}{{"secondary", githubsim.FaultSecondaryRateLimit}, {"primary", githubsim.FaultRateLimit}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			ctx := context.Background()
			f.sim.InjectFault(githubsim.Fault{Method: "GET", PathPrefix: "/repos/acme/app/pulls/", Kind: tc.kind, RetryAfter: 90 * time.Second})
			if _, err := f.c.PullRequest(ctx, repo, 1); err == nil {
				t.Fatal("no error from the rate-limited call")
			}
			f.clock.Advance(30 * time.Second)
			before := f.sim.RequestCount("", "/")
			_, err := f.c.BranchHead(ctx, repo, "main") // another call, the same token
			if retry, after := github.Retryable(err); !retry || after != time.Minute {
				t.Errorf("held call: Retryable(%v) = %v, %v; want true, 1m0s", err, retry, after)
			}
			if n := f.sim.RequestCount("", "/") - before; n != 0 {
				t.Errorf("a held call reached GitHub (%d requests)", n)
			}
			f.clock.Advance(time.Minute)
			if sha, err := f.c.BranchHead(ctx, repo, "main"); err != nil || sha != f.base {
				t.Errorf("after the wait: %s, %v; want %s", sha, err, f.base)
			}
		})
	}
}
