package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/healthview"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/testhealth"
	"github.com/mainguard/mainguard/shared/testhealth/bundle"
)

// The rules of issue 32 through the HTTP API: results uploaded as the
// public uploader sends them (createBundleUpload, then the PUT of the
// bundle to the local server's signed address, which ingests it), read back
// with get-test-details and the lists, events delivered to a webhook
// receiver by the scheduled tick.

// httpAPI is the whole service behind a local HTTP listener at /v1.
type httpAPI struct {
	*harness
	base  string
	token string
}

func newHTTPAPI(t *testing.T) *httpAPI {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String() + "/v1"
	dir := t.TempDir()
	h := newHarness(t, func(c *config.Config) { c.BundleDir, c.PublicAPIURL = dir, base })
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h.app.Mux()}}
	srv.Start()
	t.Cleanup(srv.Close)
	return &httpAPI{harness: h, base: base, token: h.tokens["{{TOKEN}}"]}
}

// post sends body as JSON to path with acme's token and decodes a 200's
// answer into out.
func (a *httpAPI) post(t *testing.T, path string, body, out any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, a.base+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-token", a.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw bytes.Buffer
	_, _ = raw.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %s", path, resp.StatusCode, raw.String())
	}
	if err := json.Unmarshal(raw.Bytes(), out); err != nil {
		t.Fatalf("%s: %v: %s", path, err, raw.String())
	}
}

func repoJSON(r repository.Ref) map[string]string {
	return map[string]string{"host": r.Host, "owner": r.Owner, "name": r.Name}
}

// upload sends one CI attempt's JUnit reports on commit sha of branch, at
// the harness's clock, and returns its upload id once ingested.
func (a *httpAPI) upload(t *testing.T, r repository.Ref, sha, branch string, reports ...string) string {
	t.Helper()
	var created struct{ ID, URL string }
	a.post(t, "/metrics/createBundleUpload", map[string]any{
		"repo": repoJSON(r), "orgUrlSlug": "acme", "clientVersion": "0.10.2", "remoteUrls": []string{},
	}, &created)
	in := bundle.WriteInput{Meta: bundle.Meta{Org: "acme", BundleUploadID: created.ID, UploadTime: a.Now(),
		Repo: bundle.Repo{Host: r.Host, Owner: r.Owner, Name: r.Name, HeadSHA: sha, HeadBranch: branch}}}
	for i, rep := range reports {
		in.JUnit = append(in.JUnit, bundle.File{OriginalPath: fmt.Sprintf("report-%d.xml", i), Body: []byte(rep)})
	}
	var buf bytes.Buffer
	if err := bundle.Write(&buf, in); err != nil {
		t.Fatal(err)
	}
	if code, msg := put(t, created.URL, buf.Bytes()); code != http.StatusOK {
		t.Fatalf("PUT of the bundle: %d %s", code, msg)
	}
	a.Advance(time.Minute)
	return created.ID
}

// cases is a report of test cases of suite "suite": "name" passes, "name!"
// fails; a name given twice is run twice (a retry in the report).
func cases(names ...string) string {
	var b strings.Builder
	b.WriteString(`<testsuites><testsuite name="suite">`)
	for _, c := range names {
		name, failed := strings.CutSuffix(c, "!")
		fmt.Fprintf(&b, `<testcase classname="pkg" name="%s" file="src/a_test.go" time="0.1">`, name)
		if failed {
			b.WriteString(`<failure message="expected 200, got 503"/>`)
		}
		b.WriteString(`</testcase>`)
	}
	b.WriteString(`</testsuite></testsuites>`)
	return b.String()
}

func caseID(r repository.Ref, name string) string {
	return testhealth.TestID(testhealth.Identity{Org: "acme", Repo: r.Host + "/" + r.Owner + "/" + r.Name,
		File: "src/a_test.go", Classname: "pkg", Parent: "suite", Name: name})
}

// status reads a test's status through get-test-details.
func (a *httpAPI) status(t *testing.T, r repository.Ref, id string) healthview.Status {
	t.Helper()
	var got struct{ Test healthview.TestCase }
	a.post(t, "/flaky-tests/get-test-details", map[string]any{"repo": repoJSON(r), "org_url_slug": "acme", "test_id": id}, &got)
	return got.Test.Status
}

