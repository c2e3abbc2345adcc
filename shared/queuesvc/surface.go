package queuesvc

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/store"
)

// The queue's GitHub surface beyond merging: the one PR comment, state
// labels and the draft pull requests of test branches, as the engine's
// effects ask (Notify, StartRun.OpenTestPR, DeleteBranches.CloseTestPR),
// and what the webhook handler asks for comment commands. Every call here
// is safe to repeat; see docs/api.md ("The queue on GitHub") for the list.

// Surface is what the queue asks of GitHub beyond merging; *github.Client
// implements it.
type Surface interface {
	Permission(ctx context.Context, repo github.Repo, user string) (string, error)
	React(ctx context.Context, repo github.Repo, commentID int64, content string) error
	Comment(ctx context.Context, repo github.Repo, issue int, body string) (int64, error)
	EditComment(ctx context.Context, repo github.Repo, id int64, body string) error
	FindComment(ctx context.Context, repo github.Repo, issue int, marker string) (int64, bool, error)
	Labels(ctx context.Context, repo github.Repo, issue int) ([]string, error)
	AddLabel(ctx context.Context, repo github.Repo, issue int, name string) error
	RemoveLabel(ctx context.Context, repo github.Repo, issue int, name string) error
	OpenDraftPR(ctx context.Context, repo github.Repo, head, base, title, body, label string) (int, error)
	ClosePRsOf(ctx context.Context, repo github.Repo, head string) error
}

// CommentStore is what the PR comment needs of the store; *store.Store
// implements it.
type CommentStore interface {
	PRComment(ctx context.Context, k store.QueueKey, pr int) (store.PRComment, bool, error)
	ClaimPRComment(ctx context.Context, k store.QueueKey, pr int, now, staleBefore time.Time) error
	SetPRCommentID(ctx context.Context, k store.QueueKey, pr int, id int64) error
}

// TestPRLabel labels the draft pull requests opened for test branches.
const TestPRLabel = "mainguard: test run"

// claimTTL is how long a claim to create a PR comment holds off other
// drivers: longer than the calls it covers take, shorter than
// mergequeue.RetryInterval, so the retry of a driver that died takes over.
const claimTTL = time.Minute

// notify performs a Notify: the PR comment, then the state label. It
// reports whether the notice is done: performed, or refused by GitHub
// for good (logged). A GitHub that did not answer leaves it owed, and the
// engine asks again.
func (d *Service) notify(ctx context.Context, k store.QueueKey, n *mergequeue.Notify) bool {
	var err error
	if n.Comment {
		err = d.upsertComment(ctx, k, n.PRNumber, d.commentBody(k, n))
	}
	if err == nil && n.StateLabel != "" {
		err = d.setStateLabel(ctx, k, n.PRNumber, n.StateLabel, n.LabelPrefix)
	}
	if err == nil {
		return true
	}
	if retry, _ := github.Retryable(err); retry || errs.Is(err, errs.Conflict) {
		d.noteGitHub(ctx, k, "update the pull request's comment or label", err)
		return false
	}
	d.log().WarnContext(ctx, "merge queue: GitHub refused the pull request's comment or label; given up",
		"queue", k.String(), "pr", n.PRNumber, "error", err.Error())
	return true
}

// Marker is the hidden line that identifies the queue's comment on a PR:
// found on GitHub, it is edited rather than a second one created.
func Marker(k store.QueueKey) string {
	return "<!-- mainguard:queue=" + strings.ReplaceAll(k.String(), "--", "-") + " -->"
}

// upsertComment edits the queue's comment on PR pr, or creates it once:
// the id the store remembers is edited; without one (or when it is gone)
// the creation is claimed, a comment carrying the marker is looked for,
// and only when there is none is one created; the id is then remembered.
func (d *Service) upsertComment(ctx context.Context, k store.QueueKey, pr int, body string) error {
	repo := ghRepo(k.Repo)
	c, found, err := d.Store.PRComment(ctx, k, pr)
	if err != nil {
		return err
	}
	if found && c.CommentID != 0 {
		err := d.GitHub.EditComment(ctx, repo, c.CommentID, body)
		if !errs.Is(err, errs.NotFound) {
			return err
		}
		// Deleted by someone: made again below.
	}
	now := d.Now()
	if err := d.Store.ClaimPRComment(ctx, k, pr, now, now.Add(-claimTTL)); err != nil {
		return err
	}
	id, ok, err := d.GitHub.FindComment(ctx, repo, pr, Marker(k))
	switch {
	case err != nil:
		return err
	case ok:
		err = d.GitHub.EditComment(ctx, repo, id, body)
	default:
		id, err = d.GitHub.Comment(ctx, repo, pr, body)
	}
	if err != nil {
		return err
	}
	return d.Store.SetPRCommentID(ctx, k, pr, id)
}

// setStateLabel keeps label on PR pr and no other label starting with
// prefix.
func (d *Service) setStateLabel(ctx context.Context, k store.QueueKey, pr int, label, prefix string) error {
	repo := ghRepo(k.Repo)
	have, err := d.GitHub.Labels(ctx, repo, pr)
	if err != nil {
		return err
	}
	for _, l := range have {
		if l != label && strings.HasPrefix(l, prefix) {
			if err := d.GitHub.RemoveLabel(ctx, repo, pr, l); err != nil {
				return err
			}
		}
	}
	if slices.Contains(have, label) {
		return nil
	}
	return d.GitHub.AddLabel(ctx, repo, pr, label)
}

