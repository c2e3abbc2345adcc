package web_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The browser tests drive real headless Chromium (Debian package
// chromium; make test installs it) through chromedp: one browser for
// the package, one browser context (its own cookies) per test. Each test
// saves PNG screenshots in its artifact directory: run with
// `go test -artifacts -outputdir DIR` to keep them.

var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel func()
	err    error
}

// closeBrowser stops the shared browser, if a test started it.
func closeBrowser() {
	if browser.cancel != nil {
		browser.cancel()
	}
}

// tab is a new tab of the shared browser in a browser context of its own,
// closed when t ends; its actions give up a minute before the test
// binary's deadline.
func tab(t *testing.T) context.Context {
	t.Helper()
	browser.once.Do(func() {
		path, err := exec.LookPath("chromium")
		if err != nil {
			browser.err = fmt.Errorf("chromium is not installed (make chromium installs the Debian package): %w", err)
			return
		}
		opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1280, 900))
		actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, cancelBrowser := chromedp.NewContext(actx)
		browser.ctx, browser.cancel = bctx, func() { cancelBrowser(); cancelAlloc() }
		browser.err = chromedp.Do(bctx) // starts the browser
	})
	if browser.err != nil {
		t.Fatal(browser.err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	// A guard against a hang, not a speed requirement: a loaded machine
	// may take minutes over a page, so the limit is the test binary's.
	if deadline, ok := t.Deadline(); ok {
		var cancelGuard context.CancelFunc
		ctx, cancelGuard = context.WithDeadline(ctx, deadline.Add(-time.Minute))
		t.Cleanup(cancelGuard)
	}
	return ctx
}

// do runs steps in the tab, failing the test on an error.
func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// open navigates to path and fails unless the page answers status.
func open(t *testing.T, ctx context.Context, e *env, path string, status int64) {
	t.Helper()
	resp, err := chromedp.RunResponse(ctx, chromedp.Navigate(e.URL+path))
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	if resp.Status != status {
		t.Fatalf("open %s: %d, want %d", path, resp.Status, status)
	}
}

// text is the visible text of the first element css selects.
func text(t *testing.T, ctx context.Context, css string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(css)))
	if err != nil {
		t.Fatalf("text of %s: %v", css, err)
	}
	return s
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// contains fails unless the page's main text holds every want.
func contains(t *testing.T, ctx context.Context, want ...string) {
	t.Helper()
	body := text(t, ctx, "main")
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("the page does not show %q; it shows:\n%s", w, body)
		}
	}
}

// screenshot saves the whole page as name.png in the test's artifacts.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.ArtifactDir(), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", path)
}

