package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	gh "github.com/google/go-github/v92/github"

	"github.com/mainguard/mainguard/shared/errs"
)

// Mergeability is GitHub's view of whether a pull request merges cleanly,
// in the words of the contract's readiness.gitHubMergeability.
type Mergeability string

// The mergeability values.
const (
	Mergeable    Mergeability = "MERGEABLE"
	NotMergeable Mergeability = "NOT_MERGEABLE"
	// InProgress: GitHub has not finished computing it (mergeable: null).
	InProgress Mergeability = "IN_PROGRESS"
	// Unspecified: not applicable, the pull request is closed.
	Unspecified Mergeability = "UNSPECIFIED"
)

// PullRequest is what the queue reads of a pull request.
type PullRequest struct {
	Number  int
	Title   string
	Author  string
	HeadSHA string
	HeadRef string
	BaseRef string
	Open    bool
	Merged  bool
	// MergeCommitSHA is set only when Merged.
	MergeCommitSHA string
	Draft          bool
	Mergeability   Mergeability
}

// PullRequest reads a pull request. Absent: errs.NotFound.
func (c *Client) PullRequest(ctx context.Context, repo Repo, number int) (PullRequest, error) {
	if err := checkRepo(repo); err != nil {
		return PullRequest{}, err
	}
	p, _, err := c.gh.PullRequests.Get(forRepo(ctx, repo), repo.Owner, repo.Name, number)
	if err != nil {
		return PullRequest{}, c.wrap(err, fmt.Sprintf("get pull request #%d", number))
	}
	out := PullRequest{
		Number:  p.GetNumber(),
		Title:   p.GetTitle(),
		Author:  p.GetUser().GetLogin(),
		HeadSHA: p.GetHead().GetSHA(),
		HeadRef: p.GetHead().GetRef(),
		BaseRef: p.GetBase().GetRef(),
		Open:    p.GetState() == "open",
		Merged:  p.GetMerged(),
		Draft:   p.GetDraft(),
	}
	// merge_commit_sha of an open pull request is GitHub's test merge, not a
	// merge: expose it only once merged.
	if out.Merged {
		out.MergeCommitSHA = p.GetMergeCommitSHA()
	}
	switch {
	case !out.Open:
		out.Mergeability = Unspecified
	case p.Mergeable == nil:
		out.Mergeability = InProgress
	case *p.Mergeable:
		out.Mergeability = Mergeable
	default:
		out.Mergeability = NotMergeable
	}
	return out, nil
}

// UpToDate reports whether head contains every commit of base (GitHub's
// compare API: behind_by is 0), as a pull request must to merge directly.
func (c *Client) UpToDate(ctx context.Context, repo Repo, base, head string) (bool, error) {
	if err := checkRepo(repo); err != nil {
		return false, err
	}
	cmp, _, err := c.gh.Repositories.CompareCommits(forRepo(ctx, repo), repo.Owner, repo.Name, base, head, &gh.ListOptions{PerPage: 1})
	if err != nil {
		return false, c.wrap(err, "compare "+base+"..."+head)
	}
	return cmp.GetBehindBy() == 0, nil
}

// BranchHead returns the sha a branch points at. Absent: errs.NotFound.
func (c *Client) BranchHead(ctx context.Context, repo Repo, branch string) (string, error) {
	if err := checkRepo(repo); err != nil {
		return "", err
	}
	ref, _, err := c.gh.Git.GetRef(forRepo(ctx, repo), repo.Owner, repo.Name, "heads/"+branch)
	if err != nil {
		return "", c.wrap(err, "get branch "+branch)
	}
	return ref.GetObject().GetSHA(), nil
}

// Head is one pull request to merge into a test branch.
type Head struct {
	PR  int
	SHA string
}

