package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mainguard/mainguard/shared/app"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/testhealth"
	"github.com/mainguard/mainguard/shared/wiring"
)

// service runs the whole service behind an HTTP listener, as `serve` does,
// on the environment e (a fresh table of the test's DynamoDB Local).
func service(t *testing.T, e map[string]string) string {
	t.Helper()
	base, _ := serviceApp(t, e)
	return base
}

// serviceApp is service, with the app behind it (its scheduler's parts).
func serviceApp(t *testing.T, e map[string]string) (string, *app.App) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String() + "/v1"
	e["BUNDLE_DIR"], e["PUBLIC_API_URL"] = t.TempDir(), base
	if e["PUBLIC_APP_URL"] == "" {
		// Its pages are served here too, as serve serves them.
		e["PUBLIC_APP_URL"] = "http://" + ln.Addr().String()
	}
	cfg, err := config.FromEnv(getenvOf(e))
	if err != nil {
		t.Fatal(err)
	}
	db, err := wiring.DynamoClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, app.Options{DB: db, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: a.Mux()}}
	srv.Start()
	t.Cleanup(srv.Close)
	return base, a
}

// acmeService is the service on a fresh table with the organization acme:
// the program's environment, acme's token and the service's address.
func acmeService(t *testing.T) (map[string]string, string, string) {
	t.Helper()
	e := localEnv(t, nil)
	out, _, code := mg(t, e, "org", "create", "--slug", "acme")
	token := tokenRE.FindString(out)
	if code != 0 || token == "" {
		t.Fatalf("org create: %d %q", code, out)
	}
	return e, token, service(t, e)
}

