package web

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/healthview"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// listLimit is how many entries of each index a page of the test list
// reads (Web.TestsPerIndex, when set).
const listLimit = 100

// repoOf is the repository a test page's query names: repo=owner/name, as
// the API's html_url has it, on github.com unless host= says otherwise.
func repoOf(r *http.Request) (repository.Ref, error) {
	q := r.URL.Query()
	owner, name, ok := strings.Cut(q.Get("repo"), "/")
	if !ok || owner == "" || name == "" {
		return repository.Ref{}, errs.E(errs.Invalid, "the address needs ?repo=owner/name")
	}
	host := q.Get("host")
	if host == "" {
		host = "github.com"
	}
	return repository.Ref{Host: host, Owner: owner, Name: name}, nil
}

type testRow struct {
	Name, Href, Status, Reason, Owners string
	LastFailure                        stamp
	FailureRate                        string // 7 days, as a percentage
	rate                               float64
	last                               time.Time
	PRs                                int
	Quarantined                        bool
}

type testListPage struct {
	Repo, Status, Owner, Sort string
	RepoParam, HostParam      string // the query's repo= and host=, kept by the filter form
	Quarantined               bool
	Tests                     []testRow
	Self                      string // the page's address without filters
	Pager                     pager
}

// testIndex is an index the test list reads, and the query parameter
// that carries its cursor from page to page: the last sort key read.
type testIndex struct {
	param string
	// quarantine: the quarantine index, whose flaky and broken tests the
	// other two list. Its keys are a test id after "A#" (overridden to
	// always) or "U#" (flaky or broken, quarantined automatically): it
	// adds only tests of the first part, and is done at the second.
	quarantine bool
	list       func(store.PageQuery) (store.Page, error)
}

// isKey says whether key is a cursor into the index: a test id as the
// index keeps it (lower case), after "A#" in the quarantine index.
func (ix testIndex) isKey(key string) bool {
	if ix.quarantine {
		id, ok := strings.CutPrefix(key, "A#")
		if !ok {
			return false
		}
		key = id
	}
	return key == strings.ToLower(key) && api.LimitOf("test_id").Chars.Valid(key)
}

// testCursors are the cursors of a test list page's address, by
// parameter: nil on the first page, which reads every index from its
// start; a later page holds those of the indexes not done yet, and reads
// only them. A cursor that is no index key is Invalid.
func testCursors(q url.Values, indexes []testIndex) (map[string]string, error) {
	var out map[string]string
	for _, ix := range indexes {
		if !q.Has(ix.param) {
			continue
		}
		after := q.Get(ix.param)
		if !ix.isKey(after) {
			return nil, errs.E(errs.Invalid, "This address's %s is not a place in the list of tests. Follow the list's own links, or start again from its first page.", ix.param)
		}
		if out == nil {
			out = map[string]string{}
		}
		out[ix.param] = after
	}
	return out, nil
}

// testList serves GET /{org}/flaky-tests?repo=…: the repository's flaky,
// broken and quarantined tests, filtered by status, owner and quarantine,
// sorted by failure rate (7 days), PRs impacted or last failure. It pages
// through the three indexes side by side, so a page sorts its own tests
// only: the next page's address carries each index's cursor, and the
// filters and sort.
//
// DynamoDB, per page: 1 GetItem (the repository's settings), up to 3
// Queries (the flaky and broken indexes, the quarantine index; at most
// listLimit entries each; a later page reads only the indexes not done)
// and the BatchGetItems of their tests (each test is three items: at most
// 3 per index).
func (w *Web) testList(rw http.ResponseWriter, r *http.Request, s session) error {
	ctx := r.Context()
	ref, err := repoOf(r)
	if err != nil {
		return err
	}
	if err := w.seeRepo(ctx, s, ref); err != nil {
		return err
	}
	repo, err := w.Store.GetRepo(ctx, s.Org, ref)
	if err != nil {
		return err
	}
	indexes := w.testIndexes(ctx, s.Org, repo.Ref)
	q := r.URL.Query()
	cursors, err := testCursors(q, indexes)
	if err != nil {
		return err
	}
	page := testListPage{
		Repo: repo.Ref.String(), Status: q.Get("status"), Owner: strings.TrimSpace(q.Get("owner")),
		Quarantined: q.Get("quarantined") == "on", Sort: cmp.Or(q.Get("sort"), "failure_rate"),
		Self: testsHref(s.Org, repo.Ref), RepoParam: q.Get("repo"), HostParam: q.Get("host"),
	}
	// The first and next pages keep the filters and sort, with no cursor
	// and with the open indexes' cursors.
	first := maps.Clone(q)
	for _, ix := range indexes {
		first.Del(ix.param)
	}
	next := maps.Clone(first)
	byID, err := w.readTestIndexes(indexes, cursors, next)
	if err != nil {
		return err
	}
	list := orgHref(s.Org) + "/flaky-tests?"
	if cursors != nil {
		page.Pager.First = list + first.Encode()
	}
	if len(next) > len(first) {
		page.Pager.Next = list + next.Encode()
	}
	page.Tests = w.testRows(page, byID, repo.Settings(), s.Org, repo.Ref)
	sortTestRows(page.Tests, page.Sort)
	return w.render(rw, r, http.StatusOK, &s, view{Title: "Tests of " + page.Repo,
		Crumbs: []crumb{{s.Org, orgHref(s.Org)}}}, page)
}