// BuildTestBranch assembles a test branch: tempBranch is created at base,
// each head is merged into it in order (a merge commit each, through
// POST /merges), the result is published as finalBranch and tempBranch is
// deleted. It returns finalBranch's sha.
//
// It is idempotent for one (tempBranch, finalBranch) pair: if finalBranch
// already exists (an earlier attempt published it and its answer was lost),
// its sha is returned; a leftover tempBranch is reset to base and rebuilt.
// A head that does not merge yields a *ConflictError (errs.Conflict) naming
// its pull request; the temporary branch is then deleted.
func (c *Client) BuildTestBranch(ctx context.Context, repo Repo, base string, heads []Head, tempBranch, finalBranch string) (string, error) {
	if err := checkRepo(repo); err != nil {
		return "", err
	}
	if tempBranch == "" || finalBranch == "" || tempBranch == finalBranch {
		return "", errs.E(errs.Invalid, "github: test branch names must be distinct and non-empty")
	}
	if sha, err := c.BranchHead(ctx, repo, finalBranch); err == nil {
		_ = c.DeleteBranch(ctx, repo, tempBranch)
		return sha, nil
	} else if !errs.Is(err, errs.NotFound) {
		return "", err
	}

	if err := c.createOrResetBranch(ctx, repo, tempBranch, base); err != nil {
		return "", err
	}
	for _, h := range heads {
		msg := fmt.Sprintf("Merge pull request #%d (%s) into %s", h.PR, shortSHA(h.SHA), tempBranch)
		_, _, err := c.gh.Repositories.Merge(forRepo(ctx, repo), repo.Owner, repo.Name, gh.RepositoryMergeRequest{
			Base: tempBranch, Head: h.SHA, CommitMessage: new(msg),
		})
		// 201 merged, 204 already contained: both leave the head in the branch.
		if err != nil {
			werr := c.wrap(err, fmt.Sprintf("merge #%d into %s", h.PR, tempBranch))
			if statusIs(werr, http.StatusConflict) {
				_ = c.DeleteBranch(ctx, repo, tempBranch)
				return "", errs.Wrap(errs.Conflict, &ConflictError{PR: h.PR, SHA: h.SHA}, "pull request #%d has a merge conflict", h.PR)
			}
			return "", werr
		}
	}
	// Read the branch back rather than trusting the last merge answer: a
	// 204 carries no sha.
	sha, err := c.BranchHead(ctx, repo, tempBranch)
	if err != nil {
		return "", err
	}
	if err := c.createBranch(ctx, repo, finalBranch, sha); err != nil {
		return "", err
	}
	if err := c.DeleteBranch(ctx, repo, tempBranch); err != nil {
		return "", err
	}
	return sha, nil
}

// PointTestBranch creates the test branch at sha, a commit the queue built
// before (a flaky retry tests the very commit that failed). It is safe to
// repeat. An errs.NotFound means the commit is gone: build it again.
func (c *Client) PointTestBranch(ctx context.Context, repo Repo, sha, branch string) error {
	if err := checkRepo(repo); err != nil {
		return err
	}
	err := c.createBranch(ctx, repo, branch, sha)
	if unprocessable(err, "Object does not exist") {
		return errs.Wrap(errs.NotFound, err, "github: commit %s is gone", shortSHA(sha))
	}
	return err
}

// createBranch creates branch at sha; "Reference already exists" at the
// same sha is success, at another sha errs.Conflict.
func (c *Client) createBranch(ctx context.Context, repo Repo, branch, sha string) error {
	_, _, err := c.gh.Git.CreateRef(forRepo(ctx, repo), repo.Owner, repo.Name, gh.CreateRef{Ref: "refs/heads/" + branch, SHA: sha})
	if err == nil {
		return nil
	}
	werr := c.wrap(err, "create branch "+branch)
	if !isAlreadyExists(werr) {
		return werr
	}
	got, err := c.BranchHead(ctx, repo, branch)
	if err != nil {
		return err
	}
	if got != sha {
		return errs.E(errs.Conflict, "github: branch %s exists at %s, not %s", branch, shortSHA(got), shortSHA(sha))
	}
	return nil
}

// createOrResetBranch points branch at sha whether or not it exists.
func (c *Client) createOrResetBranch(ctx context.Context, repo Repo, branch, sha string) error {
	_, _, err := c.gh.Git.CreateRef(forRepo(ctx, repo), repo.Owner, repo.Name, gh.CreateRef{Ref: "refs/heads/" + branch, SHA: sha})
	if err == nil {
		return nil
	}
	werr := c.wrap(err, "create branch "+branch)
	if !isAlreadyExists(werr) {
		return werr
	}
	_, _, err = c.gh.Git.UpdateRef(forRepo(ctx, repo), repo.Owner, repo.Name, "heads/"+branch, gh.UpdateRef{SHA: sha, Force: new(true)})
	return c.wrap(err, "reset branch "+branch)
}

func isAlreadyExists(err error) bool { return unprocessable(err, "already exists") }

// unprocessable reports whether err is GitHub's 422 with a message that
// contains text.
func unprocessable(err error, text string) bool {
	var e *APIError
	return errors.As(err, &e) && e.Status == http.StatusUnprocessableEntity && strings.Contains(e.Message, text)
}

func shortSHA(s string) string {
	if len(s) > 7 {
		return s[:7]
	}
	return s
}

