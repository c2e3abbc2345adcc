package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mainguard/mainguard/internal/testkit"
	mqservice "github.com/mainguard/mainguard/internal/testkit/service"
	"github.com/mainguard/mainguard/shared/repository"
)

// queueT0 is the driven clock's start in the queue goldens.
var queueT0 = time.Date(2026, 7, 23, 1, 0, 0, 0, time.UTC)

// queueCLI is the whole service behind a real listener, on a simulated
// GitHub holding acme/shop (main requires "ci"), with a clock the test
// drives; the queue commands run against it from a git checkout of
// acme/shop, with the same clock, so relative times in goldens hold.
type queueCLI struct {
	t   *testing.T
	s   *mqservice.Service
	env map[string]string
	dir string
}

func newQueueCLI(t *testing.T) *queueCLI {
	t.Helper()
	s := mqservice.New(t, mqservice.Options{Start: queueT0, Repos: []string{shopRepo}, Orgs: []string{"acme"}})
	srv := httptest.NewServer(s.Mux)
	t.Cleanup(srv.Close)
	return &queueCLI{t: t, s: s, env: map[string]string{"MAINGUARD_URL": srv.URL, "MAINGUARD_TOKEN": s.Tokens["acme"]},
		dir: checkout(t, "git@github.com:acme/shop.git", "main")}
}

// checkout is a git checkout whose origin is addr and whose origin/HEAD
// names head ("" for none, as after `git remote add`).
func checkout(t *testing.T, addr, head string) string {
	t.Helper()
	dir := t.TempDir()
	cmds := [][]string{{"init", "-q"}}
	if addr != "" {
		cmds = append(cmds, []string{"remote", "add", "origin", addr})
	}
	if head != "" {
		cmds = append(cmds, []string{"symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/" + head})
	}
	for _, args := range cmds {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	return dir
}

// in runs mainguard in dir with the environment vars.
func (c *queueCLI) in(dir string, vars map[string]string, args ...string) (string, string, int) {
	c.t.Helper()
	var out, errb bytes.Buffer
	code := runEnv(&env{ctx: context.Background(), stdout: &out, stderr: &errb, getenv: getenvOf(vars), now: c.s.Clock.Now, dir: dir}, args)
	return out.String(), errb.String(), code
}

// ok runs a queue command in the checkout and fails unless it exits 0.
func (c *queueCLI) ok(args ...string) string {
	c.t.Helper()
	out, errOut, code := c.in(c.dir, c.env, append([]string{"queue"}, args...)...)
	if code != 0 || errOut != "" {
		c.t.Fatalf("queue %v: exit %d\n%s%s", args, code, out, errOut)
	}
	return out
}

// refused runs a queue command and wants exit code want with a one-line
// message on stderr holding msg, and nothing on stdout.
func (c *queueCLI) refused(dir string, vars map[string]string, want int, msg string, args ...string) {
	c.t.Helper()
	out, errOut, code := c.in(dir, vars, append([]string{"queue"}, args...)...)
	if code != want || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, msg) {
		c.t.Errorf("queue %v: exit %d, stdout %q, stderr %q; want exit %d and one line holding %q", args, code, out, errOut, want, msg)
	}
}

func (c *queueCLI) golden(name, got string) {
	c.t.Helper()
	testkit.GoldenText(c.t, filepath.Join("testdata", "queue", name), []byte(got))
}

// openPR opens a pull request adding its own file, so none conflict.
func (c *queueCLI) openPR(name, author string) {
	c.t.Helper()
	if _, err := c.s.Sim.CommitFile(shopRepo, name, name+".txt", name+"\n", "add "+name); err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.s.Sim.OpenPR(shopRepo, name, "main", "Add "+name, author); err != nil {
		c.t.Fatal(err)
	}
}

// tick runs the scheduled function a minute later.
func (c *queueCLI) tick() {
	c.t.Helper()
	c.s.Clock.Advance(time.Minute)
	if err := c.s.App.Tick(context.Background()); err != nil {
		c.t.Fatal(err)
	}
}

