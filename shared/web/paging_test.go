package web_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testhealth"
)

var nextRE = regexp.MustCompile(`<a href="([^"]+)" rel="next">Next page</a>`)

// walkPages follows the Next page links from path, as a person reading
// on does, and returns what row's first group matches on each page, and
// the pages.
func (e *env) walkPages(c *http.Client, path string, row *regexp.Regexp) (rows [][]string, bodies []string) {
	e.tb.Helper()
	for path != "" {
		if len(bodies) == 20 {
			e.tb.Fatalf("still a Next link after %d pages", len(bodies))
		}
		a := e.get(c, path)
		if a.code != http.StatusOK {
			e.tb.Fatalf("%s: %d %s", path, a.code, a.body)
		}
		var got []string
		for _, m := range row.FindAllStringSubmatch(a.body, -1) {
			got = append(got, html.UnescapeString(m[1]))
		}
		rows, bodies = append(rows, got), append(bodies, a.body)
		path = ""
		if m := nextRE.FindStringSubmatch(a.body); m != nil {
			path = html.UnescapeString(m[1])
		}
	}
	return rows, bodies
}

// onceEach fails unless the pages' rows hold each of want exactly once.
func onceEach(t *testing.T, pages [][]string, want []string) {
	t.Helper()
	seen := map[string]int{}
	for i, rows := range pages {
		for _, r := range rows {
			if seen[r]++; seen[r] > 1 {
				t.Errorf("page %d: %s again", i+1, r)
			}
		}
	}
	for _, w := range want {
		if seen[w] == 0 {
			t.Errorf("%s is on no page", w)
		}
		delete(seen, w)
	}
	if len(seen) > 0 {
		t.Errorf("pages hold others: %v", seen)
	}
}

// TestTestListPages: the test list pages through its three indexes (two
// tests of each a page here): the Next links keep the filters and sort,
// every flaky, broken and quarantined test is on exactly one page (a
// flaky one quarantined too with the flaky ones), and the last page has
// no Next link.
func TestTestListPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.App.Web.TestsPerIndex = 2
	ctx := context.Background()
	ref := repository.Ref{Host: "github.com", Owner: "acme", Name: "web"}
	on := true
	if _, err := e.App.Store.UpdateRepo(ctx, "acme", ref, store.RepoSettings{Health: testhealth.HealthSettings{QuarantineEnabled: &on}}); err != nil {
		t.Fatal(err)
	}
	var want []string
	seed := func(name, status, override string) {
		tc := testhealth.TestCase{
			Org: "acme", Repo: ref, Name: name, FirstSeen: t0, QuarantineOverride: override,
			ID:     testhealth.TestID(testhealth.Identity{Org: "acme", Repo: ref.Key(), Name: name}),
			Status: testhealth.TestStatus{Value: status, Reason: "seeded", Timestamp: t0},
		}
		if err := e.App.Store.PutTestCase(ctx, tc); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	for i := range 5 {
		if i < 4 {
			seed(fmt.Sprintf("flaky_%d", i), testhealth.Flaky, "")
		}
		seed(fmt.Sprintf("broken_%d", i), testhealth.Broken, "")
	}
	seed("flaky_always", testhealth.Flaky, testhealth.AlwaysQuarantine)
	for i := range 3 {
		seed(fmt.Sprintf("healthy_always_%d", i), testhealth.Healthy, testhealth.AlwaysQuarantine)
	}
	c := e.client()
	e.signIn(c, "acme")
	row := regexp.MustCompile(`<tr><td><a href="/acme/flaky-tests/test/[^"]+">([^<]+)</a>`)
	pages, bodies := e.walkPages(c, "/acme/flaky-tests?repo=acme%2Fweb&sort=prs", row)
	onceEach(t, pages, want)
	// 5 flaky, 5 broken and 4 overridden to always (one of them flaky) at
	// 2 a page. (An index that ends a page exactly takes one more, empty:
	// DynamoDB cannot tell whether more follow.)
	if len(pages) != 3 {
		t.Errorf("%d pages, want 3: %v", len(pages), pages)
	}
	for i, body := range bodies {
		if !strings.Contains(body, "the sort applies within this page") {
			t.Errorf("page %d does not say the sort is the page's", i+1)
		}
		if m := nextRE.FindStringSubmatch(body); m != nil {
			next, _ := url.Parse(html.UnescapeString(m[1]))
			if q := next.Query(); q.Get("sort") != "prs" || q.Get("repo") != "acme/web" {
				t.Errorf("page %d: the Next link %s drops the sort or the repository", i+1, next)
			}
		}
		if (i > 0) != strings.Contains(body, ">First page</a>") {
			t.Errorf("page %d: a First page link %t, want %t", i+1, !(i > 0), i > 0)
		}
	}
	// Filters apply on every page: the broken ones alone, still once each.
	var wantBroken []string
	for _, name := range want {
		if strings.HasPrefix(name, "broken_") {
			wantBroken = append(wantBroken, name)
		}
	}
	broken, _ := e.walkPages(c, "/acme/flaky-tests?repo=acme%2Fweb&status=broken", row)
	onceEach(t, broken, wantBroken)
}

