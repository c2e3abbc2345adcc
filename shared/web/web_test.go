package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// TestSignIn: no session goes to the sign-in form, which comes back to
// the page asked for; a bad token gets the form again with one plain
// sentence; the cookie is HttpOnly and SameSite=Strict, and signing out
// clears it.
func TestSignIn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client()
	if a := e.get(c, "/acme"); a.code != http.StatusSeeOther || a.location != "/signin?next=%2Facme" {
		t.Fatalf("no session: %d to %q", a.code, a.location)
	}
	form := e.signInForm(c)
	for _, token := range []string{"mg_wrong", "", "not a token at all", e.Tokens["acme"] + "x"} {
		a := e.do(c, http.MethodPost, "/signin", url.Values{"token": {token}, "next": {"/acme"}, "csrf": {form}})
		if a.code != http.StatusUnauthorized || !strings.Contains(a.body, "That token was not accepted. Check it and try again.") {
			t.Errorf("token %q: %d %s", token, a.code, a.body)
		}
		if strings.Contains(a.body, "revoked") || strings.Contains(a.body, "unknown") || a.header.Get("Set-Cookie") != "" {
			t.Errorf("token %q: the answer says why, or sets a cookie: %s", token, a.body)
		}
	}
	a := e.do(c, http.MethodPost, "/signin", url.Values{"token": {e.Tokens["acme"]}, "next": {"/acme"}, "csrf": {form}})
	cookie := a.header.Get("Set-Cookie")
	if a.code != http.StatusSeeOther || a.location != "/acme" {
		t.Fatalf("sign in: %d to %q", a.code, a.location)
	}
	for _, attr := range []string{"mainguard_session=", "HttpOnly", "SameSite=Strict", "Max-Age=28800"} {
		if !strings.Contains(cookie, attr) {
			t.Errorf("cookie %q lacks %s", cookie, attr)
		}
	}
	if strings.Contains(cookie, "Secure") {
		t.Errorf("cookie %q is Secure on plain http", cookie)
	}
	home := e.get(c, "/acme")
	if home.code != http.StatusOK || !strings.Contains(home.body, "<h1>acme</h1>") {
		t.Fatalf("home: %d %s", home.code, home.body)
	}
	// An open redirect is refused: next only ever names a page here.
	stranger := e.client()
	a = e.do(stranger, http.MethodPost, "/signin", url.Values{"token": {e.Tokens["acme"]}, "next": {"//evil.example/acme"}, "csrf": {e.signInForm(stranger)}})
	if a.location != "/acme" {
		t.Errorf("next=//evil.example: redirected to %q", a.location)
	}
	out := e.do(c, http.MethodPost, "/signout", url.Values{"csrf": {csrfOf(t, home.body)}})
	if out.code != http.StatusSeeOther || !strings.Contains(out.header.Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("sign out: %d %q", out.code, out.header.Get("Set-Cookie"))
	}
	if a := e.get(c, "/acme"); a.code != http.StatusSeeOther {
		t.Fatalf("after signing out: %d", a.code)
	}
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, page string) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token in the page")
	}
	return m[1]
}

