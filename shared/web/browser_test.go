package web_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
// signed-in client: each must answer 200.
func linksResolve(t *testing.T, ctx context.Context, e *env) {
	t.Helper()
	hrefs := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("main a")).map(a => a.href)`)
	c := e.client()
	e.signIn(c, "acme")
	n := 0
	for _, h := range hrefs {
		path, ok := strings.CutPrefix(h, e.URL)
		if !ok {
			continue // the repository's host: GitHub
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
// title, labelled axes and tick labels.
func chartsLabelled(t *testing.T, ctx context.Context, want int) {
	t.Helper()
	got := eval[[]map[string]any](t, ctx, `Array.from(document.querySelectorAll("svg.chart")).map(s => ({
		title: s.querySelector("title").textContent,
		x: s.querySelector("text.x-label").textContent,
		y: s.querySelector("text.y-label").textContent,
		yTicks: s.querySelectorAll("text.y-tick").length,
		xTicks: s.querySelectorAll("text.x-tick").length,
		width: s.getBoundingClientRect().width}))`)
	if len(got) != want {
		t.Fatalf("%d charts, want %d", len(got), want)
	}
	for _, c := range got {
		if c["title"] == "" || c["x"] == "" || c["y"] == "" || c["yTicks"].(float64) < 2 || c["xTicks"].(float64) < 1 || c["width"].(float64) < 200 {
			t.Errorf("chart not labelled or not drawn: %v", c)
		}
	}
}

// signInWithBrowser opens path signed out, is sent to the form, types
// the token and comes back to path.
func signInWithBrowser(t *testing.T, ctx context.Context, e *env, path string) {
	t.Helper()
	open(t, ctx, e, path, 200) // the sign-in form, after the redirect
	if loc := eval[string](t, ctx, "location.pathname"); loc != "/signin" {
		t.Fatalf("signed out, %s went to %s", path, loc)
	}
	screenshot(t, ctx, "signin")
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
// server, and the timeline of a PR that failed and was tested again.
func TestBrowserMergeQueue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.queueScene()
	ctx := tab(t)

	signInWithBrowser(t, ctx, e, "/acme")
	contains(t, ctx, "Merge queues", "github.com/acme/web", "main", "RUNNING", "Repositories")
	if got := text(t, ctx, "main table tbody tr td:nth-child(4)"); got != "2" { // depth: testing and pending
		t.Errorf("depth on the home page: %q", got)
	}
	screenshot(t, ctx, "org-home")
	linksResolve(t, ctx, e)

	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`a[href="/acme/merge-queue/acme/web/main"]`))); err != nil {
		t.Fatal(err)
	}
	contains(t, ctx, "Merge queue github.com/acme/web main",
		"Add four", "TESTING", "Add five", "PENDING", // enqueued, in order
		"Finished in the last 24 hours", "Add one", "MERGED", "Add three", "FAILED", "Add six", "CANCELLED",
		"Fix "+hostile, // the HTML title, as text
		"Estimated time to merge", "the median of")
	if rows := eval[int](t, ctx, `document.querySelectorAll("main table")[0].tBodies[0].rows.length`); rows != 2 {
		t.Errorf("%d enqueued rows, want 2", rows)
	}
	chartsLabelled(t, ctx, 2)
	screenshot(t, ctx, "queue")
	linksResolve(t, ctx, e)

	open(t, ctx, e, fmt.Sprintf("/acme/merge-queue/acme/web/main/pr/%d", s.retested), 200)
	contains(t, ctx, "#2 Fix "+hostile, "MERGED", "Timeline", "FAILED", "Test runs", "trunk-merge/pr-2/")
	timeline := text(t, ctx, "main table")
	if i, j := strings.Index(timeline, "FAILED"), strings.LastIndex(timeline, "MERGED"); i < 0 || j < i {
		t.Errorf("the timeline does not show the failure before the merge:\n%s", timeline)
	}
	if runs := eval[int](t, ctx, `document.querySelectorAll(".run").length`); runs < 2 {
		t.Errorf("%d runs shown, want the failed one and the retest", runs)
	}
	if checks := eval[[]string](t, ctx, `Array.from(document.querySelectorAll(".run table a")).map(a => a.textContent)`); len(checks) < 2 || checks[0] != "ci" {
		t.Errorf("the runs' checks are not linked: %q", checks)
	}
	screenshot(t, ctx, "pr-timeline")
	linksResolve(t, ctx, e)
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
	screenshot(t, ctx, "flaky-tests")
	linksResolve(t, ctx, e)

	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`a[href^="/acme/flaky-tests/test/`+e.testID("test_login")+`"]`))); err != nil {
		t.Fatal(err)
	}
	contains(t, ctx, "test_login", "flaky", "Failure rate, 24 h", "Daily failure rate", "Most common failures",
		"timeout "+hostile, "Latest run", "feature/x", "#17", "UNSPECIFIED")
	chartsLabelled(t, ctx, 1)
	screenshot(t, ctx, "test")

	do(t, ctx, chromedp.SetValue(chromedp.CSS(`select[name="override"]`), "ALWAYS_QUARANTINE"))
	if _, err := chromedp.RunResponse(ctx, chromedp.Submit(chromedp.CSS(`select[name="override"]`))); err != nil {
		t.Fatal(err)
	}
	contains(t, ctx, "ALWAYS_QUARANTINE")
	screenshot(t, ctx, "test-quarantined")
}