// stateTitles are the states as the comment shows them.
var stateTitles = map[mergequeue.PRState]string{
	mergequeue.NotReady: "Submitted, waiting for the pull request to be ready", mergequeue.Pending: "Queued",
	mergequeue.Testing: "Testing", mergequeue.TestsPassed: "Tests passed, waiting to merge",
	mergequeue.PendingFailure: "Tests failed, waiting for the pull requests ahead", mergequeue.Merged: "Merged",
	mergequeue.Failed: "Failed", mergequeue.Cancelled: "Cancelled",
}

// commentBody renders the PR comment of n: the state, the place in the
// queue, the run, the link to the PR's page, and on failure the reason,
// the failed checks and test health's evidence.
func (d *Service) commentBody(k store.QueueKey, n *mergequeue.Notify) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n**Merge queue** for `%s`: **%s**", Marker(k), k.Branch, stateTitles[n.State])
	if n.Position > 0 {
		fmt.Fprintf(&b, ", position %d in the queue", n.Position)
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "- priority: %s (%d)\n", mergequeue.PriorityName(n.Priority), n.Priority)
	if n.Reason != "" {
		fmt.Fprintf(&b, "- reason: `%s`\n", n.Reason)
	}
	if n.TestBranch != "" && (!n.State.Terminal() || n.State == mergequeue.Failed) {
		fmt.Fprintf(&b, "- test branch: `%s`", n.TestBranch)
		if n.Lane > 0 {
			fmt.Fprintf(&b, " (lane %d)", n.Lane)
		}
		b.WriteString("\n")
	}
	if len(n.Batch) > 1 {
		prs := make([]string, len(n.Batch))
		for i, p := range n.Batch {
			prs[i] = fmt.Sprintf("#%d", p)
		}
		fmt.Fprintf(&b, "- batch: %s\n", strings.Join(prs, ", "))
	}
	if n.State == mergequeue.Failed || n.State == mergequeue.PendingFailure {
		if len(n.FailedChecks) > 0 {
			fmt.Fprintf(&b, "- failed checks: %s\n", "`"+strings.Join(n.FailedChecks, "`, `")+"`")
		}
		for _, t := range n.Evidence {
			q := ""
			if t.Quarantined {
				q = ", quarantined"
			}
			fmt.Fprintf(&b, "- failed test `%s`: %s%s\n", t.Name, t.Status, q)
		}
	}
	if d.DetailsURL != nil {
		fmt.Fprintf(&b, "\n[Details](%s)\n", d.DetailsURL(k, n.PRNumber))
	}
	return b.String()
}

// openTestPR opens the draft pull request of a test branch once it is
// built (createPrsForTestingBranches).
func (d *Service) openTestPR(ctx context.Context, k store.QueueKey, sr *mergequeue.StartRun) error {
	var prs []string
	for _, h := range sr.Heads {
		if h.UnderTest {
			prs = append(prs, fmt.Sprintf("#%d", h.PRNumber))
		}
	}
	title := testPRTitle(prs, k.Branch)
	body := fmt.Sprintf("The merge queue opened this draft pull request so that CI runs on its test branch `%s`. "+
		"It is closed when the run ends; do not merge it.", sr.TestBranch)
	_, err := d.GitHub.OpenDraftPR(ctx, ghRepo(k.Repo), sr.TestBranch, k.Branch, title, body, TestPRLabel)
	return err
}

// maxPRTitle is GitHub's limit on a pull request's title, in characters:
// a longer one is refused (422), and the test pull request not opened.
const maxPRTitle = 256

// testPRTitle names the PRs under test and the target branch, within
// maxPRTitle: as many PRs as fit, then how many more; a branch name too
// long even so is cut.
func testPRTitle(prs []string, branch string) string {
	title := func(list string) string { return fmt.Sprintf("[mainguard] test run for %s into %s", list, branch) }
	t := title(strings.Join(prs, ", "))
	for k := len(prs) - 1; utf8.RuneCountInString(t) > maxPRTitle && k >= 1; k-- {
		t = title(fmt.Sprintf("%s and %d more", strings.Join(prs[:k], ", "), len(prs)-k))
	}
	if r := []rune(t); len(r) > maxPRTitle {
		t = string(r[:maxPRTitle-1]) + "…"
	}
	return t
}

// The GitHub surface of a deployment without credentials: unavailable.

// Permission is unavailable.
func (Unconfigured) Permission(context.Context, github.Repo, string) (string, error) {
	return "", errNoGitHub()
}

// React is unavailable.
func (Unconfigured) React(context.Context, github.Repo, int64, string) error { return errNoGitHub() }

// Comment is unavailable.
func (Unconfigured) Comment(context.Context, github.Repo, int, string) (int64, error) {
	return 0, errNoGitHub()
}

// EditComment is unavailable.
func (Unconfigured) EditComment(context.Context, github.Repo, int64, string) error {
	return errNoGitHub()
}

// FindComment is unavailable.
func (Unconfigured) FindComment(context.Context, github.Repo, int, string) (int64, bool, error) {
	return 0, false, errNoGitHub()
}

// Labels is unavailable.
func (Unconfigured) Labels(context.Context, github.Repo, int) ([]string, error) {
	return nil, errNoGitHub()
}

// AddLabel is unavailable.
func (Unconfigured) AddLabel(context.Context, github.Repo, int, string) error { return errNoGitHub() }

// RemoveLabel is unavailable.
func (Unconfigured) RemoveLabel(context.Context, github.Repo, int, string) error {
	return errNoGitHub()
}

// OpenDraftPR is unavailable.
func (Unconfigured) OpenDraftPR(context.Context, github.Repo, string, string, string, string, string) (int, error) {
	return 0, errNoGitHub()
}

// ClosePRsOf is unavailable.
func (Unconfigured) ClosePRsOf(context.Context, github.Repo, string) error { return errNoGitHub() }
