package readmetour

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mainguard/mainguard/internal/testkit"
)

// The README marks the tour's blocks by their info string: "sh tour-server"
// is what the first terminal runs (`make run`), "sh tour" what the second
// runs, in order.
const (
	serverBlock = "sh tour-server"
	tourBlock   = "sh tour"
)

// fixedAddrs are the addresses the README names; the test gives each a free
// port of its own, so that it can run beside another copy of the suite.
var fixedAddrs = []string{"127.0.0.1:8080", "127.0.0.1:8081", "127.0.0.1:8090"}

// blocks returns the fenced code blocks of markdown whose info string is
// info, in order.
func blocks(markdown, info string) []string {
	var out []string
	var cur *strings.Builder
	sc := bufio.NewScanner(strings.NewReader(markdown))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```"+info:
			cur = &strings.Builder{}
		case cur != nil && strings.TrimSpace(line) == "```":
			out = append(out, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	return out
}

// TestREADMETour follows the README's tour literally on a fresh working
// directory: the first terminal's `make run` (as the program it builds),
// then every command of the second terminal in one shell that stops at the
// first failing command.
func TestREADMETour(t *testing.T) {
	if testing.Short() {
		t.Skip("the tour builds the program and starts DynamoDB Local")
	}
	for _, tool := range []string{"bash", "curl", "git", "java"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the tour needs %s: %v", tool, err)
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	servers, tour := blocks(string(readme), serverBlock), blocks(string(readme), tourBlock)
	if len(servers) != 1 || len(tour) == 0 {
		t.Fatalf("README has %d %q blocks and %d %q blocks; want 1 and some", len(servers), serverBlock, len(tour), tourBlock)
	}

	// The addresses of this run, and the README's text with them in place.
	addrs := map[string]string{}
	for _, a := range fixedAddrs {
		addrs[a] = testkit.FreeAddr(t) // the servers bind them seconds later
	}
	localize := func(s string) string {
		for from, to := range addrs {
			s = strings.ReplaceAll(s, from, to)
		}
		return s
	}

	// A working directory like a fresh clone's: the program built where
	// `make run` puts it, the tour's files, and no .data yet.
	work := t.TempDir()
	bin := filepath.Join(work, "bin", "mainguard")
	if err := os.Mkdir(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(testkit.Program(t), bin); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"testdata", "node_modules", "package.json"} {
		if err := os.Symlink(filepath.Join(root, dir), filepath.Join(work, dir)); err != nil {
			t.Fatal(err)
		}
	}

	// The first terminal: `make run [ARGS=…]` builds bin/mainguard (done)
	// and runs `bin/mainguard serve $(ARGS)`.
	serveArgs := serverArgs(t, localize(servers[0]))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	serve := exec.CommandContext(ctx, bin, append([]string{"serve", "--addr", addrs["127.0.0.1:8080"], "--github-sim", addrs["127.0.0.1:8081"]}, serveArgs...)...)
	serve.Dir = work
	serve.Env = cleanEnv()
	var serverOut testkit.SyncBuffer
	serve.Stdout, serve.Stderr = &serverOut, &serverOut
	serve.Cancel = func() error { return serve.Process.Signal(os.Interrupt) }
	serve.WaitDelay = time.Minute
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = serve.Wait(); close(exited) }()
	t.Cleanup(func() {
		cancel()
		<-exited
		if t.Failed() {
			t.Logf("server output:\n%s", serverOut.String())
		}
	})
	waitServing(t, &serverOut, exited)

	// The second terminal: every tour block, in order, in one shell.
	script := "set -euo pipefail\n" + localize(strings.Join(tour, "\n"))
	sh := exec.CommandContext(ctx, "bash", "-c", script)
	sh.Dir = work
	// The programs' built-in default address is the README's; this run's
	// server is elsewhere, as its text says after localize.
	sh.Env = append(cleanEnv(), "MAINGUARD_URL=http://"+addrs["127.0.0.1:8080"]+"/v1")
	// The tour starts a receiver in the background: its own process group,
	// so that whatever the shell leaves running ends with the test.
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	defer func() { _ = syscall.Kill(-sh.Process.Pid, syscall.SIGKILL) }()
	var tourOut testkit.SyncBuffer
	sh.Stdout, sh.Stderr = &tourOut, &tourOut
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	finished := make(chan struct{})
	go func() { err = sh.Wait(); close(finished) }()
	// The tour waits on conditions (a webhook delivered, a merge on main)
	// that the server's 5-second tick brings about: as long as the tour
	// or the server goes on saying something, however slowly; at once
	// if the server stops.
	testkit.Await(t, "the tour to finish", func() bool {
		select {
		case <-finished:
			return true
		default:
			return false
		}
	}, exited, func() string {
		return "tour:\n" + tourOut.String() + "\nserver:\n" + serverOut.String()
	})
	out := tourOut.String()
	t.Logf("tour output:\n%s", out)
	if err != nil {
		t.Fatalf("the tour stopped: %v", err)
	}
	for _, want := range tourExpectations {
		if !want.MatchString(out) {
			t.Errorf("the tour's output does not show %v", want)
		}
	}
	// The README's sample lines are what the tour printed, in order.
	if missing := unprinted(samples(localize(strings.Join(tour, "\n"))), out); len(missing) > 0 {
		t.Errorf("the README shows lines the tour did not print (in this order):\n%s", strings.Join(missing, "\n"))
	}
}

// samples are the README's sample output in the tour's blocks: each line
// that starts with "# ", as a pattern where "…" stands for any text and
// a run of spaces for any (columns pad to their widest cell). A line that
// is "…" alone (more lines) is left out.
func samples(tour string) []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, line := range strings.Split(tour, "\n") {
		text, ok := strings.CutPrefix(line, "# ")
		text = strings.TrimSpace(text)
		if !ok || text == "" || text == "…" {
			continue
		}
		var parts []string
		for _, p := range strings.Split(text, "…") {
			parts = append(parts, strings.Join(strings.Fields(regexp.QuoteMeta(p)), `\s+`))
		}
		// A space next to "…" may stand for none.
		out = append(out, regexp.MustCompile(strings.Join(parts, `\s*.*\s*`)))
	}
	return out
}

