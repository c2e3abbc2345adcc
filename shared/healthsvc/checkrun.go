package healthsvc

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// CheckRunName is the check run test health keeps on a pull request's
// commit: its failures by label.
const CheckRunName = "mainguard/tests"

// CheckRuns is what the check run needs of GitHub; *github.Client has it.
type CheckRuns interface {
	FindCheckRun(ctx context.Context, repo github.Repo, sha, name string) (int64, bool, error)
	CreateCheckRun(ctx context.Context, repo github.Repo, r github.CheckRun) (int64, error)
	UpdateCheckRun(ctx context.Context, repo github.Repo, id int64, r github.CheckRun) error
}

var _ CheckRuns = (*github.Client)(nil)

// Checks posts the check run of each pull request commit whose upload is
// ingested, on the repositories of one GitHub.
type Checks struct {
	GitHub CheckRuns
	// Host is GitHub Enterprise's host, "" for github.com alone:
	// repositories of other hosts get no check run.
	Host string
}

// NewChecks is the check run poster of the GitHub client c, whose
// repositories are github.com's or, on GitHub Enterprise, enterpriseHost's
// (config.EnterpriseHost): nil when c is nil, so a deployment without
// GitHub posts nothing.
func NewChecks(c CheckRuns, enterpriseHost string) *Checks {
	if c == nil {
		return nil
	}
	return &Checks{GitHub: c, Host: enterpriseHost}
}

func (c *Checks) serves(ref repository.Ref) bool {
	return strings.EqualFold(ref.Host, "github.com") || (c.Host != "" && strings.EqualFold(ref.Host, c.Host))
}

// claimTTL is how long a claim to create a commit's check run holds off
// other ingests: longer than the calls it covers take.
const claimTTL = time.Minute

// postCheckRun keeps the check run of an ingested pull request upload's
// commit: created once per commit, edited in place by every later upload
// of it (a retry of the job, another job). A GitHub that fails is logged:
// the results are recorded, and the commit's next upload posts again.
func (s *Service) postCheckRun(ctx context.Context, up store.Upload, settings testhealth.Settings) {
	if s.Checks == nil || up.PR <= 0 || up.SHA == "" || !s.Checks.serves(up.Repo) {
		return
	}
	run, err := s.commitCheckRun(ctx, up, settings)
	if err == nil {
		err = s.upsertCheckRun(ctx, up, run)
	}
	if err != nil {
		s.Log.WarnContext(ctx, "check run not posted", "org", up.Org, "repo", up.Repo.String(), "sha", up.SHA, "error", err.Error())
	}
}

// upsertCheckRun edits the commit's check run whose id the store holds;
// without one it claims the creation, adopts a run of the name this App
// made already (a crash between creating and remembering), or creates one,
// and remembers its id. When another ingest holds the claim, it waits for
// that one's id (a few tries) and edits it with its own, newer summary.
func (s *Service) upsertCheckRun(ctx context.Context, up store.Upload, run github.CheckRun) error {
	repo := github.Repo{Owner: up.Repo.Owner, Name: up.Repo.Name}
	for try := 0; ; try++ {
		id, _, _, err := s.Store.CheckRun(ctx, up.Org, up.Repo, up.SHA)
		if err != nil {
			return err
		}
		if id != 0 {
			err := s.Checks.GitHub.UpdateCheckRun(ctx, repo, id, run)
			if !errs.Is(err, errs.NotFound) {
				return err
			}
			// Gone (the repository moved?): made again below.
		}
		now := s.Now()
		err = s.Store.ClaimCheckRun(ctx, up.Org, up.Repo, up.SHA, now, now.Add(-claimTTL))
		if errs.Is(err, errs.Conflict) && try < 3 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(200<<try) * time.Millisecond):
			}
			continue
		}
		if err != nil {
			return err
		}
		id, found, err := s.Checks.GitHub.FindCheckRun(ctx, repo, up.SHA, CheckRunName)
		switch {
		case err != nil:
			return err
		case found:
			err = s.Checks.GitHub.UpdateCheckRun(ctx, repo, id, run)
		default:
			id, err = s.Checks.GitHub.CreateCheckRun(ctx, repo, run)
		}
		if err != nil {
			return err
		}
		return s.Store.SetCheckRunID(ctx, up.Org, up.Repo, up.SHA, id)
	}
}