// unhealthy lists a repository's tests of one status by name.
func (a *httpAPI) unhealthy(t *testing.T, r repository.Ref, status string) []string {
	t.Helper()
	var got struct{ Tests []healthview.TestCase }
	a.post(t, "/flaky-tests/list-unhealthy-tests", map[string]any{"repo": repoJSON(r), "org_url_slug": "acme",
		"page_query": map[string]any{"page_size": 100}, "status": status}, &got)
	var names []string
	for _, tc := range got.Tests {
		names = append(names, tc.Name)
	}
	return names
}

var ci = repository.Ref{Host: "github.com", Owner: "acme", Name: "ci"}

// TestBrokenStreakCountsCommits (issue 32, item 1): the broken streak
// counts commits whose every attempt failed, however often CI retries
// them, and calls a regression broken on its third commit; a test that
// passed on retry within its window is flaky, never broken, with its
// failure rate in the reason.
func TestBrokenStreakCountsCommits(t *testing.T) {
	t.Parallel()
	a := newHTTPAPI(t)
	reg, flaky := caseID(ci, "regression"), caseID(ci, "flaky")
	// Commit 1: both fail; CI retries the job: the flaky test passes.
	a.upload(t, ci, "c1", "main", cases("regression!", "flaky!", "steady"))
	a.upload(t, ci, "c1", "main", cases("regression!", "flaky", "steady"))
	if st := a.status(t, ci, flaky); st.Value != testhealth.Flaky || !strings.HasPrefix(st.Reason, "pass-on-retry: failed and passed on commit c1 (main); recovery: ") {
		t.Errorf("the test that passed on retry: %+v", st)
	}
	// Commits 2 and 3: every attempt of both fails. Four runs of the
	// regression so far would have been a streak of four runs; it is two
	// commits.
	a.upload(t, ci, "c2", "main", cases("regression!", "flaky!", "steady"))
	a.upload(t, ci, "c2", "main", cases("regression!", "flaky!", "steady"))
	if st := a.status(t, ci, reg); st.Value != testhealth.Healthy || !strings.Contains(st.Reason, "every attempt failed on the last 2 commits on main, below the broken-streak monitor's 3 commits") {
		t.Errorf("the regression after 2 commits (4 failed runs): %+v", st)
	}
	a.upload(t, ci, "c3", "main", cases("regression!", "flaky!", "steady"))
	// The third commit's first attempt: a retry may still pass it.
	if st := a.status(t, ci, reg); st.Value != testhealth.Healthy || !strings.Contains(st.Reason, "(the last one not retried yet)") {
		t.Errorf("the regression on its third commit's first attempt: %+v", st)
	}
	a.upload(t, ci, "c3", "main", cases("regression!", "flaky!", "steady"))
	if st := a.status(t, ci, reg); st.Value != testhealth.Broken || st.Reason != "broken-streak: every attempt failed on the last 3 commits on main" {
		t.Errorf("the regression once its third commit's retry failed: %+v", st)
	}
	// The flaky test has failed every attempt of two commits since its
	// pass on retry; a third makes a broken streak, but it passed on retry
	// within its window: flaky, with its failure rate.
	if st := a.status(t, ci, flaky); st.Value != testhealth.Flaky {
		t.Errorf("the flaky test after 2 failed commits: %+v", st)
	}
	a.upload(t, ci, "c4", "main", cases("regression!", "flaky!", "steady"))
	a.upload(t, ci, "c4", "main", cases("regression!", "flaky!", "steady"))
	want := "pass-on-retry: failed and passed on commit c1 (main), so flaky, not broken, although every attempt failed on the last 3 commits on main; failure rate 88% over 8 runs in 7 days on main; recovery: "
	if st := a.status(t, ci, flaky); st.Value != testhealth.Flaky || !strings.HasPrefix(st.Reason, want) {
		t.Errorf("the flaky test failing 3 commits after its pass on retry:\n got %+v\nwant %q…", st, want)
	}
	if got := a.unhealthy(t, ci, "BROKEN"); len(got) != 1 || got[0] != "regression" {
		t.Errorf("broken tests: %v", got)
	}
	if got := a.unhealthy(t, ci, "FLAKY"); len(got) != 1 || got[0] != "flaky" {
		t.Errorf("flaky tests: %v", got)
	}
}

