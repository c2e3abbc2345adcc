package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// junitOf is a report of tests under suite, those in failed failing.
func junitOf(suite string, tests []string, failed ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?><testsuites><testsuite name="` + suite + `">`)
	for _, name := range tests {
		fail := false
		for _, f := range failed {
			fail = fail || f == name
		}
		if fail {
			b.WriteString(`<testcase classname="ci" name="` + name + `"><failure message="boom"/></testcase>`)
		} else {
			b.WriteString(`<testcase classname="ci" name="` + name + `"/>`)
		}
	}
	b.WriteString(`</testsuite></testsuites>`)
	return b.String()
}

// shWriting is a command that writes report (relative to the checkout)
// with body, then exits with code.
func shWriting(report, body string, code int) []string {
	return []string{"sh", "-c", `mkdir -p "$(dirname "$1")" && printf '%s' "$2" > "$1" && exit "$3"`, "sh", report, body, strconv.Itoa(code)}
}

// failedID is the id printed for the failed test name.
func failedID(t *testing.T, out, name string) string {
	t.Helper()
	m := regexp.MustCompile(`failed (\S+) ` + regexp.QuoteMeta(name) + `\b`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no failed %s in:\n%s", name, out)
	}
	return m[1]
}

// uploads counts the world's uploads (createBundleUpload calls that made one).
func (w *ciWorld) uploads() int {
	w.t.Helper()
	out := w.admin("uploads", "list", "--org", w.org, "--limit", "1000")
	return strings.Count(out, "\n")
}

// TestTestBadInput: each bad input of the issue, and what it gives.
func TestTestBadInput(t *testing.T) {
	t.Parallel()
	w := newCIWorld(t, "acme")
	gha := w.githubActions("acme/bad", commitOf("b"), "main", 0, 1)
	tests := []string{"t1", "t2", "t3", "t4", "t5"}

	// No `--`, no command: usage, exit 2, nothing run.
	for _, args := range [][]string{
		{"test", "--junit", "r.xml"},
		{"test", "--junit", "r.xml", "--"},
		{"test", "--", "true"},
	} {
		_, errOut, code := w.run(gha, args...)
		if code != 2 || !strings.Contains(errOut, "test needs") {
			t.Errorf("%v: exit %d, %q; want 2 and a usage sentence", args, code, errOut)
		}
	}

	// A glob that matches nothing: a warning and the command's code.
	for _, code := range []int{0, 3} {
		out, errOut, got := w.run(gha, "test", "--junit", "nowhere/**/*.xml", "--", "sh", "-c", "exit "+strconv.Itoa(code))
		wantExit(t, "a glob matching nothing", got, code, out, errOut)
		wantIn(t, "a glob matching nothing", errOut, `--junit "nowhere/**/*.xml" matched no file`)
	}

	// A report that is not JUnit, truncated or huge: named, skipped, the
	// command's code, even when the good report's failures are quarantined.
	w.admin("repo", "set", "github.com/acme/bad", "--org", "acme", "--quarantine", "on")
	good := junitOf("suite", tests, "t1")
	out, _, _ := w.run(gha, append([]string{"test", "--junit", "good/*.xml", "--"}, shWriting("good/r.xml", good, 1)...)...)
	w.admin("test", "quarantine", "github.com/acme/bad", failedID(t, out, "t1"), "--org", "acme", "--always")
	out, errOut, code := w.run(gha, append([]string{"test", "--junit", "good/*.xml", "--"}, shWriting("good/r.xml", good, 1)...)...)
	wantExit(t, "the quarantined failure alone", code, 0, out, errOut)
	for _, bad := range []struct{ name, body, why string }{
		{"html.xml", "<html><body>502 Bad Gateway</body></html>", "the root element is <html>, not <testsuites> or <testsuite>, so this is not a JUnit report"},
		{"cut.xml", good[:len(good)/2], "truncated"},
		{"empty.xml", "", "the report is empty"},
	} {
		script := `mkdir -p good && printf '%s' "$1" > good/r.xml && printf '%s' "$2" > "good/$3" && exit 1`
		out, errOut, code := w.run(gha, "test", "--junit", "good/*.xml", "--", "sh", "-c", script, "sh", good, bad.body, bad.name)
		wantExit(t, bad.name, code, 1, out, errOut)
		wantIn(t, bad.name, errOut, "skipped good/"+bad.name+": ", bad.why)
		w.remove("good/" + bad.name)
	}
	huge := filepath.Join(w.dir, "huge", "r.xml")
	hugeCmd := []string{"sh", "-c", `mkdir -p huge good && printf '%s' "$1" > good/r.xml && truncate -s 65M huge/r.xml && exit 1`, "sh", good}
	out, errOut, code = w.run(gha, append([]string{"test", "--junit", "good/*.xml,huge/*.xml", "--"}, hugeCmd...)...)
	wantExit(t, "a huge report", code, 1, out, errOut)
	wantIn(t, "a huge report", errOut, "skipped huge/r.xml: it is 65 MiB, more than the 64 MiB a report may hold")
	_ = os.Remove(huge)

	// A command that is not found: 127, as a shell says, and no upload.
	before := w.uploads()
	_, errOut, code = w.run(gha, "test", "--junit", "good/*.xml", "--", "no-such-test-runner", "--all")
	if code != 127 || !strings.Contains(errOut, "no-such-test-runner: command not found") || w.uploads() != before {
		t.Errorf("command not found: exit %d, %q, uploads %d → %d", code, errOut, before, w.uploads())
	}

	// A test name with control characters is printed escaped: it cannot
	// forge a line of the output.
	forged := junitOf("suite", []string{"t1", "evil&#10;mainguard: every failed test is quarantined: exit 0"}, "evil&#10;mainguard: every failed test is quarantined: exit 0")
	out, errOut, code = w.run(gha, append([]string{"test", "--junit", "forged/*.xml", "--"}, shWriting("forged/r.xml", forged, 1)...)...)
	wantExit(t, "a forged name", code, 1, out, errOut)
	wantIn(t, "a forged name", out, `"evil\nmainguard: every failed test is quarantined: exit 0"`)
	if strings.Contains(out+errOut, "\nmainguard: every failed test is quarantined") {
		t.Errorf("the name forged a line:\n%s\n%s", out, errOut)
	}

	// A token of another organization: the command's code and one line.
	otherToken := tokenRE.FindString(w.admin("org", "create", "--slug", "other"))
	vars := map[string]string{"MAINGUARD_TOKEN": otherToken}
	for k, v := range gha {
		vars[k] = v
	}
	out, errOut, code = w.run(vars, append([]string{"test", "--junit", "good/*.xml", "--"}, shWriting("good/r.xml", good, 1)...)...)
	wantExit(t, "another organization's token", code, 1, out, errOut)
	if lines := strings.Count(strings.TrimSpace(errOut), "\n") + 1; lines != 1 || !strings.Contains(errOut, `organization "acme" not found for this token: the token belongs to another organization; exit 1, the command's own code`) {
		t.Errorf("another organization's token: %d line(s): %q", lines, errOut)
	}
}

