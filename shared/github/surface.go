package github

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	gh "github.com/google/go-github/v92/github"
)

// The merge queue's GitHub surface: comments, reactions, labels, the
// permission of whoever commands the queue, and the draft pull requests
// opened for test branches. Each call is safe to repeat (see each).

// Permission is user's permission on repo: admin, write, read or none
// (GET /repos/{o}/{r}/collaborators/{user}/permission; "maintain" counts
// as write there).
func (c *Client) Permission(ctx context.Context, repo Repo, user string) (string, error) {
	if err := checkRepo(repo); err != nil {
		return "", err
	}
	p, _, err := c.gh.Repositories.GetPermissionLevel(forRepo(ctx, repo), repo.Owner, repo.Name, user)
	if err != nil {
		return "", c.wrap(err, "get the permission of "+user)
	}
	return p.GetPermission(), nil
}

// React adds a reaction (+1, eyes, confused, …) to an issue comment;
// GitHub answers the existing one when it is there already.
func (c *Client) React(ctx context.Context, repo Repo, commentID int64, content string) error {
	if err := checkRepo(repo); err != nil {
		return err
	}
	_, _, err := c.gh.Reactions.CreateIssueCommentReaction(forRepo(ctx, repo), repo.Owner, repo.Name, commentID, content)
	return c.wrap(err, "react to a comment")
}

// Comment creates a comment on an issue or pull request and returns its
// id. It is not idempotent: callers make it so (FindComment first).
func (c *Client) Comment(ctx context.Context, repo Repo, issue int, body string) (int64, error) {
	if err := checkRepo(repo); err != nil {
		return 0, err
	}
	cm, _, err := c.gh.Issues.CreateComment(forRepo(ctx, repo), repo.Owner, repo.Name, issue, gh.IssueCommentRequest{Body: body})
	if err != nil {
		return 0, c.wrap(err, fmt.Sprintf("comment on #%d", issue))
	}
	return cm.GetID(), nil
}

// EditComment replaces a comment's body; a comment that is gone is
// errs.NotFound.
func (c *Client) EditComment(ctx context.Context, repo Repo, id int64, body string) error {
	if err := checkRepo(repo); err != nil {
		return err
	}
	_, _, err := c.gh.Issues.UpdateComment(forRepo(ctx, repo), repo.Owner, repo.Name, id, gh.IssueCommentRequest{Body: body})
	return c.wrap(err, "edit a comment")
}

// FindComment returns the id of the first comment on issue whose body
// contains marker, reading every page; found is false when none does.
func (c *Client) FindComment(ctx context.Context, repo Repo, issue int, marker string) (id int64, found bool, err error) {
	if err := checkRepo(repo); err != nil {
		return 0, false, err
	}
	opt := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for {
		cs, resp, err := c.gh.Issues.ListComments(forRepo(ctx, repo), repo.Owner, repo.Name, issue, opt)
		if err != nil {
			return 0, false, c.wrap(err, fmt.Sprintf("list the comments of #%d", issue))
		}
		for _, cm := range cs {
			if strings.Contains(cm.GetBody(), marker) {
				return cm.GetID(), true, nil
			}
		}
		if resp.NextPage == 0 {
			return 0, false, nil
		}
		opt.Page = resp.NextPage
	}
}

// Labels lists the labels of an issue or pull request.
func (c *Client) Labels(ctx context.Context, repo Repo, issue int) ([]string, error) {
	if err := checkRepo(repo); err != nil {
		return nil, err
	}
	var out []string
	opt := &gh.ListOptions{PerPage: 100}
	for {
		ls, resp, err := c.gh.Issues.ListLabelsByIssue(forRepo(ctx, repo), repo.Owner, repo.Name, issue, opt)
		if err != nil {
			return nil, c.wrap(err, fmt.Sprintf("list the labels of #%d", issue))
		}
		for _, l := range ls {
			out = append(out, l.GetName())
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
}

// AddLabel adds a label (GitHub creates an unknown one); a label the
// issue has already is no change.
func (c *Client) AddLabel(ctx context.Context, repo Repo, issue int, name string) error {
	if err := checkRepo(repo); err != nil {
		return err
	}
	_, _, err := c.gh.Issues.AddLabelsToIssue(forRepo(ctx, repo), repo.Owner, repo.Name, issue, []string{name})
	return c.wrap(err, fmt.Sprintf("label #%d", issue))
}

// RemoveLabel removes a label; one the issue does not have is success.
func (c *Client) RemoveLabel(ctx context.Context, repo Repo, issue int, name string) error {
	if err := checkRepo(repo); err != nil {
		return err
	}
	_, err := c.gh.Issues.RemoveLabelForIssue(forRepo(ctx, repo), repo.Owner, repo.Name, issue, name)
	werr := c.wrap(err, fmt.Sprintf("unlabel #%d", issue))
	if statusIs(werr, http.StatusNotFound) {
		return nil
	}
	return werr
}

// openPRsOf lists the open pull requests from branch head.
func (c *Client) openPRsOf(ctx context.Context, repo Repo, head string) ([]*gh.PullRequest, error) {
	ps, _, err := c.gh.PullRequests.List(forRepo(ctx, repo), repo.Owner, repo.Name,
		&gh.PullRequestListOptions{State: "open", Head: repo.Owner + ":" + head, ListOptions: gh.ListOptions{PerPage: 100}})
	if err != nil {
		return nil, c.wrap(err, "list the pull requests of "+head)
	}
	return ps, nil
}

// OpenDraftPR opens a draft pull request from head into base, labelled
// label, and returns its number. It is idempotent: GitHub allows one open
// pull request per head and base, so an existing one is found and
// returned (and labelled) instead.
func (c *Client) OpenDraftPR(ctx context.Context, repo Repo, head, base, title, body, label string) (int, error) {
	if err := checkRepo(repo); err != nil {
		return 0, err
	}
	number := 0
	ps, err := c.openPRsOf(ctx, repo, head)
	if err != nil {
		return 0, err
	}
	if len(ps) > 0 {
		number = ps[0].GetNumber()
	} else {
		p, _, err := c.gh.PullRequests.Create(forRepo(ctx, repo), repo.Owner, repo.Name, gh.CreatePullRequest{
			Title: new(title), Head: head, Base: base, Body: new(body), Draft: new(true),
		})
		if err != nil {
			return 0, c.wrap(err, "open a pull request for "+head)
		}
		number = p.GetNumber()
	}
	if label != "" {
		if err := c.AddLabel(ctx, repo, number, label); err != nil {
			return number, err
		}
	}
	return number, nil
}

// ClosePRsOf closes every open pull request from branch head; none is
// success.
func (c *Client) ClosePRsOf(ctx context.Context, repo Repo, head string) error {
	if err := checkRepo(repo); err != nil {
		return err
	}
	ps, err := c.openPRsOf(ctx, repo, head)
	if err != nil {
		return err
	}
	for _, p := range ps {
		_, _, err := c.gh.PullRequests.Edit(forRepo(ctx, repo), repo.Owner, repo.Name, p.GetNumber(), &gh.PullRequest{State: new("closed")})
		if err != nil {
			return c.wrap(err, fmt.Sprintf("close pull request #%d", p.GetNumber()))
		}
	}
	return nil
}