// testIndexes are the indexes the test list of repo reads: the flaky, the
// broken and the quarantined tests.
func (w *Web) testIndexes(ctx context.Context, org string, repo repository.Ref) []testIndex {
	unhealthy := func(status string) func(store.PageQuery) (store.Page, error) {
		return func(pq store.PageQuery) (store.Page, error) {
			return w.Store.ListUnhealthy(ctx, org, repo, status, pq)
		}
	}
	return []testIndex{
		{param: "flaky_after", list: unhealthy(testhealth.Flaky)},
		{param: "broken_after", list: unhealthy(testhealth.Broken)},
		{param: "quarantine_after", quarantine: true, list: func(pq store.PageQuery) (store.Page, error) {
			return w.Store.ListQuarantineCandidates(ctx, org, repo, false, pq)
		}},
	}
}

// readTestIndexes reads a page of each index still open (each one, on the
// first page: cursors nil), by test id, and sets in next the cursor of
// each index that has more.
func (w *Web) readTestIndexes(indexes []testIndex, cursors map[string]string, next url.Values) (map[string]testhealth.TestCase, error) {
	byID := map[string]testhealth.TestCase{}
	for _, ix := range indexes {
		after, ok := cursors[ix.param]
		if cursors != nil && !ok {
			continue // done on an earlier page
		}
		p, err := ix.list(store.PageQuery{Limit: cmp.Or(w.TestsPerIndex, listLimit), After: after})
		if err != nil {
			return nil, err
		}
		if p.Next != "" && !(ix.quarantine && strings.HasPrefix(p.Next, "U#")) {
			next.Set(ix.param, p.Next)
		}
		for _, tc := range p.Tests {
			// Each test on one page: a flaky or broken one with its
			// status's index, even when it is quarantined too.
			if ix.quarantine && (tc.Status.Value == testhealth.Flaky || tc.Status.Value == testhealth.Broken) {
				continue
			}
			byID[tc.ID] = tc
		}
	}
	return byID, nil
}

// testRows are the rows of the tests read that page's filters keep, as
// of now under the repository's settings.
func (w *Web) testRows(page testListPage, byID map[string]testhealth.TestCase, settings testhealth.Settings, org string, repo repository.Ref) []testRow {
	var rows []testRow
	now := w.Now()
	for _, tc := range byID {
		tc.Quarantined = testhealth.Quarantined(tc, settings)
		v := w.Viewer.Full(tc, settings, now)
		switch {
		case page.Status != "" && page.Status != v.Status.Value:
			continue
		case page.Quarantined && !tc.Quarantined:
			continue
		case page.Owner != "" && !slices.ContainsFunc(tc.Codeowners, func(o string) bool { return strings.EqualFold(o, page.Owner) }):
			continue
		case v.Status.Value == testhealth.Healthy && !tc.Quarantined:
			continue // a candidate overridden to always, in a repository that does not quarantine
		}
		row := testRow{
			Name: tc.Name, Href: testHref(org, repo, tc.ID), Status: v.Status.Value, Reason: v.Status.Reason,
			Owners: strings.Join(tc.Codeowners, ", "), rate: *v.FailureRateLast7d, FailureRate: percent(*v.FailureRateLast7d),
			PRs: v.PullRequestsImpacted, Quarantined: tc.Quarantined, last: lastFailure(tc),
		}
		row.LastFailure = stampOf(row.last, now)
		rows = append(rows, row)
	}
	return rows
}