// TestForgedAndExpiredSessions: a cookie altered, signed with another key
// or past its expiry sends the person to sign in, as no cookie does.
func TestForgedAndExpiredSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client()
	e.signIn(c, "acme")
	u, _ := url.Parse(e.URL)
	good := c.Jar.Cookies(u)[0].Value
	payload, mac, _ := strings.Cut(good, ".")
	forged := []string{
		"b3RoZXJ8OTk5OTk5OTk5OXxub25jZQ." + mac, // "other|9999999999|nonce" with acme's MAC
		payload + ".AAAA",
		payload,
		"garbage",
	}
	for _, v := range forged {
		req, _ := http.NewRequest(http.MethodGet, e.URL+"/acme", nil)
		req.AddCookie(&http.Cookie{Name: "mainguard_session", Value: v})
		resp, err := e.client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/signin") {
			t.Errorf("cookie %q: %d to %q", v, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	e.Clock.Advance(9 * time.Hour) // past web.SessionTTL
	if a := e.get(c, "/acme"); a.code != http.StatusSeeOther || !strings.HasPrefix(a.location, "/signin") {
		t.Errorf("expired session: %d to %q", a.code, a.location)
	}
}

// TestSignInNeedsItsForm: a sign-in posted without the token of a form
// this site served (another site posting its own organization's token:
// login CSRF), or with another browser's, is 403 and signs no one in.
func TestSignInNeedsItsForm(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other := e.client()
	othersForm := e.signInForm(other)
	for name, csrf := range map[string]string{"no form": "", "wrong": "AAAA", "another browser's": othersForm} {
		c := e.client()
		if name == "another browser's" {
			e.signInForm(c) // a sign-in cookie of its own
		}
		a := e.do(c, http.MethodPost, "/signin", url.Values{"token": {e.Tokens["acme"]}, "csrf": {csrf}})
		if a.code != http.StatusForbidden || strings.Contains(a.header.Get("Set-Cookie"), "mainguard_session") {
			t.Errorf("%s: %d, cookie %q", name, a.code, a.header.Get("Set-Cookie"))
		}
		if a := e.get(c, "/acme"); a.code != http.StatusSeeOther {
			t.Errorf("%s: signed in all the same (%d)", name, a.code)
		}
	}
}

// TestRevokedTokenEndsItsSessions: a session lasts while the token it was
// signed in with holds: once the token is revoked, pages send to sign-in
// within AUTH_CACHE_SECONDS, as the API refuses the token.
func TestRevokedTokenEndsItsSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client()
	e.signIn(c, "acme")
	if a := e.get(c, "/acme"); a.code != http.StatusOK {
		t.Fatalf("before revoking: %d", a.code)
	}
	if _, err := e.App.Store.RevokeToken(context.Background(), "acme", e.Tokens["acme"]); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(31 * time.Second) // past the copy's memory of the token
	if a := e.get(c, "/acme"); a.code != http.StatusSeeOther || !strings.HasPrefix(a.location, "/signin") {
		t.Errorf("after revoking: %d to %q", a.code, a.location)
	}
	if code, _ := e.Post("acme", "getQueue", []byte(`{}`)); code != http.StatusUnauthorized {
		t.Errorf("the API takes the revoked token: %d", code)
	}
}

// TestCSRF: a form without its token, or with another session's, is 403
// and changes nothing.
func TestCSRF(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.api("acme", "createQueue", map[string]any{"repo": webRepo, "targetBranch": "main"})
	c, other := e.client(), e.client()
	e.signIn(c, "acme")
	e.signIn(other, "acme")
	queue := "/acme/merge-queue/acme/web/main"
	otherToken := csrfOf(t, e.get(other, queue).body)
	for name, form := range map[string]url.Values{
		"missing":         {"action": {"pause"}},
		"wrong":           {"action": {"pause"}, "csrf": {"AAAA"}},
		"another session": {"action": {"pause"}, "csrf": {otherToken}},
	} {
		if a := e.do(c, http.MethodPost, queue, form); a.code != http.StatusForbidden {
			t.Errorf("%s: %d", name, a.code)
		}
	}
	if a := e.get(c, queue); !strings.Contains(a.body, "RUNNING") {
		t.Fatalf("the queue changed: %s", a.body)
	}
	a := e.do(c, http.MethodPost, queue, url.Values{"action": {"pause"}, "csrf": {csrfOf(t, e.get(c, queue).body)}})
	if a.code != http.StatusSeeOther {
		t.Fatalf("pause with the right token: %d %s", a.code, a.body)
	}
	if a := e.get(c, queue); !strings.Contains(a.body, "PAUSED") || !strings.Contains(a.body, "Resume the queue") {
		t.Fatalf("not paused: %s", a.body)
	}
}