func writeReport(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// junitXML is a report of cases: "name" passes, "name!" fails.
func junitXML(cases ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?><testsuites><testsuite name="checkout-suite">`)
	for _, c := range cases {
		name, failed := strings.CutSuffix(c, "!")
		fmt.Fprintf(&b, `<testcase classname="web.Checkout" name="%s" file="src/checkout/cart_test.go" time="0.25">`, name)
		if failed {
			fmt.Fprintf(&b, `<failure message="timeout after %dms waiting for #cart-total"/>`, 3000+len(name))
		}
		b.WriteString("</testcase>")
	}
	b.WriteString("</testsuite></testsuites>")
	return b.String()
}

// fullSHA is a commit's 40 hex digits, from a short name padded with 0.
func fullSHA(short string) string { return short + strings.Repeat("0", 40-len(short)) }

// TestUploadEndToEnd sends the results of several commits with
// `mainguard upload` through the three upload calls of the real protocol,
// then reads the tests back as a client would.
func TestUploadEndToEnd(t *testing.T) {
	t.Parallel()
	e, token, base := acmeService(t)
	dir := t.TempDir()
	owners := writeReport(t, dir, "CODEOWNERS", "* @acme/everyone\n/src/checkout/ @acme/payments shop@acme.example\n")
	upload := func(sha, branch string, pr int, files ...string) string {
		t.Helper()
		args := []string{"upload", "--token", token, "--org", "acme", "--repo", "github.com/acme/shop",
			"--sha", sha, "--branch", branch, "--codeowners", owners, "--url", base}
		if pr > 0 {
			args = append(args, "--pr", fmt.Sprint(pr))
		}
		out, errOut, code := mg(t, e, append(args, files...)...)
		if code != 0 {
			t.Fatalf("upload %s: %d %s %s", sha, code, out, errOut)
		}
		return out
	}
	// Main is green; a pull request's run retries "applies coupon" (fails,
	// then passes on the same commit); then "totals" starts failing on main.
	upload(fullSHA("c0ffee1"), "main", 0, writeReport(t, dir, "a.xml", junitXML("applies coupon", "totals")))
	upload(fullSHA("b0a7ed2"), "feature/coupons", 17, writeReport(t, dir, "b.xml", junitXML("applies coupon!", "applies coupon", "totals")))
	for i := range 5 {
		upload(fullSHA(fmt.Sprintf("dead%03d", i)), "main", 0, writeReport(t, dir, fmt.Sprintf("m%d.xml", i), junitXML("applies coupon", "totals!")))
	}
	if out, errOut, code := mg(t, e, "repo", "set", "github.com/acme/shop", "--org", "acme", "--quarantine", "on"); code != 0 {
		t.Fatalf("repo set: %s %s", out, errOut)
	}

	details := func(name string) map[string]any {
		t.Helper()
		id := testhealth.TestID(testhealth.Identity{Org: "acme", Repo: "github.com/acme/shop",
			File: "src/checkout/cart_test.go", Classname: "web.Checkout", Parent: "checkout-suite", Name: name})
		body, _ := json.Marshal(map[string]any{"repo": map[string]string{"host": "github.com", "owner": "acme", "name": "shop"},
			"org_url_slug": "acme", "test_id": id})
		req, _ := http.NewRequest(http.MethodPost, base+"/flaky-tests/get-test-details", bytes.NewReader(body))
		req.Header.Set("x-api-token", token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got struct {
			Test map[string]any `json:"test"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 {
			t.Fatalf("get-test-details %s: %d %v", name, resp.StatusCode, err)
		}
		return got.Test
	}
	coupon := details("applies coupon")
	status := coupon["status"].(map[string]any)
	if status["value"] != "flaky" || !strings.HasPrefix(status["reason"].(string), "pass-on-retry: failed and passed on commit b0a7ed2 (feature/coupons); recovery: ") {
		t.Errorf("coupon status %v", status)
	}
	// 1 failure in 8 runs; one cluster; PR 17; owners by the last match.
	if r := coupon["failure_rate_last_7d"].(float64); r != 0.125 || coupon["failure_rate_last_24h"].(float64) != 0.125 {
		t.Errorf("coupon rates %v %v", r, coupon["failure_rate_last_24h"])
	}
	if n := coupon["pull_requests_impacted_last_7d"].(float64); n != 1 {
		t.Errorf("coupon PRs impacted %v", n)
	}
	if got := fmt.Sprint(coupon["codeowners"]); got != "[@acme/payments shop@acme.example]" {
		t.Errorf("coupon owners %s", got)
	}
	fails := coupon["most_common_failures"].([]any)
	if len(fails) != 1 || fails[0].(map[string]any)["occurrence_count"].(float64) != 1 ||
		!strings.HasPrefix(fails[0].(map[string]any)["summary"].(string), "timeout after 3014ms") {
		t.Errorf("coupon failures %v", fails)
	}
	if coupon["quarantined"] != true {
		t.Errorf("a flaky test of a quarantining repository is not quarantined")
	}
	totals := details("totals")
	status = totals["status"].(map[string]any)
	// Five commits failed, none retried: four are settled.
	if status["value"] != "broken" || status["reason"] != "broken-streak: every attempt failed on the last 4 commits on main" {
		t.Errorf("totals status %v", status)
	}
	if r := totals["failure_rate_last_7d"].(float64); r != 5.0/7 {
		t.Errorf("totals rate %v", r)
	}
	// Five failures with different numbers are one cluster.
	if fails := totals["most_common_failures"].([]any); len(fails) != 1 || fails[0].(map[string]any)["occurrence_count"].(float64) != 5 {
		t.Errorf("totals failures %v", fails)
	}
	// The uploader asks getQuarantineConfig about its failed tests: after
	// quarantining is on, the next upload reports totals quarantined.
	out := upload(fullSHA("dead999"), "main", 0, writeReport(t, dir, "q.xml", junitXML("applies coupon", "totals!")))
	if !strings.Contains(out, "1 failed test(s), 1 quarantined") {
		t.Errorf("upload summary %q", out)
	}
	// The summary counts the runs and names each failed test with its id,
	// its status read back, and its page.
	totalsID := totals["test_id"]
	if totalsID == nil {
		totalsID = totals["id"]
	}
	for _, want := range []string{
		"2 runs, 1 passed, 1 failed, 0 skipped",
		fmt.Sprintf("failed %s totals (quarantined: its failure does not fail the build)", totalsID),
		"quarantined: quarantined as broken (broken-streak: every attempt failed on the last 5 commits on main",
		totals["html_url"].(string),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("upload summary does not show %q:\n%s", want, out)
		}
	}
	// The admin program lists and shows the tests.
	out, _, code := mg(t, e, "test", "list", "github.com/acme/shop", "--org", "acme")
	if code != 0 || strings.Count(out, "\n") != 3 || !regexp.MustCompile(`^ID +STATUS +QUARANTINED +NAME +REASON\n`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^[0-9a-f-]{36} +flaky +yes +applies coupon +pass-on-retry`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^[0-9a-f-]{36} +broken +yes +totals +broken-streak`).MatchString(out) {
		t.Errorf("test list:\n%s", out)
	}
	if out, _, _ := mg(t, e, "test", "list", "github.com/acme/shop", "--org", "acme", "--status", "broken", "--ids"); strings.TrimSpace(out) != totalsID {
		t.Errorf("test list --status broken --ids: %q, want %v", out, totalsID)
	}
	out, _, code = mg(t, e, "test", "show", "github.com/acme/shop", fmt.Sprint(totalsID), "--org", "acme")
	for _, want := range []string{"totals\n", "status       broken since", "reason       broken-streak", "quarantined  yes (override UNSPECIFIED)",
		"owners       @acme/payments shop@acme.example", "failures     6× timeout after", "page         " + totals["html_url"].(string)} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("test show does not show %q:\n%s", want, out)
		}
	}
	// The admin program lists the uploads.
	out, _, _ = mg(t, e, "uploads", "list", "--org", "acme")
	if strings.Count(out, "INGESTED") != 8 {
		t.Errorf("uploads list:\n%s", out)
	}
}

