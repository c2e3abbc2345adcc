package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The end-to-end tests of `mainguard test` and `upload
// --test-process-exit-code`: real test runners (gotestsum, pinned, through
// `go run`; Debian's pytest) writing JUnit, the whole service behind an
// HTTP listener on its own table, and the program run as CI runs it, with
// a CI's environment.

// gotestsum is the pinned reporter, run with `go run` so nothing is
// installed by hand (a version the module proxy serves).
const gotestsum = "gotest.tools/gotestsum@v1.13.0"

// ciWorld is one organization's service and a checkout to run tests in.
type ciWorld struct {
	t     *testing.T
	e     map[string]string // the program's environment
	base  string            // the API's address
	dir   string            // the checkout
	org   string
	token string
}

func newCIWorld(t *testing.T, org string) *ciWorld {
	t.Helper()
	return newCIWorldWith(t, org, nil)
}

// newCIWorldWith is newCIWorld with more of the service's configuration.
func newCIWorldWith(t *testing.T, org string, config map[string]string) *ciWorld {
	t.Helper()
	e := localEnv(t, config)
	out, _, code := mg(t, e, "org", "create", "--slug", org)
	token := tokenRE.FindString(out)
	if code != 0 || token == "" {
		t.Fatalf("org create: %d %q", code, out)
	}
	w := &ciWorld{t: t, e: e, base: service(t, e), dir: t.TempDir(), org: org, token: token}
	e["MAINGUARD_TOKEN"], e["MAINGUARD_URL"], e["MAINGUARD_ORG"] = token, w.base, org
	return w
}

// run runs the program in the checkout with the world's environment and
// vars over it.
func (w *ciWorld) run(vars map[string]string, args ...string) (string, string, int) {
	w.t.Helper()
	all := map[string]string{}
	for k, v := range w.e {
		all[k] = v
	}
	for k, v := range vars {
		all[k] = v
	}
	var out, errb bytes.Buffer
	code := runEnv(&env{ctx: context.Background(), stdout: &out, stderr: &errb, getenv: getenvOf(all), now: time.Now, dir: w.dir}, args)
	return out.String(), errb.String(), code
}

// admin runs an administration command on the world's table.
func (w *ciWorld) admin(args ...string) string {
	w.t.Helper()
	out, errOut, code := mg(w.t, w.e, args...)
	if code != 0 {
		w.t.Fatalf("%v: %d %s %s", args, code, out, errOut)
	}
	return out
}

func (w *ciWorld) write(name, body string) string {
	w.t.Helper()
	p := filepath.Join(w.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return p
}

func (w *ciWorld) remove(name string) {
	w.t.Helper()
	if err := os.Remove(filepath.Join(w.dir, name)); err != nil && !os.IsNotExist(err) {
		w.t.Fatal(err)
	}
}

// githubActions is the environment GitHub Actions gives a job of repo on
// a push of sha to branch, or (pr > 0) on a pull request whose head is
// sha, at run attempt attempt.
func (w *ciWorld) githubActions(repo, sha, branch string, pr, attempt int) map[string]string {
	w.t.Helper()
	env := map[string]string{
		"CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": repo,
		"GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": fmt.Sprint(attempt), "GITHUB_SHA": sha,
		"GITHUB_EVENT_NAME": "push", "GITHUB_REF": "refs/heads/" + branch, "GITHUB_REF_NAME": branch,
	}
	if pr > 0 {
		event := filepath.Join(w.t.TempDir(), "event.json")
		body := fmt.Sprintf(`{"pull_request":{"number":%d,"head":{"sha":%q,"ref":%q},"base":{"ref":"main"}}}`, pr, sha, branch)
		if err := os.WriteFile(event, []byte(body), 0o644); err != nil {
			w.t.Fatal(err)
		}
		env["GITHUB_EVENT_NAME"], env["GITHUB_EVENT_PATH"] = "pull_request", event
		// On a pull request GITHUB_SHA is the merge commit GitHub made.
		env["GITHUB_SHA"], env["GITHUB_REF"], env["GITHUB_REF_NAME"] = strings.Repeat("9", 40), fmt.Sprintf("refs/pull/%d/merge", pr), fmt.Sprintf("%d/merge", pr)
		env["GITHUB_HEAD_REF"], env["GITHUB_BASE_REF"] = branch, "main"
	}
	return env
}

// commitOf is a commit sha made of the hex digit d.
func commitOf(d string) string { return strings.Repeat(d, 40) }

// goSample is a Go module whose tests fail when a file fail-{name} is in
// the checkout; brokenBuild adds a file that does not compile.
func (w *ciWorld) goSample() {
	w.write("go.mod", "module sample\n\ngo 1.26\n")
	var b strings.Builder
	b.WriteString("package sample\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc check(t *testing.T, name string) {\n\tif _, err := os.Stat(\"fail-\" + name); err == nil {\n\t\tt.Fatal(name + \" broke\")\n\t}\n}\n")
	for _, n := range []string{"Alpha", "Beta", "Gamma", "Delta", "Epsilon"} {
		fmt.Fprintf(&b, "\nfunc Test%s(t *testing.T) { check(t, %q) }\n", n, strings.ToLower(n))
	}
	w.write("sample_test.go", b.String())
}

// gotestsumRun is `mainguard test` running the Go tests through the
// pinned gotestsum, which writes junit/go.xml.
func (w *ciWorld) gotestsumRun(vars map[string]string, extra ...string) (string, string, int) {
	w.t.Helper()
	args := append([]string{"test", "--junit", "junit/*.xml"}, extra...)
	args = append(args, "--", "go", "run", gotestsum, "--junitfile", "junit/go.xml", "--format", "testname", "--", "-count=1", "./...")
	return w.run(vars, args...)
}

func wantExit(t *testing.T, what string, got, want int, out, errOut string) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", what, got, want, out, errOut)
	}
}