// TestResubmit: a cancelled or failed PR's page offers Resubmit, which
// submits it again as submitPullRequest does, through the same checks as
// every form: without the page's CSRF token it is 403, from another
// organization 404, and neither changes anything.
func TestResubmit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.api("acme", "createQueue", map[string]any{"repo": webRepo, "targetBranch": "main"})
	n := e.openPR("one", "Add one")
	e.submit(n)
	e.api("acme", "cancelPullRequest", map[string]any{"repo": webRepo, "targetBranch": "main", "pr": map[string]any{"number": n}})
	path := fmt.Sprintf("/acme/merge-queue/acme/web/main/pr/%d", n)
	c, other := e.client(), e.client()
	e.signIn(c, "acme")
	e.signIn(other, "other")
	page := e.get(c, path)
	if !strings.Contains(page.body, `<button name="action" value="resubmit">Resubmit</button>`) {
		t.Fatalf("a cancelled PR's page offers no Resubmit:\n%s", page.body)
	}
	if a := e.do(c, http.MethodPost, path, url.Values{"action": {"resubmit"}}); a.code != http.StatusForbidden {
		t.Errorf("without the CSRF token: %d", a.code)
	}
	if a := e.do(other, http.MethodPost, path, url.Values{"action": {"resubmit"}, "csrf": {csrfOf(t, e.get(other, "/other").body)}}); a.code != http.StatusNotFound {
		t.Errorf("from another organization: %d", a.code)
	}
	if st := e.state(n); st != "CANCELLED" {
		t.Fatalf("refused resubmissions changed the PR: %s", st)
	}
	if a := e.do(c, http.MethodPost, path, url.Values{"action": {"resubmit"}, "csrf": {csrfOf(t, page.body)}}); a.code != http.StatusSeeOther || a.location != path {
		t.Fatalf("resubmit: %d to %q %s", a.code, a.location, a.body)
	}
	// Submitted again, the queue may take it on at once.
	if st := e.state(n); st != "NOT_READY" && st != "PENDING" && st != "TESTING" {
		t.Errorf("resubmitted, the PR is %s", st)
	}
	if body := e.get(c, path).body; strings.Contains(body, `value="resubmit"`) {
		t.Errorf("an active PR's page offers Resubmit")
	}
}

// TestOtherOrganizationIsNotFound: acme's pages are 404 to other, the
// same page as one that does not exist.
func TestOtherOrganizationIsNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.api("acme", "createQueue", map[string]any{"repo": webRepo, "targetBranch": "main"})
	n := e.openPR("one", "Add one")
	e.submit(n)
	e.uploadFlaky()
	id := e.testID("test_login")
	c := e.client()
	e.signIn(c, "other")
	for _, path := range []string{
		"/acme",
		"/acme/merge-queue/acme/web/main",
		fmt.Sprintf("/acme/merge-queue/acme/web/main/pr/%d", n),
		"/acme/flaky-tests?repo=acme/web",
		"/acme/flaky-tests/test/" + id + "?repo=acme%2Fweb",
		// other's own, absent: the same answer
		"/other/merge-queue/acme/web/main",
		"/other/flaky-tests/test/" + id + "?repo=acme%2Fweb",
	} {
		a := e.get(c, path)
		if a.code != http.StatusNotFound || !strings.Contains(a.body, "There is no such page, or it belongs to another organization.") {
			t.Errorf("%s: %d %s", path, a.code, a.body)
		}
	}
	// An action on another organization's queue is 404 too, and changes nothing.
	home := e.get(c, "/other")
	if a := e.do(c, http.MethodPost, "/acme/merge-queue/acme/web/main", url.Values{"action": {"pause"}, "csrf": {csrfOf(t, home.body)}}); a.code != http.StatusNotFound {
		t.Errorf("pause acme's queue as other: %d", a.code)
	}
}

// TestStoredHTMLIsEscaped: a test named <script>…</script>, failure
// messages holding it and a PR titled with it show as text on every page.
func TestStoredHTMLIsEscaped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.api("acme", "createQueue", map[string]any{"repo": webRepo, "targetBranch": "main"})
	n := e.openPR("two", "Fix "+hostile)
	e.submit(n)
	e.uploadFlaky()
	id := e.testID(hostile)
	c := e.client()
	e.signIn(c, "acme")
	escaped := `&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;`
	for _, path := range []string{
		"/acme/merge-queue/acme/web/main",
		fmt.Sprintf("/acme/merge-queue/acme/web/main/pr/%d", n),
		"/acme/flaky-tests?repo=acme/web",
		"/acme/flaky-tests/test/" + id + "?repo=acme%2Fweb",
	} {
		a := e.get(c, path)
		if a.code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, a.code, a.body)
		}
		if strings.Contains(a.body, "<script") {
			t.Errorf("%s: a <script> element in the page", path)
		}
		if !strings.Contains(a.body, escaped) {
			t.Errorf("%s: the stored text is not shown escaped", path)
		}
	}
}