// sortTestRows sorts rows by the page's sort (the PRs impacted, the last
// failure, or the failure rate), most first, then by name.
func sortTestRows(rows []testRow, sort string) {
	slices.SortFunc(rows, func(a, b testRow) int {
		var c int
		switch sort {
		case "prs":
			c = cmp.Compare(b.PRs, a.PRs)
		case "last_failure":
			c = b.last.Compare(a.last)
		default:
			c = cmp.Compare(b.rate, a.rate)
		}
		return cmp.Or(c, strings.Compare(a.Name, b.Name))
	})
}

func lastFailure(tc testhealth.TestCase) time.Time {
	var last time.Time
	for _, c := range tc.Failures {
		if c.Last.After(last) {
			last = c.Last
		}
	}
	return last
}

func percent(r float64) string { return strconv.FormatFloat(r*100, 'f', 1, 64) + "%" }

// runDays is how many days of failed runs a test's page lists.
const runDays = 3

type testPage struct {
	healthview.TestCase
	Repo, ListHref, Self  string
	Override              coded
	OverrideUntil         stamp // the override's end; none when it has none
	Since                 stamp // of its status
	Failures              []failureRow
	Rate24h, Rate7d       string
	FlakeSHA, FlakeBranch string
	Chart                 chart
	Runs                  []runRow
	Latest                *runRow
	QuarantineOn          bool
}

type runRow struct {
	At                                   stamp
	at                                   time.Time
	Branch, SHA, Status, Message, PRHref string
	PR                                   int
}

type failureRow struct {
	Summary string
	Count   int
	Last    stamp
}

// testPage serves GET /{org}/flaky-tests/test/{id}?repo=…, the html_url
// of the API: status and reason, rates, daily failure rate over the
// history kept, most common failures, its latest run and its failed runs
// of the last days,
// owners, ticket and quarantine override.
//
// DynamoDB: 1 BatchGetItem (the repository and the test's items, as
// get-test-details), 1 GetItem (the upload of its latest run) and 2
// Queries per day of failed runs listed (runDays + 1 days touched: the
// day's runs and the earlier layout's index; each a page per 1 MB of the
// repository's failures that day).
func (w *Web) testPage(rw http.ResponseWriter, r *http.Request, s session) error {
	ctx := r.Context()
	ref, err := repoOf(r)
	if err != nil {
		return err
	}
	if err := w.seeRepo(ctx, s, ref); err != nil {
		return err
	}
	id := strings.ToLower(r.PathValue("id"))
	repo, tc, err := w.Store.ShowTest(ctx, s.Org, ref, id)
	if err != nil {
		return err
	}
	now := w.Now()
	settings := repo.Settings()
	tc.Quarantined = testhealth.Quarantined(tc, settings)
	v := w.Viewer.Full(tc, settings, now)
	override := healthview.OverrideName(tc.QuarantineOverride)
	page := testPage{
		TestCase: v, Repo: repo.Ref.String(), Override: coded{Words: overrideWords[override], Code: override},
		OverrideUntil: stampOfView(healthview.OverrideUntil(tc), now),
		Since:         stampOfView(v.Status.Timestamp, now),
		ListHref:      testsHref(s.Org, repo.Ref), Self: testHref(s.Org, repo.Ref, tc.ID),
		Rate24h: percent(*v.FailureRateLast24h), Rate7d: percent(*v.FailureRateLast7d),
		Chart: dailyRateChart(tc, now), QuarantineOn: settings.QuarantineEnabled,
	}
	if tc.Flake != nil {
		page.FlakeSHA, page.FlakeBranch = tc.Flake.SHA, tc.Flake.Branch
	}
	if v.MostCommonFailures != nil {
		for _, f := range *v.MostCommonFailures {
			page.Failures = append(page.Failures, failureRow{Summary: f.Summary, Count: f.OccurrenceCount, Last: stampOfView(f.LastOccurrence, now)})
		}
	}
	if page.Runs, err = w.failedRuns(ctx, s.Org, repo.Ref, tc.ID, now); err != nil {
		return err
	}
	if page.Latest, err = w.latestRun(ctx, s.Org, repo.Ref, tc, now); err != nil {
		return err
	}
	return w.render(rw, r, http.StatusOK, &s, view{Title: tc.Name,
		Crumbs: []crumb{{s.Org, orgHref(s.Org)}, {page.Repo, page.ListHref}}}, page)
}