// statusEvents delivers the pending events with the scheduled tick and
// returns the status changes the receiver got for test id, as
// "previous>current".
func statusEvents(t *testing.T, a *httpAPI, rc *whReceiver, id string) []string {
	t.Helper()
	if err := a.app.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range rc.deliveries() {
		var ev healthview.StatusChanged
		if err := json.Unmarshal(d.Body, &ev); err != nil || d.VerifyErr != nil {
			t.Fatalf("delivery %s: %v %v", d.ID, err, d.VerifyErr)
		}
		if ev.TestCase.ID == id {
			out = append(out, ev.StatusChange.PreviousStatus+">"+ev.StatusChange.CurrentStatus.Value)
		}
	}
	return out
}

// TestStatusChangesOnceOnOneCommit (issue 32, item 3): a test that failed
// every attempt of two commits and fails the first attempt of a third is
// not called broken there, for its retry may pass; when the retry passes
// it is flaky, one test_case.status_changed in all, and further attempts
// of that commit change nothing.
func TestStatusChangesOnceOnOneCommit(t *testing.T) {
	t.Parallel()
	a := newHTTPAPI(t)
	rc := newWhReceiver(t)
	rc.subscribe(t, a.harness, "acme", healthview.EventStatusChanged)
	id := caseID(ci, "login")
	for _, sha := range []string{"c1", "c2"} {
		a.upload(t, ci, sha, "main", cases("login!", "logout"))
		a.upload(t, ci, sha, "main", cases("login!", "logout"))
	}
	a.upload(t, ci, "c3", "main", cases("login!", "logout"))
	if got := statusEvents(t, a, rc, id); len(got) != 0 {
		t.Fatalf("before the retry of the third commit: %v", got)
	}
	a.upload(t, ci, "c3", "main", cases("login", "logout"))
	if got := statusEvents(t, a, rc, id); len(got) != 1 || got[0] != "healthy>flaky" {
		t.Fatalf("after the retry passed: %v, want one change to flaky", got)
	}
	// More attempts of the same commit, failing and passing, and a next
	// commit failing once: flaky all along, no other event.
	a.upload(t, ci, "c3", "main", cases("login!", "logout"))
	a.upload(t, ci, "c3", "main", cases("login", "logout"))
	a.upload(t, ci, "c4", "main", cases("login!", "logout"))
	a.upload(t, ci, "c4", "main", cases("login!", "logout"))
	if got := statusEvents(t, a, rc, id); len(got) != 1 {
		t.Errorf("events: %v, want the one change", got)
	}
	if st := a.status(t, ci, id); st.Value != testhealth.Flaky {
		t.Errorf("status: %+v", st)
	}
}