// unprinted are the samples that out does not show in order: each is
// looked for in a line of out from the line that showed the one before
// (a command's output may follow another's on its line, as curl's does).
func unprinted(samples []*regexp.Regexp, out string) []string {
	lines := strings.Split(out, "\n")
	var missing []string
	at := 0
	for _, s := range samples {
		i := at
		for i < len(lines) && !s.MatchString(lines[i]) {
			i++
		}
		if i == len(lines) {
			missing = append(missing, s.String())
			continue
		}
		at = i
	}
	return missing
}

// tourExpectations are what a newcomer should have seen by the end: each
// is something the README says the tour shows.
var tourExpectations = []*regexp.Regexp{
	regexp.MustCompile(`\{"overallStatus":\{"type":"up"\}\}`),
	// The first attempt: one failure, honestly not yet flaky.
	regexp.MustCompile(`3 runs, 2 passed, 1 failed, 0 skipped; 1 failed test\(s\), 0 quarantined`),
	regexp.MustCompile(`new: no failure in the 7 days before this run: probably this change`),
	// The retry: flaky by pass-on-retry, then quarantined.
	regexp.MustCompile(`(?m)^[0-9a-f-]{36} +flaky +no +test_login +pass-on-retry: failed and passed on commit 1f0c9d2 \(main\); recovery: `),
	regexp.MustCompile(`quarantined  yes \(override UNSPECIFIED\)`),
	// The linked ticket, delivered to the receiver and verified.
	regexp.MustCompile(`test_case\.ticket_linked msg_[0-9a-f]{32} verified`),
	regexp.MustCompile(`"ticket":\{"html_url":"https://acme\.atlassian\.net/browse/KAN-123"\}`),
	regexp.MustCompile(`"quarantined":true`),
	// The merge queue merged the pull request.
	regexp.MustCompile(`Feat \(#1\)`),
}

// serverArgs checks the first terminal's block is `make run` and returns
// the serve flags its ARGS carry.
func serverArgs(t *testing.T, block string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(block), "\n")
	cmd := strings.TrimSpace(strings.SplitN(lines[0], "#", 2)[0])
	if !strings.HasPrefix(cmd, "make run") {
		t.Fatalf("the first terminal runs %q, want make run", cmd)
	}
	rest := strings.TrimSpace(strings.TrimPrefix(cmd, "make run"))
	if rest == "" {
		return nil
	}
	m := regexp.MustCompile(`^ARGS=(?:'([^']*)'|"([^"]*)"|(\S+))$`).FindStringSubmatch(rest)
	if m == nil {
		t.Fatalf("cannot read the serve flags from %q", cmd)
	}
	return strings.Fields(m[1] + m[2] + m[3])
}

// waitServing waits for the server to say it serves, or to exit. It
// waits as long as the server is starting (DynamoDB Local reports its
// progress while it loads).
func waitServing(t *testing.T, out *testkit.SyncBuffer, exited <-chan struct{}) {
	t.Helper()
	testkit.Await(t, "the server to serve", func() bool { return strings.Contains(out.String(), "mainguard is serving") }, exited, out.String)
}

// cleanEnv is the environment of a newcomer's shell: no mainguard or AWS
// settings inherited from whoever runs the tests.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "MAINGUARD_") || strings.HasPrefix(name, "AWS_") ||
			strings.HasPrefix(name, "DYNAMODB_") || strings.HasPrefix(name, "GITHUB_") || name == "TABLE_NAME" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// TestSampleLinesAreChecked: the comparison of sample lines finds a line
// the output lacks, a wrong id, and lines out of order; "…" and column
// padding match what varies.
func TestSampleLinesAreChecked(t *testing.T) {
	t.Parallel()
	out := "{\"up\":1}uploaded 1 file(s) as upload 3f2a: 3 runs\n" +
		"ID                                    STATUS  NAME\n" +
		"a931f971-2850-55ac-9f17-f1c30788db7c  flaky   test_login\n"
	readme := "./bin/mainguard upload x.xml\n# uploaded 1 file(s) as upload …: 3 runs\n" +
		"./bin/mainguard test list\n# ID  STATUS  NAME\n# a931f971-2850-55ac-9f17-f1c30788db7c  flaky  test_login\n#   …\n"
	if missing := unprinted(samples(readme), out); len(missing) != 0 {
		t.Errorf("true samples reported missing: %q", missing)
	}
	if missing := unprinted(samples(strings.ReplaceAll(readme, "a931f971", "5ad2…")), out); len(missing) != 1 {
		t.Errorf("a wrong id: %q", missing)
	}
	swapped := "# ID  STATUS  NAME\n# uploaded 1 file(s) as upload …: 3 runs\n"
	if missing := unprinted(samples(swapped), out); len(missing) != 1 {
		t.Errorf("lines out of order: %q", missing)
	}
}