// DeleteBranch deletes a branch; one already gone (404 or 422) is success.
func (c *Client) DeleteBranch(ctx context.Context, repo Repo, branch string) error {
	if err := checkRepo(repo); err != nil {
		return err
	}
	_, err := c.gh.Git.DeleteRef(forRepo(ctx, repo), repo.Owner, repo.Name, "heads/"+branch)
	werr := c.wrap(err, "delete branch "+branch)
	if statusIs(werr, http.StatusNotFound) || statusIs(werr, http.StatusUnprocessableEntity) {
		return nil
	}
	return werr
}

// MergeMethod is the queue's merge method, as the contract spells it.
type MergeMethod string

// The merge methods.
const (
	MergeCommit MergeMethod = "MERGE_COMMIT"
	Squash      MergeMethod = "SQUASH"
	Rebase      MergeMethod = "REBASE"
)

func (m MergeMethod) github() (string, bool) {
	switch MergeMethod(strings.ToUpper(string(m))) {
	case MergeCommit:
		return "merge", true
	case Squash:
		return "squash", true
	case Rebase:
		return "rebase", true
	}
	return "", false
}

// Merge merges a pull request with method, pinned to sha (GitHub refuses if
// the head moved), and returns the merge commit sha.
//
// It is idempotent: when GitHub refuses because the pull request is already
// merged at sha (a retry whose first answer was lost), the existing merge
// sha is returned. Otherwise a refusal is errs.Conflict wrapping
// ErrNotMergeable (405) or ErrHeadChanged (409, or merged at another head).
func (c *Client) Merge(ctx context.Context, repo Repo, number int, sha string, method MergeMethod) (string, error) {
	if err := checkRepo(repo); err != nil {
		return "", err
	}
	gm, ok := method.github()
	if !ok {
		return "", errs.E(errs.Invalid, "github: unknown merge method %q", method)
	}
	res, _, err := c.gh.PullRequests.Merge(forRepo(ctx, repo), repo.Owner, repo.Name, number, "", &gh.PullRequestOptions{SHA: sha, MergeMethod: gm})
	if err == nil {
		return res.GetSHA(), nil
	}
	werr := c.wrap(err, fmt.Sprintf("merge pull request #%d", number))
	notMergeable, headChanged := statusIs(werr, http.StatusMethodNotAllowed), statusIs(werr, http.StatusConflict)
	if !notMergeable && !headChanged {
		return "", werr
	}
	p, err := c.PullRequest(ctx, repo, number)
	if err != nil {
		return "", err
	}
	var api *APIError
	switch {
	case p.Merged && p.HeadSHA == sha:
		return p.MergeCommitSHA, nil
	case !p.Merged && errors.As(werr, &api) && strings.Contains(api.Message, "Base branch was modified"):
		// GitHub's 405 when the base moved under the merge: try again.
		return "", errs.Wrap(errs.Unavailable, &APIError{Status: api.Status, Message: api.Message, Retry: true}, "pull request #%d: base branch moved during the merge", number)
	case p.Merged || headChanged:
		return "", errs.Wrap(errs.Conflict, fmt.Errorf("%w: %v", ErrHeadChanged, werr), "pull request #%d head is no longer %s", number, shortSHA(sha))
	default:
		return "", errs.Wrap(errs.Conflict, fmt.Errorf("%w: %v", ErrNotMergeable, werr), "pull request #%d is not mergeable", number)
	}
}

// Commit status states.
const (
	StatePending = "pending"
	StateSuccess = "success"
	StateFailure = "failure"
	StateError   = "error"
)

// SetStatus sets the commit status context on sha. GitHub keeps the latest
// status per context, so repeating the call is harmless.
func (c *Client) SetStatus(ctx context.Context, repo Repo, sha, context, state, description, targetURL string) error {
	if err := checkRepo(repo); err != nil {
		return err
	}
	switch state {
	case StatePending, StateSuccess, StateFailure, StateError:
	default:
		return errs.E(errs.Invalid, "github: status state %q is not pending, success, failure or error", state)
	}
	// GitHub refuses descriptions over 140 characters and contexts over
	// 255 (a queue's on a long branch name): cut them, the same way each
	// time, so that the next status of the context still replaces this one.
	description, context = cut(description, 140), cut(context, 255)
	st := gh.RepoStatus{State: new(state), Context: new(context), Description: new(description)}
	if targetURL != "" {
		st.TargetURL = new(targetURL)
	}
	_, _, err := c.gh.Repositories.CreateStatus(forRepo(ctx, repo), repo.Owner, repo.Name, sha, st)
	return c.wrap(err, "set status "+context)
}

// cut shortens s to n characters, its last one an ellipsis.
func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