// TestBadCursorIsBadRequest: a cursor that is no place in its list is a
// 400 page saying so, whichever list it names.
func TestBadCursorIsBadRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.uploadFlaky()
	c := e.client()
	e.signIn(c, "acme")
	id := e.testID("test_login")
	for _, q := range []string{
		"flaky_after=nope",
		"broken_after=",
		"flaky_after=" + strings.ToUpper(id),
		"quarantine_after=" + id, // no A# before the id
		"quarantine_after=" + url.QueryEscape("A#"+id+"'"),
	} {
		a := e.get(c, "/acme/flaky-tests?repo=acme%2Fweb&"+q)
		param, _, _ := strings.Cut(q, "=")
		if a.code != http.StatusBadRequest || !strings.Contains(a.body, "This address&#39;s "+param+" is not a place in the list of tests.") {
			t.Errorf("%s: %d %s", q, a.code, a.body)
		}
	}
	if a := e.get(c, "/acme/flaky-tests?repo=acme%2Fweb&quarantine_after="+url.QueryEscape("A#"+id)); a.code != http.StatusOK {
		t.Errorf("a good cursor: %d %s", a.code, a.body)
	}
}

// TestOrgHomePages: the home pages through the repositories (two a page
// here) in name order, each on one page, with the queues of the page's
// repositories only; the last page has no Next link.
func TestOrgHomePages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.App.Web.ReposPerPage = 2
	e.api("acme", "createQueue", map[string]any{"repo": webRepo, "targetBranch": "main"})
	ctx := context.Background()
	want := []string{"github.com/acme/web"}
	for i := range 4 {
		ref := repository.Ref{Host: "github.com", Owner: "acme", Name: fmt.Sprintf("repo%d", i)}
		if _, err := e.App.Store.UpdateRepo(ctx, "acme", ref, store.RepoSettings{}); err != nil {
			t.Fatal(err)
		}
		want = append(want, ref.String())
	}
	if _, err := e.App.Store.UpdateRepo(ctx, "acme", repository.Ref{Host: "github.com", Owner: "acme", Name: "web"}, store.RepoSettings{}); err != nil {
		t.Fatal(err)
	}
	c := e.client()
	e.signIn(c, "acme")
	pages, bodies := e.walkPages(c, "/acme", regexp.MustCompile(`<tr><td><a href="/acme/flaky-tests\?[^"]+">([^<]+)</a>`))
	onceEach(t, pages, want)
	if len(pages) != 3 {
		t.Fatalf("%d pages, want 3: %v", len(pages), pages)
	}
	// acme/web sorts last: its queue is on the last page alone.
	for i, body := range bodies {
		if has := strings.Contains(body, `href="/acme/merge-queue/acme/web/main"`); has != (i == 2) {
			t.Errorf("page %d: the queue of acme/web shown %t", i+1, has)
		}
	}
	// Any name places a page: after repo1, repo2 and repo3.
	after, _ := e.walkPages(c, "/acme?repos_after=github.com%2Facme%2Frepo15", regexp.MustCompile(`<tr><td><a href="/acme/flaky-tests\?[^"]+">([^<]+)</a>`))
	if got := fmt.Sprint(after); got != "[[github.com/acme/repo2 github.com/acme/repo3] [github.com/acme/web]]" {
		t.Errorf("after repo15: %s", got)
	}
}
