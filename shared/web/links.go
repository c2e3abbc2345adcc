package web

import (
	"net/url"
	"strconv"

	"github.com/mainguard/mainguard/shared/repository"
)

// The app's own addresses, relative to its root, in the shapes the API
// hands out absolute (testview's html_url, the driver's DetailsURL): a
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

// gitHubPR is a pull request's page on its host.
func gitHubPR(repo repository.Ref, n int) string { return repo.HTMLURL() + "/pull/" + strconv.Itoa(n) }

// gitHubCommit is a commit's page on its host, where its checks show.
func gitHubCommit(repo repository.Ref, sha string) string {
	return repo.HTMLURL() + "/commit/" + url.PathEscape(sha)
}

// gitHubTree is a branch's page on its host.
func gitHubTree(repo repository.Ref, branch string) string {
	return repo.HTMLURL() + "/tree/" + url.PathEscape(branch)
}

// pager is a paged list's links: to its first page, from a later one, and
// to the next page, when more follow.
type pager struct{ First, Next string }

// Paged says the list runs over more than one page.
func (p pager) Paged() bool { return p.First != "" || p.Next != "" }