// TestTimelineOutlivesTheSnapshot: a PR's timeline is still on its page
// after the queue's snapshot dropped its transitions (it keeps the last
// 200; another PR submitted and cancelled 101 times makes more), and a
// PR with more transitions than a page reads says so. Its 200 requests,
// one after another, run with the sweeps, without the race detector
// (Makefile's SWEEPS).
func TestTimelineOutlivesTheSnapshot(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.api("acme", "createQueue", map[string]any{"repo": webRepo, "targetBranch": "main"})
	cancel := func(n int) {
		e.api("acme", "cancelPullRequest", map[string]any{"repo": webRepo, "targetBranch": "main", "pr": map[string]any{"number": n}})
	}
	first, other := e.openPR("one", "Add one"), e.openPR("two", "Add two")
	e.submit(first)
	e.tick() // GitHub has computed its mergeability by the next read: it leaves NOT_READY
	cancel(first)
	for range 101 {
		e.submit(other)
		cancel(other)
	}
	c := e.client()
	e.signIn(c, "acme")
	a := e.get(c, fmt.Sprintf("/acme/merge-queue/acme/web/main/pr/%d", first))
	if a.code != http.StatusOK {
		t.Fatalf("%d %s", a.code, a.body)
	}
	steps, _, _ := strings.Cut(a.body, "<h2>Test runs</h2>")
	_, steps, _ = strings.Cut(steps, "<h2>Timeline</h2>")
	for _, want := range []string{`<td class="state PENDING" title="PENDING">Pending`, `<td class="state CANCELLED" title="CANCELLED">Cancelled`} {
		if !strings.Contains(steps, want) {
			t.Errorf("PR #%d's timeline has no %s", first, want)
		}
	}
	a = e.get(c, fmt.Sprintf("/acme/merge-queue/acme/web/main/pr/%d", other))
	timeline, _, _ := strings.Cut(a.body, "<h2>Test runs</h2>")
	if rows := strings.Count(timeline, `<td class="state `); rows != 100 {
		t.Errorf("PR #%d's timeline shows %d transitions, want its latest 100", other, rows)
	}
	if !strings.Contains(a.body, "The latest 100 transitions") {
		t.Errorf("PR #%d's page does not say earlier transitions are left out", other)
	}
}

// TestTestPageShowsItsLatestRun: passing runs are counted, not kept, yet a
// test's page shows its latest run whatever its outcome, with its branch,
// commit and pull request; its failed runs stay listed below.
func TestTestPageShowsItsLatestRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.uploadFlaky()
	e.Clock.Advance(time.Minute)
	e.upload("3b0c9d2e3b4a5968778695a4b3c2d1e0f9a8b7c6", "release/2", 23, junit([]string{"test_login"}))
	c := e.client()
	e.signIn(c, "acme")
	a := e.get(c, "/acme/flaky-tests/test/"+e.testID("test_login")+"?repo=acme%2Fweb")
	if a.code != http.StatusOK {
		t.Fatalf("%d %s", a.code, a.body)
	}
	latest, failed, ok := strings.Cut(a.body, "Failed runs, last 3 days")
	_, latest, _ = strings.Cut(latest, "<h2>Latest run</h2>")
	if !ok {
		t.Fatal("no failed runs on the page")
	}
	for _, want := range []string{"release/2", "3b0c9d2", `class="passed">passed`, `href="` + e.Sim.URL() + `/acme/web/pull/23"`} {
		if !strings.Contains(latest, want) {
			t.Errorf("the latest run shows no %s:\n%s", want, latest)
		}
	}
	if !strings.Contains(failed, "feature/x") || strings.Contains(failed, "release/2") {
		t.Errorf("the failed runs are not the failed ones")
	}
}

