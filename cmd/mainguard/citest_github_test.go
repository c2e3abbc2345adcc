package main

import (
	"bufio"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/github/githubsim"
	"github.com/mainguard/mainguard/shared/healthsvc"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// TestCheckRunOnePerCommit: with GitHub configured as a GitHub App, a pull
// request's commit gets one check run mainguard/tests whose summary lists
// the failures by label (a run mixing all four kinds), edited in place by
// each re-run of the job (never a second per commit): a test that passes
// on the re-run leaves the list, and once only quarantined failures are
// left the check passes, as `mainguard test` exits 0.
func TestCheckRunOnePerCommit(t *testing.T) {
	t.Parallel()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := githubsim.New(t.TempDir(), githubsim.Options{App: &githubsim.App{ID: 42, PublicKey: &key.PublicKey, InstallationID: 7}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	if _, err := sim.CreateRepo("acme/checks", "main"); err != nil {
		t.Fatal(err)
	}
	head, err := sim.CommitFile("acme/checks", "feature/login", "login.go", "package login\n", "Change the login")
	if err != nil {
		t.Fatal(err)
	}
	pr, err := sim.OpenPR("acme/checks", "feature/login", "main", "Change the login", "dev")
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	w := newCIWorldWith(t, "acme", map[string]string{
		"GITHUB_API_URL": sim.URL(), "GITHUB_APP_ID": "42", "GITHUB_APP_PRIVATE_KEY": string(pemKey),
	})
	tests := []string{"quarantined_test", "flaky_test", "main_test", "new_test", "p1", "p2", "p3", "p4"}
	run := func(env map[string]string, code int, failed ...string) (string, string, int) {
		t.Helper()
		return w.run(env, append([]string{"test", "--junit", "r/*.xml", "--"}, shWriting("r/r.xml", junitOf("suite", tests, failed...), code)...)...)
	}
	id := func(name string) string {
		return testhealth.TestID(testhealth.Identity{Org: "acme", Repo: "github.com/acme/checks", Classname: "ci", Parent: "suite", Name: name})
	}
	// On main: flaky_test fails then passes on one commit (pass-on-retry);
	// main_test fails on the branch's latest commit.
	run(w.githubActions("acme/checks", commitOf("1"), "main", 0, 1), 1, "flaky_test")
	run(w.githubActions("acme/checks", commitOf("1"), "main", 0, 2), 0)
	run(w.githubActions("acme/checks", commitOf("2"), "main", 0, 1), 1, "main_test")
	w.admin("repo", "set", "github.com/acme/checks", "--org", "acme", "--quarantine", "on")
	w.admin("test", "quarantine", "github.com/acme/checks", id("quarantined_test"), "--org", "acme", "--always")
	w.admin("test", "quarantine", "github.com/acme/checks", id("flaky_test"), "--org", "acme", "--never")
	if runs, _ := sim.CheckRuns("acme/checks", head); len(runs) != 0 {
		t.Fatalf("check runs before the pull request's first upload: %v", runs)
	}

	ours := func() githubsim.CheckRunInfo {
		t.Helper()
		runs, err := sim.CheckRuns("acme/checks", head)
		if err != nil {
			t.Fatal(err)
		}
		var mine []githubsim.CheckRunInfo
		for _, r := range runs {
			if r.AppID == 42 && r.Name == healthsvc.CheckRunName {
				mine = append(mine, r)
			}
		}
		if len(mine) != 1 {
			t.Fatalf("%d check runs %s on the commit, want one: %+v", len(mine), healthsvc.CheckRunName, mine)
		}
		return mine[0]
	}
	// The pull request's job: one failure of each kind.
	out, errOut, code := run(w.githubActions("acme/checks", head, "feature/login", pr, 1), 1, "quarantined_test", "flaky_test", "main_test", "new_test")
	wantExit(t, "attempt 1", code, 1, out, errOut)
	first := ours()
	if first.Status != "completed" || first.Conclusion != "failure" || first.Title != "1 new, 1 failing on main, 1 known flaky, 1 quarantined" ||
		!strings.Contains(first.DetailsURL, "/acme/uploads/") {
		t.Errorf("attempt 1's check run: %+v", first)
	}
	sections := []string{
		"### New: probably this change (1)\n\n- **new\\_test**: no failure in the 7 days before this run: probably this change",
		"### Failing on main too (1)\n\n- **main\\_test**: its last 1 run on main failed too",
		"### Known flaky (1)\n\n- **flaky\\_test**: flaky (pass-on-retry: failed and passed on commit 1111111 (main); recovery: ",
		"); its override is NEVER\\_QUARANTINE",
		"### Quarantined: they do not fail the build (1)\n\n- **quarantined\\_test**: quarantined by its ALWAYS\\_QUARANTINE override",
	}
	last := -1
	for _, s := range sections {
		i := strings.Index(first.Summary, s)
		if i < 0 || i < last {
			t.Errorf("the summary lacks, or misorders, %q:\n%s", s, first.Summary)
		}
		last = i
	}
	// The page on the deployment's web app (here the local server's own).
	if !regexp.MustCompile(`\(\[history\]\(http://127\.0\.0\.1:\d+/acme/flaky-tests/test/` + id("new_test") + `\?repo=acme%2Fchecks\)\)`).MatchString(first.Summary) {
		t.Errorf("the summary does not link new_test's page on the server:\n%s", first.Summary)
	}

	// A re-run of the job: new_test passes now. The same check run, edited.
	out, errOut, code = run(w.githubActions("acme/checks", head, "feature/login", pr, 2), 1, "quarantined_test", "flaky_test", "main_test")
	wantExit(t, "attempt 2", code, 1, out, errOut)
	second := ours()
	if second.ID != first.ID || second.Conclusion != "failure" || second.Title != "1 failing on main, 1 known flaky, 1 quarantined" ||
		!strings.Contains(second.Summary, "1 more failed, then passed on a retry of the same commit.") || strings.Contains(second.Summary, "new\\_test") {
		t.Errorf("attempt 2's check run (id %d, first %d): %+v", second.ID, first.ID, second)
	}
	// A third: only the quarantined failure is left; the check passes.
	out, errOut, code = run(w.githubActions("acme/checks", head, "feature/login", pr, 3), 1, "quarantined_test")
	wantExit(t, "attempt 3", code, 0, out, errOut)
	third := ours()
	if third.ID != first.ID || third.Conclusion != "success" || third.Title != "1 quarantined" {
		t.Errorf("attempt 3's check run: %+v", third)
	}
	// new_test failed and passed on the pull request's commit: flaky now.
	list := w.admin("test", "list", "github.com/acme/checks", "--org", "acme")
	if !regexp.MustCompile(`(?m)^` + id("new_test") + `\s+flaky\s+\S+\s+new_test\s+pass-on-retry: failed and passed on commit`).MatchString(list) {
		t.Errorf("the test list does not show new_test flaky by pass-on-retry:\n%s", list)
	}
}

// TestTestForwardsSIGTERM: SIGTERM to `mainguard test` reaches the
// command, whose own exit code mainguard then answers, uploading nothing.
func TestTestForwardsSIGTERM(t *testing.T) {
	t.Parallel()
	bin := testkit.Program(t)
	dir := t.TempDir()
	script := `trap 'echo TERM > got-term; exit 143' TERM; echo ready; while :; do sleep 0.05; done`
	cmd := exec.Command(bin, "test", "--junit", "r.xml", "--org", "acme", "--token", "mg_x", "--url", "http://127.0.0.1:1",
		"--repo", "github.com/acme/web", "--sha", commitOf("f"), "--branch", "main", "--", "sh", "-c", script)
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready <- true
			}
		}
		close(ready)
	}()
	// Guards against a hang, not speed requirements.
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("the command never started: %s", stderr.String())
		}
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("the command did not start")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("mainguard test did not end after SIGTERM")
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 143 {
		t.Errorf("exit: %v, want 143 (the command's)", err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "got-term")); err != nil || string(got) != "TERM\n" {
		t.Errorf("the command did not get SIGTERM: %q %v", got, err)
	}
	if !strings.Contains(stderr.String(), "interrupted: nothing uploaded; exit 143") {
		t.Errorf("stderr: %s", stderr.String())
	}
}