// commitCheckRun is the check run of up's commit from every upload of it:
// a test fails on the commit when the latest upload that ran it failed it
// and did not pass it on a retry within it; a test that failed in one
// upload and passed in a later one (a re-run of the job) passed on retry.
// The failures are listed by label; the conclusion is success when none
// is left but quarantined ones (as `mainguard test` exits 0), failure
// otherwise.
func (s *Service) commitCheckRun(ctx context.Context, up store.Upload, settings testhealth.Settings) (github.CheckRun, error) {
	uploads, err := s.Store.CommitUploads(ctx, up.Org, up.Repo, up.SHA)
	if err != nil {
		return github.CheckRun{}, err
	}
	final := map[string]bool{} // test → failing at its latest upload
	failedAt := map[string]time.Time{}
	retried := map[string]bool{}
	latest := up.ID
	for _, u := range uploads {
		failed, passed := u.Failed, u.Passed
		if len(failed) == 0 && len(passed) == 0 {
			// Guarded (or all skipped): its records name no test; its
			// record keeps its failures.
			rec, err := s.Store.GetUpload(ctx, up.Org, u.ID)
			if err != nil && !errs.Is(err, errs.NotFound) {
				return github.CheckRun{}, err
			}
			failed = map[string]bool{}
			for _, f := range rec.FailedTests {
				failed[f.ID] = true
			}
		}
		for id := range failed {
			if !passed[id] {
				final[id], failedAt[id] = true, u.At
			} else {
				final[id], retried[id] = false, true
			}
		}
		for id := range passed {
			if final[id] {
				retried[id] = true
			}
			if !failed[id] {
				final[id] = false
			}
		}
		latest = u.ID
	}
	var failing []string
	nRetried := 0
	for id, f := range final {
		switch {
		case f:
			failing = append(failing, id)
		case retried[id]:
			nRetried++
		}
	}
	list, err := s.label(ctx, up.Org, up.Repo, settings, failing, nil, func(id string) testhealth.FailedRun {
		return testhealth.FailedRun{At: failedAt[id], Recorded: true}
	})
	if err != nil {
		return github.CheckRun{}, err
	}
	run := github.CheckRun{Name: CheckRunName, HeadSHA: up.SHA, DetailsURL: s.Viewer.UploadURL(up.Org, latest),
		ExternalID: "mainguard:" + up.Org, Conclusion: "success"}
	run.Title, run.Summary = checkRunText(list, len(failing), nRetried)
	for _, f := range list {
		if f.Label.Kind != testhealth.LabelQuarantined {
			run.Conclusion = "failure"
		}
	}
	if len(failing) > len(list) {
		// Some failures were not labelled (MaxLabelled): not known to be
		// quarantined.
		run.Conclusion = "failure"
	}
	return run, nil
}

// labelHeadings head each label's list in the check run.
var labelHeadings = map[string]string{
	testhealth.LabelNew:             "New: probably this change",
	testhealth.LabelFailingOnBranch: "Failing on %s too",
	testhealth.LabelKnownFlaky:      "Known flaky",
	testhealth.LabelQuarantined:     "Quarantined: they do not fail the build",
}

// checkRunText is the check run's title and Markdown summary: counts by
// label, then each label's failures with their evidence and page, within
// GitHub's bound on a summary.
func checkRunText(list []Failure, failing, retried int) (string, string) {
	var b strings.Builder
	counts := map[string]int{}
	branch := ""
	for _, f := range list {
		counts[f.Label.Kind]++
		if f.Label.Branch != "" {
			branch = f.Label.Branch
		}
	}
	var parts []string
	for _, k := range testhealth.LabelOrder {
		if n := counts[k]; n > 0 {
			text := map[string]string{testhealth.LabelNew: "new", testhealth.LabelFailingOnBranch: "failing on " + branch,
				testhealth.LabelKnownFlaky: "known flaky", testhealth.LabelQuarantined: "quarantined"}[k]
			parts = append(parts, fmt.Sprintf("%d %s", n, text))
		}
	}
	title := strings.Join(parts, ", ")
	switch {
	case failing == 0 && retried > 0:
		title = fmt.Sprintf("No failure left: %d passed on retry", retried)
	case failing == 0:
		title = "No test failed"
	case failing > len(list):
		title = fmt.Sprintf("%d failed tests: %s (of the first %d)", failing, title, len(list))
	}
	fmt.Fprintf(&b, "**%s**\n", title)
	if retried > 0 && failing > 0 {
		fmt.Fprintf(&b, "\n%d more failed, then passed on a retry of the same commit.\n", retried)
	}
	const room = github.MaxCheckRunSummary - 200
	for _, k := range testhealth.LabelOrder {
		if counts[k] == 0 {
			continue
		}
		heading := labelHeadings[k]
		if strings.Contains(heading, "%s") {
			heading = fmt.Sprintf(heading, branch)
		}
		fmt.Fprintf(&b, "\n### %s (%d)\n\n", heading, counts[k])
		for _, f := range list {
			if f.Label.Kind != k {
				continue
			}
			line := fmt.Sprintf("- **%s**: %s", markdownText(f.Name), markdownText(f.Label.Evidence))
			if f.HTMLURL != "" {
				line += fmt.Sprintf(" ([history](%s))", f.HTMLURL)
			}
			if b.Len()+len(line) > room {
				b.WriteString("- … and more: see the upload's page\n")
				return title, b.String()
			}
			b.WriteString(line + "\n")
		}
	}
	return title, b.String()
}

// markdownText keeps a test's name or evidence literal in Markdown: no
// markup, no line breaks, no HTML.
func markdownText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", r)
		case strings.ContainsRune("\\`*_[]<>#|~", r):
			b.WriteRune('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