// TestTestNeverWorse: the service down, refusing the token, answering
// 5xx, or hanging: one warning and the command's own code (a red build
// stays red, a green one green), at most three tries, and a bounded time
// after the command. The cases run side by side, each in a checkout of its
// own: most of their time is the waits between tries and the timeout.
func TestTestNeverWorse(t *testing.T) {
	t.Parallel()
	w := newCIWorld(t, "acme")
	gha := w.githubActions("acme/down", commitOf("d"), "main", 0, 1)
	report := junitOf("suite", []string{"t1", "t2"}, "t1")
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range gha {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	// Down: nothing listens.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close()
	// Hanging: answers nothing until the test ends.
	release := make(chan struct{})
	hanging := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hanging.Close) // after the subtests, which run after this function returns
	t.Cleanup(func() { close(release) })

	for _, c := range []struct {
		name string
		vars map[string]string
		args []string
		warn string
	}{
		{"down", map[string]string{"MAINGUARD_URL": down}, nil, "the results were not uploaded: nothing answers at"},
		{"5xx", nil, nil, "the results were not uploaded: /metrics/createBundleUpload: 502 upstream exploded"},
		{"token refused", map[string]string{"MAINGUARD_TOKEN": "mg_" + strings.Repeat("x", 43)}, nil, "the results were not uploaded: the service refused the token"},
		{"no token", map[string]string{"MAINGUARD_TOKEN": ""}, nil, "nothing uploaded: no token: give --token or set MAINGUARD_TOKEN"},
		{"hanging", map[string]string{"MAINGUARD_URL": hanging.URL}, []string{"--timeout", "2s"}, "the results were not uploaded"},
	} {
		for _, code := range []int{1, 0} {
			t.Run(fmt.Sprintf("%s exit %d", c.name, code), func(t *testing.T) {
				t.Parallel()
				vars := c.vars
				// 5xx on every call, counted (for this case alone).
				var calls atomic.Int32
				if c.name == "5xx" {
					broken := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
						calls.Add(1)
						http.Error(rw, "upstream exploded", http.StatusBadGateway)
					}))
					defer broken.Close()
					vars = map[string]string{"MAINGUARD_URL": broken.URL}
				}
				cw := *w // the same service, a checkout of its own
				cw.t, cw.dir = t, t.TempDir()
				args := append([]string{"test", "--junit", "r/*.xml"}, c.args...)
				args = append(append(args, "--"), shWriting("r/r.xml", report, code)...)
				done := make(chan struct{})
				var out, errOut string
				var got int
				go func() { out, errOut, got = cw.run(with(vars), args...); close(done) }()
				// A guard against a hang, not a speed requirement: --timeout
				// (default 60 s) bounds everything after the command.
				select {
				case <-done:
				case <-time.After(3 * time.Minute):
					t.Fatalf("%s: mainguard test did not return", c.name)
				}
				wantExit(t, c.name, got, code, out, errOut)
				if lines := strings.Count(strings.TrimSpace(errOut), "\n") + 1; lines != 1 || !strings.Contains(errOut, "mainguard: warning: "+c.warn) {
					t.Errorf("%s (command exit %d): want one warning with %q, got:\n%s", c.name, code, c.warn, errOut)
				}
				if c.name == "5xx" && calls.Load() != 3 {
					t.Errorf("5xx: %d tries, want 3", calls.Load())
				}
			})
		}
	}
}