// TestUploadSaysWhatTheGuardDid (issue 32, item 4): Surefire's report of a
// test that failed twice and passed on its third try is one test case
// passed on retry: `mainguard upload` says nothing of the infrastructure
// guard and the test reads flaky. An outage (9 of 10 test cases failed)
// is set aside, and the upload's output, `uploads list` and the reason of
// each failed test say so. An override with an end prints it.
func TestUploadSaysWhatTheGuardDid(t *testing.T) {
	t.Parallel()
	e, token, base := acmeService(t)
	upload := func(sha string, files ...string) string {
		t.Helper()
		args := []string{"upload", "--token", token, "--org", "acme", "--repo", "github.com/acme/shop", "--sha", sha, "--branch", "main", "--url", base}
		out, errOut, code := mg(t, e, append(args, files...)...)
		if code != 0 {
			t.Fatalf("upload %s: %d %s %s", sha, code, out, errOut)
		}
		return out
	}
	out := upload(fullSHA("f00d001"), filepath.Join("..", "..", "testdata", "junit", "surefire-3.0.2-flakyFailure.xml"))
	if strings.Contains(out, "infrastructure guard") || !strings.Contains(out, "known flaky: flaky (pass-on-retry: failed and passed on commit f00d001 (main); recovery: ") {
		t.Errorf("the Surefire upload:\n%s", out)
	}
	dir := t.TempDir()
	cases := []string{"still works"}
	for i := range 9 {
		cases = append(cases, fmt.Sprintf("outage %d!", i))
	}
	out = upload(fullSHA("0dd0002"), writeReport(t, dir, "outage.xml", junitXML(cases...)))
	for _, want := range []string{
		"9 of 10 test cases failed (a test that passed on a retry in the reports did not): more than 80%, so the infrastructure guard (on unless the repository turned it off) sets this upload aside",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the outage's upload output does not show %q:\n%s", want, out)
		}
	}
	// Each failed test's reason says so too.
	if m := regexp.MustCompile(`failed ([0-9a-f-]{36}) outage 0\n`).FindStringSubmatch(out); m == nil {
		t.Errorf("the outage's upload output lists no outage 0:\n%s", out)
	} else if shown, _, _ := mg(t, e, "test", "show", "github.com/acme/shop", m[1], "--org", "acme"); !strings.Contains(shown, "1 failure in 1 run in 7 days; below the failure-rate monitor's 20 runs (0 runs on main); its latest upload, ") ||
		!strings.Contains(shown, ", was set aside by the infrastructure guard (more than 80% of its test cases failed), so its failure there counts in the rates but not for flaky or broken") {
		t.Errorf("test show of outage 0 does not say the guard set its upload aside:\n%s", shown)
	}
	out, _, _ = mg(t, e, "uploads", "list", "--org", "acme")
	if strings.Count(out, "set aside by the infrastructure guard: 9 of 10 test cases failed (more than 80%)") != 1 || strings.Count(out, "INGESTED") != 2 {
		t.Errorf("uploads list:\n%s", out)
	}

	id := testhealth.TestID(testhealth.Identity{Org: "acme", Repo: "github.com/acme/shop", File: "src/checkout/cart_test.go",
		Classname: "web.Checkout", Parent: "checkout-suite", Name: "still works"})
	out, errOut, code := mg(t, e, "test", "quarantine", "github.com/acme/shop", id, "--org", "acme", "--always", "--until", "2099-01-31")
	if code != 0 || !strings.Contains(out, "quarantine override ALWAYS_QUARANTINE until 2099-02-01T00:00:00.000Z, then the repository's rule, status healthy") {
		t.Errorf("test quarantine --until: %d %q %q", code, out, errOut)
	}
	if out, _, _ := mg(t, e, "test", "show", "github.com/acme/shop", id, "--org", "acme"); !strings.Contains(out, "(override ALWAYS_QUARANTINE until 2099-02-01T00:00:00.000Z)") {
		t.Errorf("test show:\n%s", out)
	}
	for args, want := range map[string]string{
		"--always --until 2001-01-31": "until must be in the future",
		"--unset --until 2099-01-31":  "--until goes with --always or --never",
		"--never --until soon":        `--until must be a date (2027-01-31`,
	} {
		_, errOut, code := mg(t, e, append([]string{"test", "quarantine", "github.com/acme/shop", id, "--org", "acme"}, strings.Fields(args)...)...)
		if code == 0 || !strings.Contains(errOut, want) {
			t.Errorf("test quarantine %s: exit %d, %q; want %q", args, code, errOut, want)
		}
	}
}
