package github

import (
	"context"

	gh "github.com/google/go-github/v92/github"
)

// Check kinds.
const (
	KindStatus   = "status"
	KindCheckRun = "check_run"
)

// Check is one commit status or check run on a commit.
type Check struct {
	Kind string // KindStatus or KindCheckRun
	// Name is the status context or the check run name: what a required
	// status names.
	Name string
	// State is a commit status's state (pending, success, failure, error).
	State string
	// Status and Conclusion are a check run's (queued, in_progress,
	// completed; success, failure, neutral, cancelled, skipped, timed_out,
	// action_required, stale).
	Status     string
	Conclusion string
	URL        string
	// ID is GitHub's id of the status or check run: a new result on the
	// same commit has a new one.
	ID int64
	// AppID is the GitHub App that provided it: a check run's app, a
	// status's creator's App when the creator is an App's bot; 0 when
	// none (a person's token) or none could be told.
	AppID int64
}

// Checks lists every commit status (the latest per context, from the
// combined status) and every check run (the latest per name and App) on
// sha, following pagination, each with the App that provided it.
func (c *Client) Checks(ctx context.Context, repo Repo, sha string) ([]Check, error) {
	if err := checkRepo(repo); err != nil {
		return nil, err
	}
	ctx = forRepo(ctx, repo)
	var out []Check
	opt := &gh.ListOptions{PerPage: 100}
	for {
		cs, resp, err := c.gh.Repositories.GetCombinedStatus(ctx, repo.Owner, repo.Name, sha, opt)
		if err != nil {
			return nil, c.wrap(err, "get combined status")
		}
		for _, s := range cs.Statuses {
			var app int64
			if u := s.GetCreator(); u.GetType() == "Bot" {
				if app, err = c.botApp(ctx, u.GetLogin()); err != nil {
					return nil, err
				}
			}
			out = append(out, Check{Kind: KindStatus, Name: s.GetContext(), State: s.GetState(), URL: s.GetTargetURL(), ID: s.GetID(), AppID: app})
		}
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	ropt := &gh.ListCheckRunsOptions{Filter: new("latest"), ListOptions: gh.ListOptions{PerPage: 100}}
	for {
		res, resp, err := c.gh.Checks.ListCheckRunsForRef(ctx, repo.Owner, repo.Name, sha, ropt)
		if err != nil {
			return nil, c.wrap(err, "list check runs")
		}
		for _, r := range res.CheckRuns {
			url := r.GetDetailsURL()
			if url == "" {
				url = r.GetHTMLURL()
			}
			out = append(out, Check{Kind: KindCheckRun, Name: r.GetName(), Status: r.GetStatus(), Conclusion: r.GetConclusion(), URL: url, ID: r.GetID(), AppID: r.GetApp().GetID()})
		}
		if resp.NextPage == 0 {
			break
		}
		ropt.Page = resp.NextPage
	}
	return out, nil
}

// Verdict is the outcome of required statuses on a commit.
type Verdict string

// The verdicts.
const (
	Pending Verdict = "PENDING"
	Passed  Verdict = "PASSED"
	Failed  Verdict = "FAILED"
)

// Evaluation is Evaluate's answer.
type Evaluation struct {
	Verdict Verdict
	// Context and State name the first failing required context (in the
	// order required) and how it failed, when Failed.
	Context string
	State   string
	// Waiting lists the required contexts not yet successful, when Pending.
	Waiting []string
}

// outcome of one check: pass, fail (with the word) or wait.
func outcome(ch Check) (Verdict, string) {
	if ch.Kind == KindStatus {
		switch ch.State {
		case "success":
			return Passed, ""
		case "failure", "error":
			return Failed, ch.State
		}
		return Pending, ""
	}
	if ch.Status != "completed" {
		return Pending, ""
	}
	switch ch.Conclusion {
	// GitHub counts neutral and skipped check runs as passing required checks.
	case "success", "neutral", "skipped":
		return Passed, ""
	case "failure", "timed_out", "cancelled", "action_required", "startup_failure":
		return Failed, ch.Conclusion
	}
	// stale, or no conclusion yet: GitHub waits for a new run.
	return Pending, ""
}

// Evaluate judges required contexts against the checks on a commit: Failed
// as soon as one required context has a failing status or check run (a
// failure wins over a success of the same name); Passed when every required
// context has a success; Pending otherwise. With no required contexts it is
// Pending: the contract fails such runs before testing, not here.
func Evaluate(required []string, checks []Check) Evaluation {
	byName := map[string][]Check{}
	for _, ch := range checks {
		byName[ch.Name] = append(byName[ch.Name], ch)
	}
	var waiting []string
	for _, ctx := range required {
		passed := false
		for _, ch := range byName[ctx] {
			switch v, word := outcome(ch); v {
			case Failed:
				return Evaluation{Verdict: Failed, Context: ctx, State: word}
			case Passed:
				passed = true
			}
		}
		if !passed {
			waiting = append(waiting, ctx)
		}
	}
	if len(required) == 0 || len(waiting) > 0 {
		return Evaluation{Verdict: Pending, Waiting: waiting}
	}
	return Evaluation{Verdict: Passed}
}