// TestInfraGuardCountsPassOnRetry (issue 32, item 4): Surefire's report of
// a test that failed twice and passed on its third try is one test case
// passed on retry: the infrastructure guard does not set the upload aside,
// and the test is flaky. An upload where most test cases failed is set
// aside, says so, and so does the reason of each test that failed in it;
// retries inside an upload that passed do not count towards the share.
func TestInfraGuardCountsPassOnRetry(t *testing.T) {
	t.Parallel()
	a := newHTTPAPI(t)
	ctx := context.Background()
	surefire, err := os.ReadFile(filepath.Join("..", "..", "testdata", "junit", "surefire-3.0.2-flakyFailure.xml"))
	if err != nil {
		t.Fatal(err)
	}
	up := a.upload(t, ci, "f1", "main", string(surefire))
	rec, err := a.app.Store.GetUpload(ctx, "acme", up)
	if err != nil || rec.Guarded || rec.GuardCases != 1 || rec.GuardFailed != 0 || rec.Runs != 3 {
		t.Fatalf("the Surefire upload: %+v %v", rec, err)
	}
	id := testhealth.TestID(testhealth.Identity{Org: "acme", Repo: "github.com/acme/ci", Classname: "io.olamy.FlakyTest", Parent: "io.olamy.FlakyTest", Name: "testApp"})
	if st := a.status(t, ci, id); st.Value != testhealth.Flaky || !strings.HasPrefix(st.Reason, "pass-on-retry: failed and passed on commit f1 (main)") {
		t.Errorf("Surefire's flakyFailure test: %+v", st)
	}

	// Nine of ten test cases fail: an outage, set aside.
	names := []string{"ok"}
	for i := range 9 {
		names = append(names, fmt.Sprintf("down%d!", i))
	}
	up = a.upload(t, ci, "g1", "main", cases(names...))
	if rec, _ := a.app.Store.GetUpload(ctx, "acme", up); !rec.Guarded || rec.GuardCases != 10 || rec.GuardFailed != 9 {
		t.Errorf("the outage: %+v", rec)
	}
	st := a.status(t, ci, caseID(ci, "down0"))
	if st.Value != testhealth.Healthy || !strings.Contains(st.Reason, "its latest upload, "+up+", was set aside by the infrastructure guard (more than 80% of its test cases failed), so its failure there counts in the rates but not for flaky or broken") {
		t.Errorf("a test that failed in the outage: %+v", st)
	}
	if st := a.status(t, ci, caseID(ci, "ok")); strings.Contains(st.Reason, "guard") {
		t.Errorf("a test that passed in the outage: %+v", st)
	}

	// Nine of ten fail once and pass on a retry in the report: one test
	// case failed, not nine; the nine are flaky.
	names = []string{"hard!"}
	for i := range 9 {
		names = append(names, fmt.Sprintf("retried%d!", i), fmt.Sprintf("retried%d", i))
	}
	up = a.upload(t, ci, "h1", "main", cases(names...))
	if rec, _ := a.app.Store.GetUpload(ctx, "acme", up); rec.Guarded || rec.GuardCases != 10 || rec.GuardFailed != 1 {
		t.Errorf("retries that passed counted as failures: %+v", rec)
	}
	if got := a.unhealthy(t, ci, "FLAKY"); len(got) != 10 {
		t.Errorf("flaky tests: %v, want testApp and the nine retried", got)
	}
}