// linksResolve follows every link of the page to this site with a
// signed-in client, and every link to the repository's host (the
// simulated GitHub here, whose pages stand for GitHub's): each must
// answer 200.
func linksResolve(t *testing.T, ctx context.Context, e *env) {
	t.Helper()
	hrefs := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("main a")).map(a => a.href)`)
	c := e.client()
	e.signIn(c, "acme")
	n := 0
	for _, h := range hrefs {
		if strings.HasPrefix(h, e.Sim.URL()+"/") {
			resp, err := http.Get(h)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
				t.Errorf("link %s: %d %s", h, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			continue
		}
		path, ok := strings.CutPrefix(h, e.URL)
		if !ok {
			continue // elsewhere: the CI's page of a status
		}
		n++
		if a := e.get(c, path); a.code != 200 {
			t.Errorf("link %s: %d", path, a.code)
		}
	}
	if n == 0 {
		t.Errorf("no link to this site on the page")
	}
}

// chartsLabelled checks the page's charts: want of them, each with a
// title, labelled axes and tick labels; y ticks round and in one unit
// (axisRound), x ticks distinct, and no bar wider than a bar.
func chartsLabelled(t *testing.T, ctx context.Context, want int) {
	t.Helper()
	got := eval[[]struct {
		Title, X, Y    string
		YTicks, XTicks []string
		Width          float64
		Widest         float64
	}](t, ctx, `Array.from(document.querySelectorAll("svg.chart")).map(s => ({
		Title: s.querySelector("title").textContent,
		X: s.querySelector("text.x-label").textContent,
		Y: s.querySelector("text.y-label").textContent,
		YTicks: Array.from(s.querySelectorAll("text.y-tick")).map(e => e.textContent),
		XTicks: Array.from(s.querySelectorAll("text.x-tick")).map(e => e.textContent),
		Width: s.getBoundingClientRect().width,
		Widest: Math.max(0, ...Array.from(s.querySelectorAll("rect")).map(r => r.width.baseVal.value))}))`)
	if len(got) != want {
		t.Fatalf("%d charts, want %d", len(got), want)
	}
	for _, c := range got {
		if c.Title == "" || c.X == "" || c.Y == "" || len(c.YTicks) < 2 || len(c.XTicks) < 1 || c.Width < 200 {
			t.Errorf("chart not labelled or not drawn: %+v", c)
		}
		if err := axisRound(c.YTicks); err != nil {
			t.Errorf("%s: y axis %q: %v", c.Title, c.YTicks, err)
		}
		if dup := duplicate(c.XTicks); dup != "" {
			t.Errorf("%s: x tick %q twice: %q", c.Title, dup, c.XTicks)
		}
		if c.Widest > 40 {
			t.Errorf("%s: a bar %.0f units wide of %.0f: one bucket fills the chart", c.Title, c.Widest, c.Width)
		}
	}
}

var tickRE = regexp.MustCompile(`^(\d+)(%| s| min| h)?$`)

// axisRound checks y tick labels: whole numbers in one unit, from 0 up by
// one step of 1, 2 or 5 times a power of ten, so no two are alike.
func axisRound(labels []string) error {
	var unit string
	var vals []int
	for i, l := range labels {
		m := tickRE.FindStringSubmatch(l)
		if m == nil {
			return fmt.Errorf("%q is not a whole number with a unit", l)
		}
		if i > 0 && m[2] != unit {
			return fmt.Errorf("units %q and %q on one axis", unit, m[2])
		}
		unit = m[2]
		v, _ := strconv.Atoi(m[1])
		vals = append(vals, v)
	}
	if vals[0] != 0 {
		return fmt.Errorf("the axis starts at %d, not 0", vals[0])
	}
	step := vals[1] - vals[0]
	for i := 1; i < len(vals); i++ {
		if vals[i]-vals[i-1] != step {
			return fmt.Errorf("uneven steps")
		}
	}
	for p := 1; ; p *= 10 {
		if step == p || step == 2*p || step == 5*p {
			return nil
		}
		if step < p {
			return fmt.Errorf("step %d is not 1, 2 or 5 times a power of ten", step)
		}
	}
}

func duplicate(ss []string) string {
	seen := map[string]bool{}
	for _, s := range ss {
		if seen[s] {
			return s
		}
		seen[s] = true
	}
	return ""
}

// codeRE is an UPPER_SNAKE token: a code of the API (a reason, a state).
var codeRE = regexp.MustCompile(`\b[A-Z][A-Z0-9]*(_[A-Z0-9]+)+\b`)

// readable checks what every page shows a person: no code of the API as
// the text of a table cell (reasons and states are in words, the code in
// a tooltip); every moment as "11:18 UTC, 27 Nov" with the exact RFC 3339
// time on hover, and none in another form; and no link to github.com,
// whose part the simulated GitHub plays here.
func readable(t *testing.T, ctx context.Context, e *env) {
	t.Helper()
	cells := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("main td, main th")).map(c => c.innerText)`)
	for _, c := range cells {
		if code := codeRE.FindString(c); code != "" {
			t.Errorf("a table cell shows the code %s: %q", code, c)
		}
	}
	times := eval[[][]string](t, ctx, `Array.from(document.querySelectorAll("main time")).map(e => [e.textContent, e.title, e.getAttribute("datetime")])`)
	for _, tm := range times {
		at, err := time.Parse(time.RFC3339, tm[1])
		if err != nil || tm[2] != tm[1] {
			t.Errorf("time %q: title %q, datetime %q: not RFC 3339", tm[0], tm[1], tm[2])
			continue
		}
		// The year shows when it is not this year's.
		if want := at.UTC().Format("15:04 UTC, 2 Jan"); tm[0] != want && tm[0] != want+at.UTC().Format(" 2006") {
			t.Errorf("time %s shown as %q, want %q", tm[1], tm[0], want)
		}
	}
	if other := regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}`).FindString(text(t, ctx, "main")); other != "" {
		t.Errorf("a time in another form: %q", other)
	}
	for _, h := range eval[[]string](t, ctx, `Array.from(document.querySelectorAll("a[href]")).map(a => a.href)`) {
		if strings.HasPrefix(h, "https://github.com") {
			t.Errorf("a link to github.com, not to the simulated GitHub at %s: %s", e.Sim.URL(), h)
		}
	}
}

// page checks the page open in the tab as every page is checked
// (readable) and saves its screenshot as name.
func page(t *testing.T, ctx context.Context, e *env, name string) {
	t.Helper()
	screenshot(t, ctx, name)
	readable(t, ctx, e)
}

// signInWithBrowser opens path signed out, is sent to the form, types
// the token and comes back to path.
func signInWithBrowser(t *testing.T, ctx context.Context, e *env, path string) {
	t.Helper()
	open(t, ctx, e, path, 200) // the sign-in form, after the redirect
	if loc := eval[string](t, ctx, "location.pathname"); loc != "/signin" {
		t.Fatalf("signed out, %s went to %s", path, loc)
	}
	page(t, ctx, e, "signin")
	do(t, ctx, chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), "mg_not_a_real_token"))
	if _, err := chromedp.RunResponse(ctx, chromedp.Submit(chromedp.CSS(`input[name="token"]`))); err != nil {
		t.Fatal(err)
	}
	if msg := text(t, ctx, `[role="alert"]`); msg != "That token was not accepted. Check it and try again." {
		t.Fatalf("bad token: %q", msg)
	}
	do(t, ctx, chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), e.Tokens["acme"]))
	if _, err := chromedp.RunResponse(ctx, chromedp.Submit(chromedp.CSS(`input[name="token"]`))); err != nil {
		t.Fatal(err)
	}
	if loc := eval[string](t, ctx, "location.pathname + location.search"); loc != path {
		t.Fatalf("after signing in: at %s, want %s", loc, path)
	}
}

// TestBrowserMergeQueue: a person signs in, opens the organization's home,
// the queue with PRs in several states driven through the GitHub test
// server, the timeline of a PR that failed and was tested again, and a
// failed PR's page, from which they resubmit it. Before, on the same
// scene (pagesEnv: the queue and uploads), PageCalls counts each page's
// DynamoDB calls.
func TestBrowserMergeQueue(t *testing.T) {
	t.Parallel()
	e, s, cookie, pages, logs := pagesEnv(t)
	t.Run("PageCalls", func(t *testing.T) { pageCalls(t, e, cookie, pages, logs) })
	ctx := tab(t)

	signInWithBrowser(t, ctx, e, "/acme")
	contains(t, ctx, "Merge queues", "github.com/acme/web", "main", "Running", "Repositories")
	if got := text(t, ctx, "main table tbody tr td:nth-child(4)"); got != "2" { // depth: testing and pending
		t.Errorf("depth on the home page: %q", got)
	}
	page(t, ctx, e, "org-home")
	linksResolve(t, ctx, e)

	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`a[href="/acme/merge-queue/acme/web/main"]`))); err != nil {
		t.Fatal(err)
	}
	contains(t, ctx, "Merge queue github.com/acme/web main",
		"Add four", "Testing", "on main", "Add five", "Pending", // enqueued, in order
		"Finished in the last 24 hours", "Add one", "Merged", "merged by the queue once its tests passed",
		"Add three", "Failed", "a required status failed on the test run", "Add six", "Cancelled", "cancelled on request",
		"Fix "+hostile, // the HTML title, as text
		"Estimated time to merge", "the median of")
	if main := text(t, ctx, "main"); strings.Contains(main, "lane") {
		t.Errorf("the queue page speaks of lanes, which a SINGLE queue has not:\n%s", main)
	}
	if rows := eval[int](t, ctx, `document.querySelectorAll("main table")[0].tBodies[0].rows.length`); rows != 2 {
		t.Errorf("%d enqueued rows, want 2", rows)
	}
	if code := eval[string](t, ctx, `Array.from(document.querySelectorAll("main td span[title]")).map(s => s.title).find(c => c.startsWith("TEST_RUN_")) || ""`); code != "TEST_RUN_REQUIRED_STATUS_FAILED" {
		t.Errorf("the reason's code is not in its tooltip: %q", code)
	}
	chartsLabelled(t, ctx, 2)
	page(t, ctx, e, "queue")
	linksResolve(t, ctx, e)

	open(t, ctx, e, fmt.Sprintf("/acme/merge-queue/acme/web/main/pr/%d", s.retested), 200)
	contains(t, ctx, "#2 Fix "+hostile, "Merged", "Timeline", "Failed", "Test runs", "trunk-merge/pr-2/")
	timeline := text(t, ctx, "main table")
	if i, j := strings.Index(timeline, "Failed"), strings.LastIndex(timeline, "Merged"); i < 0 || j < i {
		t.Errorf("the timeline does not show the failure before the merge:\n%s", timeline)
	}
	if runs := eval[int](t, ctx, `document.querySelectorAll(".run").length`); runs < 2 {
		t.Errorf("%d runs shown, want the failed one and the retest", runs)
	}
	if checks := eval[[]string](t, ctx, `Array.from(document.querySelectorAll(".run table a")).map(a => a.textContent)`); len(checks) < 2 || checks[0] != "ci" {
		t.Errorf("the runs' checks are not linked: %q", checks)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('button[value="resubmit"]').length`); n != 0 {
		t.Errorf("a merged PR's page offers to resubmit it")
	}
	page(t, ctx, e, "pr-timeline")
	linksResolve(t, ctx, e)

	// A failed PR says why, in words, and offers Resubmit: a form of the
	// page (its CSRF token) that submits it as submitPullRequest does.
	open(t, ctx, e, fmt.Sprintf("/acme/merge-queue/acme/web/main/pr/%d", s.failed), 200)
	contains(t, ctx, "#3 Add three", "Failed", "Why: required status ci failed on the test run", "Resubmit")
	page(t, ctx, e, "pr-failed")
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`button[value="resubmit"]`))); err != nil {
		t.Fatal(err)
	}
	if loc := eval[string](t, ctx, "location.pathname"); loc != fmt.Sprintf("/acme/merge-queue/acme/web/main/pr/%d", s.failed) {
		t.Errorf("after resubmitting: at %s", loc)
	}
	if st := e.state(s.failed); st != "NOT_READY" && st != "PENDING" && st != "TESTING" {
		t.Errorf("resubmitted, the API shows PR #%d %s", s.failed, st)
	}
	// Its timeline shows the second submission.
	// (Counted in the timeline's rows: the page's "Why:" line says it too.)
	if main := text(t, ctx, "main"); strings.Count(main, "Not ready\tsubmitted on request") != 2 {
		t.Errorf("the resubmitted PR's timeline does not show it submitted twice:\n%s", main)
	}
	page(t, ctx, e, "pr-resubmitted")

	// The error page, for a page that does not exist.
	open(t, ctx, e, "/acme/merge-queue/acme/web/nope", 404)
	contains(t, ctx, "There is no such page")
	page(t, ctx, e, "not-found")
}

