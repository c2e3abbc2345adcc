package web

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/mainguard/mainguard/shared/repository"
)

// The app's own addresses, relative to its root, in the shapes the API
// hands out absolute (healthview's html_url, queuesvc's DetailsURL): a
// page works on whatever host serves it.

func orgHref(org string) string { return "/" + url.PathEscape(org) }

func queueHref(org string, repo repository.Ref, branch string) string {
	return orgHref(org) + "/merge-queue/" + url.PathEscape(repo.Owner) + "/" + url.PathEscape(repo.Name) + "/" + url.PathEscape(branch)
}

func prHref(org string, repo repository.Ref, branch string, n int) string {
	return queueHref(org, repo, branch) + "/pr/" + strconv.Itoa(n)
}

// repoQuery names a repository in a query: repo=owner/name, and its host
// when it is not github.com (the API's html_url names none).
func repoQuery(repo repository.Ref) string {
	q := "repo=" + url.QueryEscape(repo.Owner+"/"+repo.Name)
	if repo.Host != "github.com" {
		q += "&host=" + url.QueryEscape(repo.Host)
	}
	return q
}

func testsHref(org string, repo repository.Ref) string {
	return orgHref(org) + "/flaky-tests?" + repoQuery(repo)
}

func testHref(org string, repo repository.Ref, id string) string {
	return orgHref(org) + "/flaky-tests/test/" + url.PathEscape(id) + "?" + repoQuery(repo)
}

// onHost is a repository's page on its host. The merge queue's hosts
// (Hosts) are served by the GitHub the deployment uses, whose pages are at
// its web address (config GitHubWebURL: github.com, a GitHub Enterprise
// host, or the simulated GitHub's own address); any other host's at
// https://{host}/{owner}/{name}.
func (w *Web) onHost(repo repository.Ref) string {
	if w.GitHubWeb != "" && slices.ContainsFunc(w.Hosts, func(h string) bool { return strings.EqualFold(h, repo.Host) }) {
		return strings.TrimRight(w.GitHubWeb, "/") + "/" + url.PathEscape(repo.Owner) + "/" + url.PathEscape(repo.Name)
	}
	return repo.HTMLURL()
}

// gitHubPR is a pull request's page on its host.
func (w *Web) gitHubPR(repo repository.Ref, n int) string {
	return w.onHost(repo) + "/pull/" + strconv.Itoa(n)
}

// gitHubCommit is a commit's page on its host, where its checks show.
func (w *Web) gitHubCommit(repo repository.Ref, sha string) string {
	return w.onHost(repo) + "/commit/" + url.PathEscape(sha)
}

// gitHubTree is a branch's page on its host.
func (w *Web) gitHubTree(repo repository.Ref, branch string) string {
	return w.onHost(repo) + "/tree/" + url.PathEscape(branch)
}

// pager is a paged list's links: to its first page, from a later one, and
// to the next page, when more follow.
type pager struct{ First, Next string }

// Paged says the list runs over more than one page.
func (p pager) Paged() bool { return p.First != "" || p.Next != "" }
