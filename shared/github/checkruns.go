package github

import (
	"context"
	"fmt"

	gh "github.com/google/go-github/v92/github"
)

// CheckRun is a check run as the service posts it on a commit: completed,
// with its conclusion and its output (GitHub shows the title beside the
// check and the summary, Markdown, on its page).
type CheckRun struct {
	Name       string
	HeadSHA    string
	DetailsURL string
	ExternalID string
	Conclusion string // success, failure, neutral
	Title      string
	Summary    string
}

// MaxCheckRunSummary is the longest summary GitHub takes, in characters.
const MaxCheckRunSummary = 65535

func (r CheckRun) output() *gh.CheckRunOutput {
	return &gh.CheckRunOutput{Title: new(r.Title), Summary: new(r.Summary)}
}

// CreateCheckRun creates a completed check run and returns its id. Only a
// GitHub App may create check runs (with the checks: write permission);
// GitHub refuses a personal token with 403. Not idempotent: callers make
// it so (FindCheckRun first).
func (c *Client) CreateCheckRun(ctx context.Context, repo Repo, r CheckRun) (int64, error) {
	if err := checkRepo(repo); err != nil {
		return 0, err
	}
	now := gh.Timestamp{Time: c.now().UTC()}
	opt := gh.CreateCheckRunOptions{
		Name: r.Name, HeadSHA: r.HeadSHA, Status: new("completed"), Conclusion: new(r.Conclusion),
		CompletedAt: &now, Output: r.output(),
	}
	if r.DetailsURL != "" {
		opt.DetailsURL = new(r.DetailsURL)
	}
	if r.ExternalID != "" {
		opt.ExternalID = new(r.ExternalID)
	}
	run, _, err := c.gh.Checks.CreateCheckRun(forRepo(ctx, repo), repo.Owner, repo.Name, opt)
	if err != nil {
		return 0, c.wrap(err, fmt.Sprintf("create check run %q", r.Name))
	}
	return run.GetID(), nil
}

// UpdateCheckRun replaces a check run's conclusion, details and output; a
// check run that is gone is errs.NotFound. Repeating it is harmless.
func (c *Client) UpdateCheckRun(ctx context.Context, repo Repo, id int64, r CheckRun) error {
	if err := checkRepo(repo); err != nil {
		return err
	}
	now := gh.Timestamp{Time: c.now().UTC()}
	opt := gh.UpdateCheckRunOptions{
		Name: r.Name, Status: new("completed"), Conclusion: new(r.Conclusion), CompletedAt: &now, Output: r.output(),
	}
	if r.DetailsURL != "" {
		opt.DetailsURL = new(r.DetailsURL)
	}
	if r.ExternalID != "" {
		opt.ExternalID = new(r.ExternalID)
	}
	_, _, err := c.gh.Checks.UpdateCheckRun(forRepo(ctx, repo), repo.Owner, repo.Name, id, opt)
	return c.wrap(err, fmt.Sprintf("update check run %d", id))
}

// FindCheckRun returns the id of the newest check run named name on sha
// that this client's GitHub App made (any app's, with a token); found is
// false when there is none.
func (c *Client) FindCheckRun(ctx context.Context, repo Repo, sha, name string) (id int64, found bool, err error) {
	if err := checkRepo(repo); err != nil {
		return 0, false, err
	}
	opt := &gh.ListCheckRunsOptions{CheckName: new(name), Filter: new("all"), ListOptions: gh.ListOptions{PerPage: 100}}
	if a, ok := c.auth.(*appAuth); ok {
		creds, err := a.source(ctx, false)
		if err != nil {
			return 0, false, c.wrap(err, fmt.Sprintf("list check runs %q", name))
		}
		opt.AppID = new(creds.AppID)
	}
	res, _, err := c.gh.Checks.ListCheckRunsForRef(forRepo(ctx, repo), repo.Owner, repo.Name, sha, opt)
	if err != nil {
		return 0, false, c.wrap(err, fmt.Sprintf("list check runs %q", name))
	}
	// GitHub lists the newest first.
	for _, r := range res.CheckRuns {
		if r.GetName() == name {
			return r.GetID(), true, nil
		}
	}
	return 0, false, nil
}