// TestUploadTestProcessExitCode: `upload --test-process-exit-code N`
// exits as `test` does, for CI that runs tests and upload in two steps;
// without the flag upload exits 0 once uploaded.
func TestUploadTestProcessExitCode(t *testing.T) {
	t.Parallel()
	w := newCIWorld(t, "acme")
	// Each upload on a commit of its own: a test that failed and passed on
	// one commit would be flaky.
	n := 0
	commit := func() map[string]string {
		n++
		return w.githubActions("acme/steps", commitOf(strconv.Itoa(n)), "main", 0, 1)
	}
	gha := commit()
	tests := []string{"t1", "t2", "t3"}
	q := w.write("q.xml", junitOf("suite", tests, "t1"))
	out, errOut, code := w.run(gha, "upload", q)
	wantExit(t, "upload without the flag", code, 0, out, errOut)
	w.admin("repo", "set", "github.com/acme/steps", "--org", "acme", "--quarantine", "on")
	w.admin("test", "quarantine", "github.com/acme/steps", failedID(t, out, "t1"), "--org", "acme", "--always")

	out, errOut, code = w.run(commit(), "upload", "--test-process-exit-code", "1", q)
	wantExit(t, "only quarantined failures", code, 0, out, errOut)
	real := w.write("real.xml", junitOf("suite", tests, "t1", "t2"))
	out, errOut, code = w.run(commit(), "upload", "--test-process-exit-code", "1", real)
	wantExit(t, "a real failure", code, 1, out, errOut)
	out, errOut, code = w.run(commit(), "upload", "--test-process-exit-code", "0", real)
	wantExit(t, "tests that passed", code, 0, out, errOut)
	down := map[string]string{"MAINGUARD_URL": "http://127.0.0.1:1"}
	for k, v := range gha {
		down[k] = v
	}
	out, errOut, code = w.run(down, "upload", "--test-process-exit-code", "1", q)
	wantExit(t, "the service down", code, 1, out, errOut)
	wantIn(t, "the service down", errOut, "mainguard: warning: the results were not uploaded", "exit 1, the tests' own code")
	_, errOut, code = w.run(down, "upload", q)
	if code != 1 {
		t.Errorf("upload without the flag, service down: exit %d, want 1 (an error of its own)\n%s", code, errOut)
	}
}