// TestQuarantineOverrideEnds (issue 32, item 5): an override set until a
// date applies up to it; from then every read applies the repository's
// rule, and the test's next upload (or, for an unhealthy test, the
// scheduled reclassification) removes it with one event.
func TestQuarantineOverrideEnds(t *testing.T) {
	t.Parallel()
	a := newHTTPAPI(t)
	ctx := context.Background()
	api := repository.Ref{Host: "github.com", Owner: "acme", Name: "api"} // quarantines automatically
	rc := newWhReceiver(t)
	rc.subscribe(t, a.harness, "acme", healthview.EventQuarantineSetting)
	a.upload(t, api, "s1", "main", cases("slow", "fast"))
	slow := caseID(api, "slow")
	until := a.Now().Add(48 * time.Hour).Truncate(time.Hour)
	admin := healthview.Actor{FullName: "mainguard admin"}
	for _, id := range []string{slow, testID} { // testID: the seeded flaky test
		if _, err := a.app.Health.SetOverride(ctx, "acme", api, id, testhealth.AlwaysQuarantine, until, admin, "release week"); err != nil {
			t.Fatal(err)
		}
	}
	type listed struct {
		QuarantinedTests []struct {
			TestCaseID             string `json:"test_case_id"`
			QuarantineSetting      string `json:"quarantine_setting"`
			QuarantineSettingUntil string `json:"quarantine_setting_until"`
		} `json:"quarantined_tests"`
		Page struct {
			TotalRows int `json:"total_rows"`
		}
	}
	list := func() (map[string]string, int) {
		t.Helper()
		var got listed
		a.post(t, "/flaky-tests/list-quarantined-tests", map[string]any{"repo": repoJSON(api), "org_url_slug": "acme", "page_query": map[string]any{"page_size": 10}}, &got)
		out := map[string]string{}
		for _, q := range got.QuarantinedTests {
			out[q.TestCaseID] = q.QuarantineSetting + " " + q.QuarantineSettingUntil
		}
		return out, got.Page.TotalRows
	}
	config := func() []string {
		t.Helper()
		var got struct{ TestIDs []string }
		a.post(t, "/metrics/getQuarantineConfig", map[string]any{"repo": repoJSON(api), "orgUrlSlug": "acme", "remoteUrls": []string{}, "testIdentifiers": []any{}}, &got)
		return got.TestIDs
	}
	end := healthview.Timestamp(until)
	if got, total := list(); got[slow] != "ALWAYS_QUARANTINE "+end || got[testID] != "ALWAYS_QUARANTINE "+end || total != 2 {
		t.Errorf("before the end: %v (%d rows)", got, total)
	}
	if got := config(); len(got) != 2 {
		t.Errorf("getQuarantineConfig before the end: %v", got)
	}

	// The end passes: reads apply the repository's rule at once, before
	// any write. The healthy test is not quarantined any more; the flaky
	// one is, automatically.
	a.Advance(49 * time.Hour)
	if got, total := list(); len(got) != 1 || got[testID] != "AUTO_QUARANTINE " || total != 1 {
		t.Errorf("after the end: %v (%d rows)", got, total)
	}
	if got := config(); len(got) != 1 || got[0] != testID {
		t.Errorf("getQuarantineConfig after the end: %v", got)
	}
	var details struct{ Test healthview.TestCase }
	a.post(t, "/flaky-tests/get-test-details", map[string]any{"repo": repoJSON(api), "org_url_slug": "acme", "test_id": slow}, &details)
	if details.Test.Quarantined {
		t.Error("get-test-details: the test whose override ended is quarantined")
	}
	endEvents := func() []healthview.QuarantineSettingChanged {
		t.Helper()
		if err := a.app.Tick(ctx); err != nil { // delivers, and reclassifies the unhealthy
			t.Fatal(err)
		}
		var out []healthview.QuarantineSettingChanged
		for _, d := range rc.deliveries() {
			var ev healthview.QuarantineSettingChanged
			if err := json.Unmarshal(d.Body, &ev); err != nil || d.VerifyErr != nil {
				t.Fatalf("delivery: %v %v", err, d.VerifyErr)
			}
			if ev.Change.Actor.FullName == "mainguard (the override's end)" {
				out = append(out, ev)
			}
		}
		return out
	}
	// The tick reclassified the flaky test, and wrote its end once.
	got := endEvents()
	if len(got) != 1 || got[0].TestCase.ID != testID || got[0].Change.Previous != testhealth.AlwaysQuarantine || got[0].Change.Updated != "UNSPECIFIED" || !got[0].TestCase.Quarantined {
		t.Fatalf("after the tick: %+v", got)
	}
	// The healthy test's next upload writes its end, once.
	a.upload(t, api, "s2", "main", cases("slow", "fast"))
	a.upload(t, api, "s3", "main", cases("slow", "fast"))
	if got = endEvents(); len(got) != 2 || got[1].TestCase.ID != slow || got[1].TestCase.Quarantined {
		t.Errorf("after two more uploads: %d end events: %+v", len(got), got)
	}
	tc, err := a.app.Store.GetTestCase(ctx, "acme", api, slow)
	if err != nil || tc.QuarantineOverride != "" || tc.ExpiredOverride != "" || !tc.QuarantineUntil.IsZero() {
		t.Errorf("stored after its end: override %q, expired %q, until %v, %v", tc.QuarantineOverride, tc.ExpiredOverride, tc.QuarantineUntil, err)
	}
	// An end in the past is refused, as an end without an override.
	if _, err := a.app.Health.SetOverride(ctx, "acme", api, slow, testhealth.NeverQuarantine, a.Now().Add(-time.Hour), admin, ""); err == nil || !strings.Contains(err.Error(), "until must be in the future") {
		t.Errorf("an end in the past: %v", err)
	}
	if _, err := a.app.Health.SetOverride(ctx, "acme", api, slow, "", a.Now().Add(time.Hour), admin, ""); err == nil {
		t.Error("an end without an override was accepted")
	}
}