func wantIn(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("%s does not show %q:\n%s", what, want, text)
		}
	}
}

// TestTestWithGotestsum is the Done-when list with `go test` through
// gotestsum on GitHub Actions: all pass → 0; a failure then a pass on a
// re-run of the job (GITHUB_RUN_ATTEMPT 2, same commit) is pass-on-retry;
// only quarantined failures → 0; a real failure → the command's code,
// labelled new beside the quarantined one; a compile error → non-zero,
// with gotestsum's report of it and with no report at all (the stale one
// skipped and named).
func TestTestWithGotestsum(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("the test runs go")
	}
	w := newCIWorld(t, "acme")
	w.goSample()
	const repo = "acme/gosample"

	out, errOut, code := w.gotestsumRun(w.githubActions(repo, commitOf("1"), "main", 0, 1))
	wantExit(t, "all pass", code, 0, out, errOut)
	wantIn(t, "all pass", out, "PASS TestAlpha", "uploaded 1 file(s)", "5 runs, 5 passed, 0 failed, 0 skipped; 0 failed test(s)")

	// A pull request's job fails on Gamma; its re-run passes: a retry of
	// the same commit, so Gamma is flaky.
	w.write("fail-gamma", "")
	out, errOut, code = w.gotestsumRun(w.githubActions(repo, commitOf("2"), "feature/a", 17, 1))
	wantExit(t, "attempt 1", code, 1, out, errOut)
	wantIn(t, "attempt 1", out, "--- FAIL: TestGamma", "1 failed test(s), 0 quarantined", "failed", "TestGamma", "new: no failure in the 7 days before this run")
	w.remove("fail-gamma")
	out, errOut, code = w.gotestsumRun(w.githubActions(repo, commitOf("2"), "feature/a", 17, 2))
	wantExit(t, "attempt 2", code, 0, out, errOut)
	list := w.admin("test", "list", "github.com/"+repo, "--org", "acme")
	wantIn(t, "the test list after the re-run", list, "flaky", "TestGamma", "pass-on-retry: failed and passed on commit 2222222 (feature/a)")

	// Quarantine on: Gamma's failure alone no longer fails the build.
	w.admin("repo", "set", "github.com/"+repo, "--org", "acme", "--quarantine", "on")
	w.write("fail-gamma", "")
	out, errOut, code = w.gotestsumRun(w.githubActions(repo, commitOf("3"), "feature/b", 18, 1))
	wantExit(t, "only quarantined failures", code, 0, out, errOut)
	wantIn(t, "only quarantined failures", out, "TestGamma (quarantined: its failure does not fail the build)", "quarantined: quarantined as flaky")
	wantIn(t, "only quarantined failures", errOut, "every failed test is quarantined: exit 0 instead of 1")

	// A real failure beside it: the command's code; the new one first.
	w.write("fail-delta", "")
	out, errOut, code = w.gotestsumRun(w.githubActions(repo, commitOf("4"), "feature/c", 19, 1))
	wantExit(t, "a real failure", code, 1, out, errOut)
	wantIn(t, "a real failure", out, "2 failed test(s), 1 quarantined", "TestDelta", "new: no failure in the 7 days before this run: probably this change",
		"/acme/uploads/")
	if !regexp.MustCompile(`(?s)failed \S+ TestDelta\n\s+new: .*\n\s+https?://\S+/acme/flaky-tests/test/`).MatchString(out) {
		t.Errorf("TestDelta's label and page are not printed together:\n%s", out)
	}

	// A compile error: gotestsum reports it as a failed TestMain.
	w.remove("fail-delta")
	w.write("broken.go", "package sample\n\nfunc broken( {\n")
	out, errOut, code = w.gotestsumRun(w.githubActions(repo, commitOf("5"), "feature/d", 20, 1))
	wantExit(t, "a compile error", code, 1, out, errOut)
	// Without a reporter, no report is written: the one there is the
	// previous run's, skipped and named; the command's code stands.
	out, errOut, code = w.run(w.githubActions(repo, commitOf("5"), "feature/d", 20, 2), "test", "--junit", "junit/*.xml", "--", "go", "test", "-count=1", "./...")
	wantExit(t, "a compile error without a report", code, 1, out, errOut)
	wantIn(t, "a compile error without a report", errOut, "skipped junit/go.xml: written before the command started", "no JUnit report to upload")
}