// TestV1PathsStayTheAPIs: an unknown /v1 path is the API's plain-text 404,
// not a page.
func TestV1PathsStayTheAPIs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.get(e.client(), "/v1/nope")
	if a.code != http.StatusNotFound || a.body != "no endpoint /v1/nope" || strings.Contains(a.header.Get("Content-Type"), "html") {
		t.Fatalf("%d %q %q", a.code, a.header.Get("Content-Type"), a.body)
	}
}

// TestQuarantineOverrideWithAnEnd (issue 32, item 5): the test page's form
// sets an override until a date; the page and list-quarantined-tests show
// its end, and once it has passed the repository's rule applies again.
func TestQuarantineOverrideWithAnEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.uploadFlaky()
	e.upload("3a0c9d2e3b4a5968778695a4b3c2d1e0f9a8b7c6", "main", 0, junit([]string{"test_logout"}))
	ref := repository.Ref{Host: "github.com", Owner: "acme", Name: "web"}
	if _, err := e.App.Store.UpdateRepo(context.Background(), "acme", ref, store.RepoSettings{Health: testhealth.HealthSettings{QuarantineEnabled: new(true)}}); err != nil {
		t.Fatal(err)
	}
	logout := testhealth.TestID(testhealth.Identity{Org: "acme", Repo: "github.com/acme/web", File: "src/login_test.go", Classname: "pkg", Parent: "suite", Name: "test_logout"})
	c := e.client()
	e.signIn(c, "acme")
	page := "/acme/flaky-tests/test/" + logout + "?repo=acme%2Fweb"
	day := t0.Add(24 * time.Hour).Format(time.DateOnly)
	a := e.do(c, http.MethodPost, page, url.Values{"override": {"ALWAYS_QUARANTINE"}, "until": {day}, "csrf": {csrfOf(t, e.get(c, page).body)}})
	if a.code != http.StatusSeeOther {
		t.Fatalf("the form: %d %s", a.code, a.body)
	}
	endAt := t0.Add(48 * time.Hour).Truncate(24 * time.Hour)
	end := endAt.Format("2006-01-02T15:04:05.000Z")
	shown := `title="ALWAYS_QUARANTINE">Always quarantine until <time datetime="` + endAt.Format(time.RFC3339) + `"`
	if body := e.get(c, page).body; !strings.Contains(body, shown) || !strings.Contains(body, ", then the repository's rule") {
		_, row, _ := strings.Cut(body, "Quarantine override")
		t.Errorf("the page does not show the override's end %s (%s):\n%.400s", end, shown, row)
	}
	list := func() string {
		return e.api("acme", "flaky-tests/list-quarantined-tests", map[string]any{"repo": webRepo, "org_url_slug": "acme", "page_query": map[string]any{"page_size": 10}})
	}
	if out := list(); !strings.Contains(out, `"test_case_id":"`+logout+`"`) || !strings.Contains(out, `"quarantine_setting_until":"`+end+`"`) {
		t.Errorf("list-quarantined-tests before the end: %s", out)
	}
	e.Clock.Advance(3 * 24 * time.Hour)
	if out := list(); strings.Contains(out, logout) {
		t.Errorf("list-quarantined-tests after the end: %s", out)
	}
	c = e.client() // the session of three days ago has ended
	e.signIn(c, "acme")
	if body := e.get(c, page).body; !strings.Contains(body, `title="UNSPECIFIED">`) || strings.Contains(body, "until <time") {
		_, row, _ := strings.Cut(body, "Quarantine override")
		t.Errorf("the page after the end does not show the repository's rule:\n%.300s", row)
	}
	// A date that is no date is refused, and changes nothing.
	a = e.do(c, http.MethodPost, page, url.Values{"override": {"NEVER_QUARANTINE"}, "until": {"someday"}, "csrf": {csrfOf(t, e.get(c, page).body)}})
	if a.code != http.StatusBadRequest || !strings.Contains(a.body, "until must be a date") {
		t.Errorf("a bad date: %d %s", a.code, a.body)
	}
}
