package github_test

import (
	"testing"
	"time"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/github/githubsim"
)

// newClock is the clock shared by the sim and the client, so commit shas,
// token expiry and rate-limit waits are exact.
func newClock() *testkit.Clock {
	return testkit.NewClock(time.Date(2026, 7, 23, 1, 32, 50, 0, time.UTC))
}

const fullName = "acme/app"

var repo = github.Repo{Owner: "acme", Name: "app"}

type fixture struct {
	sim   *githubsim.Server
	c     *github.Client
	clock *testkit.Clock
	base  string // initial main sha
}

// newFixture starts a sim holding acme/app (main with one commit) and a
// token-authenticated client on it.
func newFixture(t *testing.T, opts ...func(*github.Config)) *fixture {
	return newFixtureTB(t, opts...)
}

// newFixtureTB is newFixture for tests and benchmarks alike.
func newFixtureTB(t testing.TB, opts ...func(*github.Config)) *fixture {
	t.Helper()
	clk := newClock()
	sim, err := githubsim.New(t.TempDir(), githubsim.Options{Now: clk.Now, Token: "test-token"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	base, err := sim.CreateRepo(fullName, "main")
	if err != nil {
		t.Fatal(err)
	}
	cfg := github.Config{BaseURL: sim.URL(), Token: "test-token", Now: clk.Now, Timeout: time.Minute}
	for _, o := range opts {
		o(&cfg)
	}
	c, err := github.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{sim: sim, c: c, clock: clk, base: base}
}

// openPR commits path=content on a new branch and opens a pull request.
func (f *fixture) openPR(t testing.TB, branch, path, content string) (int, string) {
	t.Helper()
	sha, err := f.sim.CommitFile(fullName, branch, path, content, "Change "+path+" on "+branch)
	if err != nil {
		t.Fatal(err)
	}
	n, err := f.sim.OpenPR(fullName, branch, "main", "Title of "+branch, "octocat")
	if err != nil {
		t.Fatal(err)
	}
	return n, sha
}

func (f *fixture) subjects(t *testing.T, branch string) []string {
	t.Helper()
	h, err := f.sim.History(fullName, branch)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(h))
	for i, c := range h {
		out[i] = c.Subject
	}
	return out
}

func (f *fixture) head(t *testing.T, branch string) string {
	t.Helper()
	sha, err := f.sim.BranchHead(fullName, branch)
	if err != nil {
		t.Fatal(err)
	}
	return sha
}