// TestQueueCLI drives a queue through `mainguard queue` over HTTP: submit
// with priorities, status and list as tables and as the API's JSON
// (goldens), pause, resume, drain, settings, cancel and restart, and the
// API's refusals as exit code 1 with its sentence.
func TestQueueCLI(t *testing.T) {
	listPage = 2 // list reads three pages; set before the parallel tests run
	t.Parallel()
	c := newQueueCLI(t)
	c.refused(c.dir, c.env, 1, "/getQueue: 404 no queue for branch main of github.com/acme/shop", "status")
	if code, body := c.s.Post("acme", "createQueue", []byte(`{"repo":{"host":"github.com","owner":"acme","name":"shop"},"targetBranch":"main"}`)); code != 200 {
		t.Fatalf("createQueue: %d %s", code, body)
	}
	c.golden("status-empty.txt", c.ok("status"))
	if out := c.ok("list", "--json"); out != "{\n  \"pullRequests\": []\n}\n" {
		t.Errorf("list --json of an empty queue: %q", out)
	}

	c.openPR("one", "ada")
	c.openPR("two", "bob")
	c.openPR("three", "cy")
	c.openPR("four", "dee")
	c.openPR("five", "eve")
	// GitHub has not computed #5's mergeability: it stays NOT_READY.
	if err := c.s.Sim.SetMergeableUnknown(shopRepo, 5, true); err != nil {
		t.Fatal(err)
	}
	if out := c.ok("submit", "1"); out != "#1 submitted to github.com/acme/shop main\n" {
		t.Errorf("submit: %q", out)
	}
	c.s.Clock.Advance(time.Minute)
	c.ok("submit", "2", "--priority", "high")
	c.ok("submit", "3", "--no-batch", "--priority", "150")
	if out := c.ok("submit", "4", "--json"); out != "{}\n" {
		t.Errorf("submit --json: %q, want the API's {}", out)
	}
	c.ok("submit", "5")
	c.refused(c.dir, c.env, 1, "/submitPullRequest: 400 ", "submit", "1", "--priority", "soon")
	// #1 tests first and merges; then #2 (high) tests, #3 (low) waits.
	c.tick()
	c.s.Clock.Advance(2 * time.Minute)
	if err := c.s.CI.Judge(shopRepo); err != nil {
		t.Fatal(err)
	}
	c.tick()
	c.tick()
	if out := c.ok("cancel", "4"); out != "#4 cancelled in github.com/acme/shop main\n" {
		t.Errorf("cancel: %q", out)
	}
	c.s.Clock.Advance(3 * time.Minute)

	c.golden("status.txt", c.ok("status"))
	c.golden("status.json", c.ok("status", "--json"))
	c.golden("status-pr.txt", c.ok("status", "2"))
	c.golden("status-pr.json", c.ok("status", "2", "--json"))
	c.golden("status-merged-pr.txt", c.ok("status", "1"))
	c.golden("status-not-ready-pr.txt", c.ok("status", "5"))
	c.golden("list.txt", c.ok("list"))
	c.golden("list.json", c.ok("list", "--json"))
	c.golden("list-pending.txt", c.ok("list", "--state", "pending"))
	c.refused(c.dir, c.env, 1, "/getSubmittedPullRequest: 404 ", "status", "9")

	// The queue's history, and its replay on the engine (issue 33): the
	// file `queue history --json` writes is the one `sim --from-history`
	// reads.
	c.golden("history.txt", c.ok("history"))
	history := filepath.Join(t.TempDir(), "history.json")
	if err := os.WriteFile(history, []byte(c.ok("history", "--json")), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := c.in(c.dir, nil, "sim", "--from-history", history, "--autopilot-max-concurrency", "2", "--autopilot-max-batch", "2")
	if code != 0 || errOut != "" ||
		!regexp.MustCompile(`github\.com/acme/shop main from 2026-06-2\d \d\d:\d\d:\d\d to 2026-07-23 01:\d\d:00: 1 pull requests replayed`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^ +actual +1 +0 +\d+\.\d\d `).MatchString(out) ||
		!regexp.MustCompile(`(?m)^ *replay, the settings given +1 +0 +\d+\.\d\d `).MatchString(out) ||
		!strings.Contains(out, "replay / actual merges per hour: ") ||
		!strings.Contains(out, "(4 fixed settings within the autopilot's bounds, concurrency ≤ 2, batch size ≤ 2)") ||
		!regexp.MustCompile(`\nrecommendation: `).MatchString(out) {
		t.Errorf("sim --from-history of the queue's own history: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := c.in(c.dir, nil, "sim", "--from-history", filepath.Join(c.dir, ".git", "HEAD")); code != 2 || out != "" || !strings.Contains(errOut, "is not a history `mainguard queue history --json` wrote") {
		t.Errorf("sim --from-history of a file that is no history: exit %d, %q %q", code, out, errOut)
	}
	c.refused(c.dir, c.env, 1, "/listPullRequests: 400 state must be one of", "list", "--state", "sleepy")

	// Restart: #2 is testing; #3 is not, which the API refuses.
	if out := c.ok("restart", "2"); out != "#2 restarted its tests in github.com/acme/shop main\n" {
		t.Errorf("restart: %q", out)
	}
	c.refused(c.dir, c.env, 1, "/restartTestsOnPullRequest: 400 ", "restart", "3")
	c.refused(c.dir, c.env, 1, "/cancelPullRequest: 404 ", "cancel", "42")

	for _, step := range []struct{ cmd, want string }{{"pause", "PAUSED"}, {"drain", "DRAINING"}, {"resume", "RUNNING"}} {
		if out := c.ok(step.cmd); out != "github.com/acme/shop main: "+step.want+"\n" {
			t.Errorf("%s: %q", step.cmd, out)
		}
		var q struct{ State string }
		if err := json.Unmarshal([]byte(c.ok("status", "--json")), &q); err != nil || q.State != step.want {
			t.Errorf("after %s the queue is %q (%v)", step.cmd, q.State, err)
		}
	}
	var paused struct{ State, Branch string }
	if err := json.Unmarshal([]byte(c.ok("pause", "--json")), &paused); err != nil || paused.State != "PAUSED" || paused.Branch != "main" {
		t.Errorf("pause --json: %+v %v", paused, err)
	}
	c.ok("resume")

	c.golden("config-get.txt", c.ok("config", "get"))
	c.golden("config-get.json", c.ok("config", "get", "--json"))
	c.golden("config-set.txt", c.ok("config", "set", "concurrency=2", "batch=on", "requiredStatuses=ci, lint", "mergeMethod=rebase", "flakyRetries=1"))
	var set struct {
		RequiredStatuses []string
		Concurrency      int
	}
	if err := json.Unmarshal([]byte(c.ok("config", "set", "deleteRequiredStatuses=true", "--json")), &set); err != nil || set.RequiredStatuses != nil || set.Concurrency != 2 {
		t.Errorf("config set deleteRequiredStatuses=true (back to branch protection): %+v %v", set, err)
	}
	c.refused(c.dir, c.env, 1, "/updateQueue: 400 concurrency", "config", "set", "concurrency=0")
	c.refused(c.dir, c.env, 2, `unknown setting "concurency"; the settings are autopilot, autopilotMaxBatch, autopilotMaxCiRunsPerMerge, autopilotMaxConcurrency, batch, batchingMaxWaitTimeMinutes,`, "config", "set", "concurency=2")
	c.refused(c.dir, c.env, 2, `concurrency takes a whole number, got "two"`, "config", "set", "concurrency=two")
	c.refused(c.dir, c.env, 2, `batch must be on or off, got "maybe"`, "config", "set", "batch=maybe")
	c.refused(c.dir, c.env, 2, `"batch" is not KEY=VALUE`, "config", "set", "batch")
	c.refused(c.dir, c.env, 2, "queue config set needs at least one KEY=VALUE", "config", "set")

	// --repo and --branch name another queue; a wrong token is the API's 401.
	c.refused(c.dir, c.env, 1, "/getQueue: 404 no queue for branch release of github.com/acme/shop", "status", "--branch", "release")
	c.refused(c.dir, c.env, 1, "/getQueue: 404", "status", "--repo", "github.com/acme/other", "--branch", "main")
	c.refused(c.dir, map[string]string{"MAINGUARD_URL": c.env["MAINGUARD_URL"]}, 1, "/getQueue: 401 ", "status", "--token", "mg_wrong")
}

// TestQueueBadInput: the mistakes a person makes, each a one-line message
// and its exit code: 2 for what the command line (or the checkout) cannot
// tell, 1 when the service cannot be reached.
func TestQueueBadInput(t *testing.T) {
	t.Parallel()
	c := &queueCLI{t: t, s: &mqservice.Service{Clock: testkit.NewClock(queueT0)}}
	shop := checkout(t, "https://github.com/acme/shop", "main")
	// An address where nothing listens: a listener closed at once.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close()
	vars := map[string]string{"MAINGUARD_URL": down, "MAINGUARD_TOKEN": "mg_x"}

	c.refused(shop, map[string]string{"MAINGUARD_URL": down}, 2, "queue submit needs --token", "submit", "1")
	c.refused(shop, vars, 1, "nothing answers at "+down+"/v1: start the local server", "submit", "1")
	c.refused(t.TempDir(), vars, 2, "cannot tell the repository: not a git repository", "submit", "1")
	c.refused(checkout(t, "", ""), vars, 2, "cannot tell the repository: No such remote 'origin'; give --repo HOST/OWNER/NAME", "submit", "1")
	c.refused(checkout(t, "/srv/git/shop.git", ""), vars, 2, `origin "/srv/git/shop.git" is not the address of a hosted repository`, "submit", "1")
	c.refused(checkout(t, "git@github.com:acme/shop.git", ""), vars, 2, "cannot tell github.com/acme/shop's default branch: origin/HEAD is not set", "submit", "1")
	c.refused(shop, vars, 2, "cannot tell github.com/acme/web's default branch: the checkout here is of github.com/acme/shop; give --branch", "submit", "1", "--repo", "github.com/acme/web")
	c.refused(t.TempDir(), vars, 2, "cannot tell github.com/acme/web's default branch (not a git repository", "submit", "1", "--repo", "github.com/acme/web")
	c.refused(shop, vars, 2, `"acme/web" is not a repository`, "submit", "1", "--repo", "acme/web")
	c.refused(shop, vars, 2, `queue submit: "abc" is not a pull request number`, "submit", "abc")
	c.refused(shop, vars, 2, "queue submit takes PR, got 0", "submit")
	c.refused(shop, vars, 2, "queue status takes at most one pull request number", "status", "1", "2")
	if _, errOut, code := c.in(shop, vars, "queue", "config", "frob"); code != 2 || !strings.Contains(errOut, `unknown command "queue config frob"; the queue config commands are:`) {
		t.Errorf("queue config frob: exit %d, %q", code, errOut)
	}
	// Outside any checkout, --repo and --branch are enough.
	c.refused(t.TempDir(), vars, 1, "nothing answers at", "submit", "1", "--repo", "github.com/acme/web", "--branch", "main")
	// The checkout's origin and default branch are used with --repo the same repository.
	c.refused(shop, vars, 1, "nothing answers at", "submit", "1", "--repo", "github.com/Acme/Shop")
}

// TestQueueHelp: every queue command lists the shared flags, and submit
// its own.
func TestQueueHelp(t *testing.T) {
	t.Parallel()
	for _, c := range commands {
		if !strings.HasPrefix(c.name, "queue ") {
			continue
		}
		out, _, _ := mg(t, nil, append(strings.Fields(c.name), "--help")...)
		want := []string{"-url", "-token", "-repo", "-branch", "-json"}
		if c.name == "queue submit" {
			want = append(want, "-priority", "-no-batch")
		}
		for _, f := range want {
			if !strings.Contains(out, "  "+f+" ") && !strings.Contains(out, "  "+f+"\n") {
				t.Errorf("%s --help does not list %s:\n%s", c.name, f, out)
			}
		}
	}
	if out, _, code := mg(t, nil, "queue", "config", "--help"); code != 0 || !strings.Contains(out, "queue config set KEY=VALUE...") {
		t.Errorf("queue config --help: %d %q", code, out)
	}
}

// TestRemoteRepo: the origin addresses git takes for a hosted repository.
func TestRemoteRepo(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"git@github.com:acme/web.git":              "github.com/acme/web",
		"git@github.com:acme/web":                  "github.com/acme/web",
		"https://github.com/acme/web":              "github.com/acme/web",
		"https://github.com/acme/web.git":          "github.com/acme/web",
		"https://github.com/acme/web.git/":         "github.com/acme/web",
		"https://ci-bot@github.com/acme/web.git":   "github.com/acme/web",
		"ssh://git@github.com/acme/web.git":        "github.com/acme/web",
		"ssh://git@ghe.acme.example:2222/acme/web": "ghe.acme.example/acme/web",
		"github.com:acme/web.git":                  "github.com/acme/web",
		"https://gitlab.example.com/a/b/proj.git":  "gitlab.example.com/a/b/proj",
	} {
		got, err := repository.ParseRemote(addr)
		if err != nil || got.String() != want {
			t.Errorf("ParseRemote(%q) = %v, %v; want %s", addr, got, err, want)
		}
	}
	for _, addr := range []string{"/srv/git/web.git", "../web", "file:///srv/git/web.git", "https://github.com/acme", "git@github.com:web.git"} {
		if got, err := repository.ParseRemote(addr); err == nil {
			t.Errorf("ParseRemote(%q) = %v, want an error", addr, got)
		}
	}
}

// TestQueueColour: colour only on a terminal and without NO_COLOR; the
// codes take no width, so columns line up as without them.
func TestQueueColour(t *testing.T) {
	t.Parallel()
	tty, err := os.Open(os.DevNull) // a character device, as a terminal is
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	for _, c := range []struct {
		stdout io.Writer
		vars   map[string]string
		want   painter
	}{
		{tty, nil, true},
		{tty, map[string]string{"NO_COLOR": "1"}, false},
		{tty, map[string]string{"TERM": "dumb"}, false},
		{&bytes.Buffer{}, nil, false},
	} {
		e := &env{stdout: c.stdout, getenv: getenvOf(c.vars)}
		if got := colorOn(e); got != c.want {
			t.Errorf("colorOn(%T, %v) = %v, want %v", c.stdout, c.vars, got, c.want)
		}
	}
	rows := [][]cell{{{text: "#1"}, stateCell("TESTING"), {text: "Add one"}}, {{text: "#12"}, stateCell("PENDING_FAILURE"), {text: "Add two"}}}
	var plain, coloured bytes.Buffer
	painter(false).printTable(&plain, []string{"PR", "STATE", "TITLE"}, rows)
	painter(true).printTable(&coloured, []string{"PR", "STATE", "TITLE"}, rows)
	if !strings.Contains(coloured.String(), "\x1b[33mTESTING          \x1b[0m") || !strings.Contains(coloured.String(), "\x1b[31mPENDING_FAILURE  \x1b[0m") {
		t.Errorf("coloured table:\n%q", coloured.String())
	}
	stripped := strings.NewReplacer("\x1b[33m", "", "\x1b[31m", "", "\x1b[0m", "").Replace(coloured.String())
	if stripped != plain.String() {
		t.Errorf("colour changed the layout:\n%s\nwant\n%s", stripped, plain.String())
	}
}