// latestRun is the test's latest run of any outcome: its counter item
// names the upload, whose record has the commit. Nil before the first run
// that names it, and once the upload record expired.
func (w *Web) latestRun(ctx context.Context, org string, repo repository.Ref, tc testhealth.TestCase, now time.Time) (*runRow, error) {
	if tc.LastUpload == "" {
		return nil, nil
	}
	up, err := w.Store.GetUpload(ctx, org, tc.LastUpload)
	if errs.Is(err, errs.NotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	row := &runRow{At: stampOf(tc.LastRun, now), Branch: up.Branch, SHA: up.SHA, Status: tc.LastOutcome, PR: up.PR}
	if up.PR > 0 {
		row.PRHref = w.gitHubPR(repo, up.PR)
	}
	return row, nil
}

// failedRuns are the test's failed runs of the last runDays days, newest
// first: passing runs are counted, not kept.
func (w *Web) failedRuns(ctx context.Context, org string, repo repository.Ref, id string, now time.Time) ([]runRow, error) {
	runs, err := w.Store.FailedRunsBetween(ctx, org, repo, now.Add(-runDays*testhealth.Day), now.Add(time.Second))
	if err != nil {
		return nil, err
	}
	var out []runRow
	for _, run := range runs {
		if !strings.EqualFold(run.TestID, id) {
			continue
		}
		row := runRow{At: stampOf(run.At, now), at: run.At, Branch: run.Branch, SHA: run.SHA, Status: run.Status, Message: run.Message, PR: run.PR}
		if run.PR > 0 {
			row.PRHref = w.gitHubPR(repo, run.PR)
		}
		out = append(out, row)
	}
	slices.SortFunc(out, func(a, b runRow) int { return b.at.Compare(a.at) })
	return out, nil
}

// dailyRateChart is the test's failure rate of each day of the history
// its hour counters keep (testhealth.Keep), up to now's day: a gap for a
// day without runs, so the chart spans the same days whatever the test's
// age.
func dailyRateChart(tc testhealth.TestCase, now time.Time) chart {
	c := chart{Title: "Daily failure rate", XLabel: "day (UTC)", YLabel: "failed runs / all runs", Kind: percentKind, TimeFormat: "2 Jan"}
	passed, failed := map[int64]int{}, map[int64]int{}
	add := func(m map[string]int, into map[int64]int) {
		for k, n := range m {
			if h, err := strconv.ParseInt(k, 10, 64); err == nil {
				into[h/24] += n
			}
		}
	}
	add(tc.PassedByHour, passed)
	add(tc.FailedByHour, failed)
	first, last := now.Add(-testhealth.Keep).Unix()/86400, now.Unix()/86400
	for d := first; d <= last; d++ {
		b := bar{At: time.Unix(d*86400, 0)}
		if n := passed[d] + failed[d]; n > 0 {
			b.Value = 100 * float64(failed[d]) / float64(n)
		} else {
			b.Empty = true
		}
		c.Bars = append(c.Bars, b)
	}
	return c
}

// setOverride serves the test page's form: the quarantine override, set
// as `mainguard test quarantine` sets it (healthsvc.SetOverride, with its
// event), then back to the page. No API endpoint sets it, so a token needs
// the admin scope; a person signed in with GitHub, write access.
//
// DynamoDB: 1 BatchGetItem and 1 TransactWriteItems (the health write and
// its event), retried on a concurrent change.
func (w *Web) setOverride(rw http.ResponseWriter, r *http.Request, s session) error {
	ref, err := repoOf(r)
	if err != nil {
		return err
	}
	if err := w.allow(r.Context(), s, ref, api.ScopeAdmin, "A quarantine override"); err != nil {
		return err
	}
	override := r.PostFormValue("override")
	if override == "UNSPECIFIED" {
		override = ""
	}
	var until time.Time
	if v := strings.TrimSpace(r.PostFormValue("until")); v != "" && override != "" {
		if until, err = testhealth.ParseUntil(v); err != nil {
			return err
		}
	}
	id := strings.ToLower(r.PathValue("id"))
	actor := healthview.Actor{FullName: fmt.Sprintf("web app (%s)", s.Org)}
	if s.Login != "" {
		actor.FullName = fmt.Sprintf("web app (@%s)", s.Login)
	}
	tc, err := w.Health.SetOverride(r.Context(), s.Org, ref, id, override, until, actor, "set in the web app")
	if err != nil {
		return err
	}
	http.Redirect(rw, r, testHref(s.Org, ref, tc.ID), http.StatusSeeOther)
	return nil
}
