package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mainguard/mainguard/shared/app"
	"github.com/mainguard/mainguard/shared/github/githubsim"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// queueWorld is the whole service over HTTP with a simulated GitHub, a CI
// that uploads its JUnit reports with `mainguard upload` for the test
// branch it ran on, and the scheduler's queue step called by the test.
type queueWorld struct {
	t           *testing.T
	e           map[string]string
	base, token string
	app         *app.App
	sim         *githubsim.Server
	dir         string
	reports     int
}

const shopRepo = "acme/shop"

func newQueueWorld(t *testing.T) *queueWorld {
	t.Helper()
	sim, err := githubsim.New(t.TempDir(), githubsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	if _, err := sim.CreateRepo(shopRepo, "main"); err != nil {
		t.Fatal(err)
	}
	if err := sim.SetRequiredStatusChecks(shopRepo, "main", []string{"ci"}); err != nil {
		t.Fatal(err)
	}
	e := localEnv(t, map[string]string{"GITHUB_API_URL": sim.URL(), "GITHUB_TOKEN": "local"})
	w := &queueWorld{t: t, e: e, sim: sim, dir: t.TempDir()}
	w.token = w.org("acme")
	// With a plain GitHub token, an administrator claims the repository.
	if out, errOut, code := mg(t, e, "repo", "claim", "github.com/"+shopRepo, "--org", "acme"); code != 0 || !strings.Contains(out, "belongs to acme") {
		t.Fatalf("repo claim: %d %s %s", code, out, errOut)
	}
	w.base, w.app = serviceApp(t, e)
	return w
}

// org creates an organization and returns its token.
func (w *queueWorld) org(slug string) string {
	w.t.Helper()
	out, _, code := mg(w.t, w.e, "org", "create", "--slug", slug)
	token := tokenRE.FindString(out)
	if code != 0 || token == "" {
		w.t.Fatalf("org create %s: %d %q", slug, code, out)
	}
	return token
}

// upload sends a JUnit report of cases ("name" passes, "name!" fails) for
// sha on branch with the organization's token, as CI does.
func (w *queueWorld) upload(org, token, sha, branch string, cases ...string) {
	w.t.Helper()
	w.reports++
	report := writeReport(w.t, w.dir, fmt.Sprintf("r%d.xml", w.reports), junitXML(cases...))
	out, errOut, code := mg(w.t, w.e, "upload", "--token", token, "--org", org, "--repo", "github.com/"+shopRepo,
		"--sha", sha, "--branch", branch, "--url", w.base, report)
	if code != 0 {
		w.t.Fatalf("upload %s: %d %s %s", sha, code, out, errOut)
	}
}

// call posts a merge-queue request for acme/shop's main and decodes the
// answer, which must be 200.
func (w *queueWorld) call(op string, fields map[string]any) map[string]any {
	w.t.Helper()
	body := map[string]any{"repo": map[string]string{"host": "github.com", "owner": "acme", "name": "shop"}, "targetBranch": "main"}
	for k, v := range fields {
		body[k] = v
	}
	raw, _ := json.Marshal(body)
	code, out := post(w.t, w.base+"/"+op, w.token, string(raw))
	if code != 200 {
		w.t.Fatalf("%s: %d %s", op, code, out)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		w.t.Fatalf("%s: %v %s", op, err, out)
	}
	return got
}

// step is what the scheduled function does to the queue at a tick.
func (w *queueWorld) step() {
	w.t.Helper()
	k := store.QueueKey{Org: "acme", Repo: repository.Ref{Host: "github.com", Owner: "acme", Name: "shop"}, Branch: "main"}
	if err := w.app.MergeQueue.Driver.Advance(context.Background(), k); err != nil {
		w.t.Fatal(err)
	}
}

// submit opens a pull request that adds a file, whose own CI passed (GitHub
// merges no PR whose head lacks the status main requires), and submits it.
func (w *queueWorld) submit(name string) int {
	w.t.Helper()
	sha, err := w.sim.CommitFile(shopRepo, name, name+".txt", name+"\n", "add "+name)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := w.sim.SetStatus(shopRepo, sha, "ci", "success", "", ""); err != nil {
		w.t.Fatal(err)
	}
	n, err := w.sim.OpenPR(shopRepo, name, "main", "Add "+name, "ada")
	if err != nil {
		w.t.Fatal(err)
	}
	w.call("submitPullRequest", map[string]any{"pr": map[string]any{"number": n}})
	w.step() // GitHub answered the submit's first read of the PR with mergeable null: the next read knows
	return n
}

// testBranch is pull request n's one test branch and its head.
func (w *queueWorld) testBranch(n int) (string, string) {
	w.t.Helper()
	branches, err := w.sim.Branches(shopRepo)
	if err != nil {
		w.t.Fatal(err)
	}
	var found []string
	for _, b := range branches {
		if strings.HasPrefix(b, fmt.Sprintf("trunk-merge/pr-%d/", n)) {
			found = append(found, b)
		}
	}
	if len(found) != 1 {
		w.t.Fatalf("PR %d has test branches %v, want one", n, found)
	}
	head, err := w.sim.BranchHead(shopRepo, found[0])
	if err != nil {
		w.t.Fatal(err)
	}
	return found[0], head
}

// ci runs CI on pull request n's test branch: it uploads its report, then
// sets the required status; the queue steps. It returns the run id.
func (w *queueWorld) ci(n int, state string, cases ...string) (run, head string) {
	w.t.Helper()
	branch, head := w.testBranch(n)
	w.upload("acme", w.token, head, branch, cases...)
	if err := w.sim.SetStatus(shopRepo, head, "ci", state, "", "https://ci.example/"+head[:7]); err != nil {
		w.t.Fatal(err)
	}
	w.step()
	return branch[strings.LastIndex(branch, "/")+1:], head
}

func (w *queueWorld) pr(n int) map[string]any {
	w.t.Helper()
	return w.call("getSubmittedPullRequest", map[string]any{"pr": map[string]any{"number": n}})
}

func (w *queueWorld) details(run string) map[string]any {
	w.t.Helper()
	raw, _ := json.Marshal(map[string]any{"testRunId": run})
	code, out := post(w.t, w.base+"/getMergeQueueTestingDetails", w.token, string(raw))
	var got map[string]any
	if code != 200 || json.Unmarshal([]byte(out), &got) != nil {
		w.t.Fatalf("testing details of %s: %d %s", run, code, out)
	}
	return got
}

func (w *queueWorld) testStatus(name string) map[string]any {
	w.t.Helper()
	id := testhealth.TestID(testhealth.Identity{Org: "acme", Repo: "github.com/" + shopRepo,
		File: "src/checkout/cart_test.go", Classname: "web.Checkout", Parent: "checkout-suite", Name: name})
	raw, _ := json.Marshal(map[string]any{"repo": map[string]string{"host": "github.com", "owner": "acme", "name": "shop"},
		"org_url_slug": "acme", "test_id": id})
	code, out := post(w.t, w.base+"/flaky-tests/get-test-details", w.token, string(raw))
	var got struct {
		Test map[string]any `json:"test"`
	}
	if code != 200 || json.Unmarshal([]byte(out), &got) != nil {
		w.t.Fatalf("test details of %s: %d %s", name, code, out)
	}
	return got.Test["status"].(map[string]any)
}

// failedTests is a testing details' failedTests as "name status [q]".
func failedTests(d map[string]any) []string {
	list, _ := d["failedTests"].([]any)
	var out []string
	for _, x := range list {
		m := x.(map[string]any)
		s := fmt.Sprintf("%s %s", m["name"], m["status"])
		if m["quarantined"] == true {
			s += " quarantined"
		}
		out = append(out, s)
	}
	return out
}

// TestAntiFlakeRetriesOverHTTP is issue 12's scenario through the HTTP
// API: a run that failed only on a test classified flaky is retried once,
// on the very commit that failed, and merges; one that failed on a healthy
// test is ejected with no retry; one that failed on a quarantined test is
// retried under KNOWN_FLAKY; under ANY_FAILURE a healthy test that fails
// then passes on the retry becomes flaky by pass-on-retry; another
// organization's upload is no evidence, and an upload after the ejection
// changes nothing. The evidence shows in testing details and events.
func TestAntiFlakeRetriesOverHTTP(t *testing.T) {
	t.Parallel()
	w := newQueueWorld(t)
	rc := newHook(t)
	out, _, code := mg(t, w.e, "webhook", "add", "--org", "acme", "--url", rc.srv.URL+"/hook", "--events", "pull_request.queued, pull_request.failed")
	if code != 0 {
		t.Fatalf("webhook add: %q", out)
	}
	rc.trust(secretRE.FindString(out))
	var metrics string

	// Test health before: "checkout flakes" failed and passed on one
	// commit (flaky), "coupon" is quarantined by hand, "totals" is healthy.
	w.upload("acme", w.token, fullSHA("f1a4e01"), "feature/x", "checkout flakes!", "checkout flakes", "coupon", "totals")
	if out, errOut, code := mg(t, w.e, "repo", "set", "github.com/"+shopRepo, "--org", "acme", "--quarantine", "on"); code != 0 {
		t.Fatalf("repo set: %s %s", out, errOut)
	}
	coupon := testhealth.TestID(testhealth.Identity{Org: "acme", Repo: "github.com/" + shopRepo,
		File: "src/checkout/cart_test.go", Classname: "web.Checkout", Parent: "checkout-suite", Name: "coupon"})
	if out, errOut, code := mg(t, w.e, "test", "quarantine", "github.com/"+shopRepo, coupon, "--always", "--org", "acme"); code != 0 {
		t.Fatalf("test quarantine: %s %s", out, errOut)
	}
	if got := w.testStatus("checkout flakes")["value"]; got != "flaky" {
		t.Fatalf("checkout flakes is %v before the queue, want flaky", got)
	}

	w.call("createQueue", nil)
	q := w.call("updateQueue", map[string]any{"flakyRetries": 1})
	if q["flakyRetries"] != 1.0 || q["flakyRetryPolicy"] != "KNOWN_FLAKY" || q["flakyEvidenceWaitSeconds"] != 120.0 {
		t.Fatalf("updateQueue answered %v", q)
	}

	// 1. A flaky failure: retried once, on the same commit, then merges.
	n1 := w.submit("one")
	run1, head1 := w.ci(n1, "failure", "checkout flakes!", "coupon", "totals")
	_, retryHead := w.testBranch(n1)
	if retryHead != head1 {
		t.Errorf("the retry tests %s, want the failed commit %s", retryHead, head1)
	}
	run1b, _ := w.ci(n1, "success", "checkout flakes", "coupon", "totals")
	if p := w.pr(n1); p["state"] != "MERGED" || p["flakyRetriesUsed"] != 1.0 {
		t.Errorf("PR %d: %v after %v retries, want MERGED after 1", n1, p["state"], p["flakyRetriesUsed"])
	}
	if d := w.details(run1); !slices.Equal(failedTests(d), []string{"checkout flakes flaky quarantined"}) || d["status"] != "FAILED" {
		t.Errorf("first run: %v, failed tests %v", d["status"], failedTests(d))
	}
	if d := w.details(run1b); d["retryOf"] != run1 || d["retriesTaken"] != 1.0 || d["testBranchSha"] != head1 || d["status"] != "SUCCEEDED" {
		t.Errorf("retry run: retryOf %v, retriesTaken %v, sha %v, status %v", d["retryOf"], d["retriesTaken"], d["testBranchSha"], d["status"])
	}

	// 2. A healthy test fails: ejected at once, no retry.
	n2 := w.submit("two")
	run2, _ := w.ci(n2, "failure", "checkout flakes", "coupon", "totals!")
	if p := w.pr(n2); p["state"] != "FAILED" || p["flakyRetriesUsed"] != 0.0 {
		t.Errorf("PR %d: %v after %v retries, want FAILED after 0", n2, p["state"], p["flakyRetriesUsed"])
	}
	if got := failedTests(w.details(run2)); !slices.Equal(got, []string{"totals healthy"}) {
		t.Errorf("healthy failure's evidence %v", got)
	}

	// 3. A quarantined test fails: KNOWN_FLAKY retries it.
	n3 := w.submit("three")
	w.ci(n3, "failure", "checkout flakes", "coupon!", "totals")
	w.ci(n3, "success", "checkout flakes", "coupon", "totals")
	if p := w.pr(n3); p["state"] != "MERGED" || p["flakyRetriesUsed"] != 1.0 {
		t.Errorf("PR %d: %v after %v retries, want MERGED after 1", n3, p["state"], p["flakyRetriesUsed"])
	}

	// 4. ANY_FAILURE retries a healthy failure; the pass on the same commit
	// teaches test health that "refunds" is flaky.
	w.call("updateQueue", map[string]any{"flakyRetryPolicy": "ANY_FAILURE"})
	n4 := w.submit("four")
	_, head4 := w.ci(n4, "failure", "refunds!", "totals")
	w.ci(n4, "success", "refunds", "totals")
	if p := w.pr(n4); p["state"] != "MERGED" || p["flakyRetriesUsed"] != 1.0 {
		t.Errorf("PR %d: %v after %v retries, want MERGED after 1", n4, p["state"], p["flakyRetriesUsed"])
	}
	if st := w.testStatus("refunds"); st["value"] != "flaky" || !strings.Contains(st["reason"].(string), "pass-on-retry: failed and passed on commit "+head4[:7]) {
		t.Errorf("refunds after the queue's retry: %v", st)
	}

	// 5. Another organization's upload for the test branch is no evidence;
	// with no wait the PR fails at the first look, and the organization's
	// own upload after that changes nothing.
	w.call("updateQueue", map[string]any{"flakyRetryPolicy": "KNOWN_FLAKY", "flakyEvidenceWaitSeconds": 0})
	evil := w.org("evil")
	w.upload("evil", evil, fullSHA("e0e0e0e"), "feature/y", "checkout flakes!", "checkout flakes")
	n5 := w.submit("five")
	branch5, head5 := w.testBranch(n5)
	w.upload("evil", evil, head5, branch5, "checkout flakes!")
	if err := w.sim.SetStatus(shopRepo, head5, "ci", "failure", "", ""); err != nil {
		t.Fatal(err)
	}
	w.step()
	w.upload("acme", w.token, head5, branch5, "checkout flakes!")
	w.step()
	if p := w.pr(n5); p["state"] != "FAILED" || p["flakyRetriesUsed"] != 0.0 {
		t.Errorf("PR %d: %v after %v retries, want FAILED after 0", n5, p["state"], p["flakyRetriesUsed"])
	}

	// The events: each retry's pull_request.queued names its reason and
	// failed tests; the ejected PRs have none.
	deliverNow(t, w.e)
	var retries []string
	failed := 0
	for _, body := range rc.payloads() {
		var ev struct {
			Type         string   `json:"type"`
			PRNumber     int      `json:"pr_number"`
			QueuedReason string   `json:"queued_reason"`
			FlakyTests   []string `json:"flaky_tests"`
		}
		if err := json.Unmarshal([]byte(body), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type == "pull_request.failed" {
			failed++
		}
		if strings.HasPrefix(ev.QueuedReason, "RETRY_") {
			retries = append(retries, fmt.Sprintf("#%d %s %v", ev.PRNumber, ev.QueuedReason, ev.FlakyTests))
		}
	}
	slices.Sort(retries)
	want := []string{
		fmt.Sprintf("#%d RETRY_KNOWN_FLAKY [checkout flakes]", n1),
		fmt.Sprintf("#%d RETRY_KNOWN_FLAKY [coupon]", n3),
		fmt.Sprintf("#%d RETRY_FAILURE []", n4), // ANY_FAILURE retries without reading results
	}
	slices.Sort(want)
	if !slices.Equal(retries, want) || failed != 2 {
		t.Errorf("retry events %v (want %v), %d failed events (want 2)", retries, want, failed)
	}

	// The metric counts the three retries.
	req, _ := http.NewRequest(http.MethodGet, w.base+"/getMergeQueueMetrics", nil)
	req.Header.Set("x-api-token", w.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	code, metrics = resp.StatusCode, string(raw)
	if code != 200 || !strings.Contains(metrics, `mq_pr_flaky_retries_1h{repo="acme/shop",branch="main",queue_type="main"} 3`) {
		t.Errorf("metrics: %d\n%s", code, metrics)
	}
}