// TestTestWithPytest: the same with Debian's pytest (make test installs
// python3-pytest): all pass → 0; a real failure → pytest's own exit code
// (1); a failure of a test quarantined by its override → 0.
func TestTestWithPytest(t *testing.T) {
	t.Parallel()
	pytest, err := exec.LookPath("pytest-3")
	if err != nil {
		t.Fatal("the test runs pytest-3 (Debian package python3-pytest; `make test` installs it)")
	}
	w := newCIWorld(t, "acme")
	w.write("test_sample.py", `import os

def fails(name):
    return os.path.exists("fail-" + name)

def test_parse():
    assert not fails("parse")

def test_render():
    assert not fails("render")

def test_network():
    assert not fails("network"), "connection reset by peer"

def test_cache():
    assert not fails("cache")
`)
	const repo = "acme/pysample"
	run := func(sha string, pr int) (string, string, int) {
		return w.run(w.githubActions(repo, sha, "feature/p", pr, 1), "test", "--junit", "reports/pytest.xml", "--",
			pytest, "-q", "-p", "no:cacheprovider", "--junitxml=reports/pytest.xml")
	}
	out, errOut, code := run(commitOf("a"), 31)
	wantExit(t, "all pass", code, 0, out, errOut)
	wantIn(t, "all pass", out, "4 runs, 4 passed, 0 failed")

	w.write("fail-render", "")
	out, errOut, code = run(commitOf("b"), 32)
	wantExit(t, "a real failure", code, 1, out, errOut)
	wantIn(t, "a real failure", out, "1 failed test(s), 0 quarantined", "test_render", "new: ")
	w.remove("fail-render")

	// test_network is quarantined by its override.
	w.write("fail-network", "")
	out, _, _ = run(commitOf("c"), 33)
	w.admin("repo", "set", "github.com/"+repo, "--org", "acme", "--quarantine", "on")
	w.admin("test", "quarantine", "github.com/"+repo, failedID(t, out, "test_network"), "--org", "acme", "--always")
	out, errOut, code = run(commitOf("d"), 34)
	wantExit(t, "only a quarantined failure", code, 0, out, errOut)
	wantIn(t, "only a quarantined failure", out, "quarantined: quarantined by its ALWAYS_QUARANTINE override")
}

// TestCIInfo: ci-info prints what was detected and from where, flags
// over the CI's environment.
func TestCIInfo(t *testing.T) {
	t.Parallel()
	gitlab := map[string]string{"GITLAB_CI": "true", "CI_PROJECT_URL": "https://gitlab.com/acme/web", "CI_COMMIT_SHA": commitOf("c"),
		"CI_COMMIT_REF_NAME": "feature/a", "CI_MERGE_REQUEST_IID": "8", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "feature/a",
		"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "CI_JOB_URL": "https://gitlab.com/acme/web/-/jobs/42", "CI_JOB_RETRY_COUNT": "1"}
	var out, errb bytes.Buffer
	code := runEnv(&env{ctx: context.Background(), stdout: &out, stderr: &errb, getenv: getenvOf(gitlab), now: time.Now, dir: t.TempDir()},
		[]string{"ci-info", "--branch", "topic"})
	if code != 0 {
		t.Fatalf("ci-info: %d %s", code, errb.String())
	}
	for _, want := range []string{
		"CI             GitLab CI",
		"repository     gitlab.com/acme/web",
		"from CI_PROJECT_URL",
		"commit         " + commitOf("c") + "  from CI_COMMIT_SHA",
		"branch         topic",
		"from flag",
		"pull request   8",
		"target branch  main",
		"attempt        2",
		"from CI_JOB_RETRY_COUNT",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("ci-info does not show %q:\n%s", want, out.String())
		}
	}
}
