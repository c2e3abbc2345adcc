package github_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/github"
)

// TestCheckRunsAsAnApp: the App creates a check run, finds it again by
// name (its own only), and edits it in place; the simulated GitHub keeps
// one run, with the new output. A personal token cannot create one, and
// the App cannot edit the CI's.
func TestCheckRunsAsAnApp(t *testing.T) {
	t.Parallel()
	key := newKey(t)
	sim, clk, base := appFixture(t, &key.PublicKey)
	c, err := github.New(github.Config{BaseURL: sim.URL(), App: &github.AppCredentials{AppID: 42, PrivateKey: key}, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, found, err := c.FindCheckRun(ctx, repo, base, "mainguard/tests"); err != nil || found {
		t.Fatalf("FindCheckRun before any: %v %v", found, err)
	}
	// The CI's run of the same name is not the App's.
	if err := sim.SetCheckRun(fullName, base, "mainguard/tests", "completed", "success", ""); err != nil {
		t.Fatal(err)
	}
	run := github.CheckRun{Name: "mainguard/tests", HeadSHA: base, DetailsURL: "https://app.example/acme/uploads/u1",
		Conclusion: "failure", Title: "1 new failure", Summary: "### New\n- `test_login`"}
	id, err := c.CreateCheckRun(ctx, repo, run)
	if err != nil {
		t.Fatal(err)
	}
	got, found, err := c.FindCheckRun(ctx, repo, base, "mainguard/tests")
	if err != nil || !found || got != id {
		t.Fatalf("FindCheckRun = %d %v %v, want %d", got, found, err, id)
	}
	run.Conclusion, run.Title, run.Summary = "success", "No failure left", "1 test passed on retry"
	if err := c.UpdateCheckRun(ctx, repo, id, run); err != nil {
		t.Fatal(err)
	}
	runs, _ := sim.CheckRuns(fullName, base)
	var ours []string
	for _, r := range runs {
		if r.AppID == 42 {
			ours = append(ours, r.Conclusion+" "+r.Title+": "+r.Summary+" "+r.DetailsURL)
		}
	}
	if len(ours) != 1 || ours[0] != "success No failure left: 1 test passed on retry https://app.example/acme/uploads/u1" {
		t.Errorf("the App's check runs: %q", ours)
	}
	for _, r := range runs {
		if r.AppID == 0 {
			if err := c.UpdateCheckRun(ctx, repo, r.ID, run); err == nil || !strings.Contains(err.Error(), "403") {
				t.Errorf("editing the CI's check run: %v, want GitHub's 403", err)
			}
		}
	}
	if err := c.UpdateCheckRun(ctx, repo, 999999, run); !errs.Is(err, errs.NotFound) {
		t.Errorf("editing a check run that is not there: %v, want not found", err)
	}
}

// TestCheckRunsNeedAnApp: GitHub lets only Apps write check runs; a
// personal token (the sim's static token) is refused with 403.
func TestCheckRunsNeedAnApp(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, err := f.c.CreateCheckRun(context.Background(), repo, github.CheckRun{Name: "mainguard/tests", HeadSHA: f.base, Conclusion: "success", Title: "t", Summary: "s"})
	if err == nil || !strings.Contains(err.Error(), "403 You must authenticate via a GitHub App.") {
		t.Errorf("a personal token creating a check run: %v", err)
	}
	if runs, _ := f.sim.CheckRuns(fullName, f.base); len(runs) != 0 {
		t.Errorf("check runs made: %v", runs)
	}
}