// TestBrowserTestHealth: after uploads, a person opens the flaky-test list,
// a test's page with its chart and failed runs, and quarantines it.
func TestBrowserTestHealth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.uploadFlaky()
	ctx := tab(t)

	signInWithBrowser(t, ctx, e, "/acme/flaky-tests?repo=acme/web")
	contains(t, ctx, "Unhealthy and quarantined tests of github.com/acme/web", "test_login", hostile, "flaky", "pass-on-retry")
	if strings.Contains(text(t, ctx, "main"), "test_logout") {
		t.Errorf("a healthy test is listed")
	}
	page(t, ctx, e, "flaky-tests")
	linksResolve(t, ctx, e)

	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`a[href^="/acme/flaky-tests/test/`+e.testID("test_login")+`"]`))); err != nil {
		t.Fatal(err)
	}
	contains(t, ctx, "test_login", "flaky", "Failure rate, 24 h", "Daily failure rate", "Most common failures",
		"timeout "+hostile, "Latest run", "feature/x", "#17", "None: the repository's rule")
	chartsLabelled(t, ctx, 1)
	page(t, ctx, e, "test")

	do(t, ctx, chromedp.SetValue(chromedp.CSS(`select[name="override"]`), "ALWAYS_QUARANTINE"))
	if _, err := chromedp.RunResponse(ctx, chromedp.Submit(chromedp.CSS(`select[name="override"]`))); err != nil {
		t.Fatal(err)
	}
	contains(t, ctx, "Always quarantine")
	page(t, ctx, e, "test-quarantined")
}
