package readmetour

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/internal/testkit/service"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// ciWorld is what the README's CI section runs against: a service of its
// own behind an HTTP listener, a token of its organization "acme", the
// program built where the snippets' `go install` would put it (the
// action builds its own), and a
// checkout holding a Go module whose TestLogin fails while a file
// fail-login is there.
type ciWorld struct {
	t         *testing.T
	root      string // this repository
	svc       *service.Service
	base      string // the service's address
	token     string
	bin       string // the folder holding the built mainguard
	workspace string
}

func newCIWorld(t *testing.T, buildProgram bool) *ciWorld {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	svc := service.New(t, service.Options{Start: time.Now(), Orgs: []string{"acme"},
		Env: map[string]string{"PUBLIC_API_URL": base + "/v1", "BUNDLE_DIR": t.TempDir()}})
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: svc.Mux}}
	srv.Start()
	t.Cleanup(srv.Close)
	w := &ciWorld{t: t, root: root, svc: svc, base: base, token: svc.Tokens["acme"], bin: t.TempDir(), workspace: t.TempDir()}
	if buildProgram {
		if err := os.Symlink(testkit.Program(t), filepath.Join(w.bin, "mainguard")); err != nil {
			t.Fatal(err)
		}
	}
	w.write("go.mod", "module sample\n\ngo 1.26\n")
	w.write("login_test.go", `package sample

import (
	"os"
	"testing"
)

func TestLogin(t *testing.T) {
	if _, err := os.Stat("fail-login"); err == nil {
		t.Fatal("timed out waiting for the session")
	}
}

func TestLogout(t *testing.T) {}
func TestSignup(t *testing.T) {}
func TestReset(t *testing.T)  {}
`)
	return w
}

func (w *ciWorld) write(name, body string) {
	w.t.Helper()
	if err := os.WriteFile(filepath.Join(w.workspace, name), []byte(body), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// shell runs script as a CI runs a step's script (bash, stopping at the
// first failing command) in the checkout, with env over a newcomer's
// environment, and answers its exit code and output.
func (w *ciWorld) shell(script string, env map[string]string) (int, string) {
	w.t.Helper()
	f := filepath.Join(w.t.TempDir(), "step.sh")
	if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
		w.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute) // a hang guard, not a speed requirement
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-eo", "pipefail", f)
	cmd.WaitDelay = 10 * time.Second
	cmd.Dir = w.workspace
	// No CI's variables but those given: this suite may itself run in one.
	for _, kv := range cleanEnv() {
		name, _, _ := strings.Cut(kv, "=")
		if !ciVariable.MatchString(name) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			w.t.Fatalf("bash: %v", err)
		}
		code = ee.ExitCode()
	}
	return code, out.String()
}

// latestUpload is the organization's newest upload.
func (w *ciWorld) latestUpload() store.Upload {
	w.t.Helper()
	ups, err := w.svc.App.Store.ListUploads(context.Background(), "acme", 1)
	if err != nil || len(ups) == 0 {
		w.t.Fatalf("uploads: %v %v", ups, err)
	}
	return ups[0]
}

func (w *ciWorld) failLogin(on bool) {
	w.t.Helper()
	p := filepath.Join(w.workspace, "fail-login")
	if on {
		w.write("fail-login", "")
	} else if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		w.t.Fatal(err)
	}
}

// readmeBlock is the one README block of info string info, parsed.
func readmeBlock(t *testing.T, root, info string, v any) {
	t.Helper()
	md, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	bs := blocks(string(md), info)
	if len(bs) != 1 {
		t.Fatalf("README has %d %q blocks, want 1", len(bs), info)
	}
	if err := yaml.Unmarshal([]byte(bs[0]), v); err != nil {
		t.Fatalf("README's %q block: %v", info, err)
	}
}

// action is action.yml, the fields a runner reads.
type action struct {
	Inputs map[string]struct {
		Required bool
		Default  string
	}
	Runs struct {
		Using string
		Steps []struct {
			Name, Uses, Shell, Run string
			Env                    map[string]string
			With                   map[string]string
		}
	}
}

// ciVariable matches the variables by which the CIs ciinfo knows are told
// apart, and theirs.
var ciVariable = regexp.MustCompile(`^(CI|GITLAB_CI|CI_.*|BUILDKITE.*|CIRCLECI|CIRCLE_.*|TF_BUILD|SYSTEM_.*|BUILD_.*|BITBUCKET_.*|JENKINS_URL|GIT_URL|GIT_COMMIT|GIT_BRANCH|BRANCH_NAME|CHANGE_.*)$`)

var expression = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// TestREADMECIGitHubActions runs the README's GitHub Actions workflow as
// GitHub would: its step using this repository's action gets the inputs
// the README gives, and the action's steps (action.yml) run with a GitHub
// Actions environment of a pull request: the first attempt, where
// TestLogin fails (the job fails, the failure labelled new), then a re-run
// where it passes (the job passes; TestLogin is flaky by pass-on-retry,
// the re-run being a retry of the same commit).
func TestREADMECIGitHubActions(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program and runs Go tests")
	}
	t.Parallel()
	w := newCIWorld(t, false) // the action builds it
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Uses string
				With map[string]string
			}
		}
	}
	readmeBlock(t, w.root, "yaml ci-github-actions", &wf)
	var with map[string]string
	for _, job := range wf.Jobs {
		for _, st := range job.Steps {
			if strings.HasPrefix(st.Uses, "mainguard/mainguard@") {
				with = st.With
			}
		}
	}
	if with == nil {
		t.Fatal("the README's workflow has no step using mainguard/mainguard")
	}
	raw, err := os.ReadFile(filepath.Join(w.root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.Unmarshal(raw, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("action.yml runs %q, want composite", a.Runs.Using)
	}
	inputs := map[string]string{}
	for name, in := range a.Inputs {
		v, ok := with[name]
		if !ok && in.Required {
			t.Errorf("the README's workflow does not give the required input %q", name)
		}
		if !ok {
			v = in.Default
		}
		inputs[name] = v
	}
	for name := range with {
		if _, ok := a.Inputs[name]; !ok {
			t.Errorf("the README's workflow gives %q, which action.yml does not take", name)
		}
	}
	// What the expressions of the README and action.yml stand for here.
	eval := func(s string) string {
		return expression.ReplaceAllStringFunc(s, func(m string) string {
			e := expression.FindStringSubmatch(m)[1]
			switch {
			case e == "vars.MAINGUARD_URL":
				return w.base
			case e == "secrets.MAINGUARD_TOKEN":
				return w.token
			case e == "github.action_path":
				return w.root
			case strings.HasPrefix(e, "inputs."):
				return inputs[strings.TrimPrefix(e, "inputs.")]
			}
			t.Fatalf("an expression this test does not know: %s", m)
			return ""
		})
	}
	for k, v := range inputs {
		inputs[k] = eval(v)
	}
	head := strings.Repeat("a", 40)
	event := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(event, []byte(`{"pull_request":{"number":7,"head":{"sha":"`+head+`","ref":"feature/login"},"base":{"ref":"main"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	job := func(attempt int) (int, string) {
		runner := t.TempDir()
		path := filepath.Join(runner, "path")
		env := map[string]string{
			"CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/web",
			"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": event, "GITHUB_SHA": strings.Repeat("9", 40),
			"GITHUB_REF": "refs/pull/7/merge", "GITHUB_HEAD_REF": "feature/login", "GITHUB_BASE_REF": "main",
			"GITHUB_RUN_ID": "1658821493", "GITHUB_RUN_ATTEMPT": fmt.Sprint(attempt),
			"GITHUB_WORKSPACE": w.workspace, "GITHUB_ACTION_PATH": w.root, "GITHUB_PATH": path, "RUNNER_TEMP": runner,
		}
		var log strings.Builder
		for _, st := range a.Runs.Steps {
			if st.Uses != "" {
				// Setting up Go: this machine has it.
				if !strings.HasPrefix(st.Uses, "actions/setup-go@") {
					t.Fatalf("action.yml uses %s, which this test cannot run", st.Uses)
				}
				continue
			}
			if st.Shell != "bash" {
				t.Fatalf("step %q: shell %q, want bash", st.Name, st.Shell)
			}
			stepEnv := map[string]string{}
			for k, v := range env {
				stepEnv[k] = v
			}
			for k, v := range st.Env {
				stepEnv[k] = eval(v)
			}
			// GITHUB_PATH's lines come before PATH in the steps after.
			if b, err := os.ReadFile(path); err == nil {
				dirs := strings.Fields(string(b))
				stepEnv["PATH"] = strings.Join(append(dirs, os.Getenv("PATH")), string(os.PathListSeparator))
			}
			code, out := w.shell(eval(st.Run), stepEnv)
			fmt.Fprintf(&log, "## %s: exit %d\n%s", st.Name, code, out)
			if code != 0 {
				return code, log.String()
			}
		}
		return 0, log.String()
	}
	w.failLogin(true)
	w.svc.Clock.Advance(time.Minute) // each upload at its own time, so "newest" is one
	code, out := job(1)
	t.Logf("attempt 1:\n%s", out)
	if code != 1 || !strings.Contains(out, "TestLogin") || !strings.Contains(out, "new: no failure in the 7 days before this run: probably this change") {
		t.Fatalf("attempt 1: exit %d, want 1 with TestLogin labelled new", code)
	}
	if up := w.latestUpload(); up.SHA != head || up.Branch != "feature/login" || up.PR != 7 || up.Repo.String() != "github.com/acme/web" {
		t.Errorf("the upload is of %s %s PR %d %s, want the pull request's head", up.Repo, up.Branch, up.PR, up.SHA)
	}
	w.failLogin(false)
	w.svc.Clock.Advance(time.Minute)
	code, out = job(2)
	t.Logf("attempt 2:\n%s", out)
	if code != 0 {
		t.Fatalf("the re-run: exit %d, want 0", code)
	}
	ref := repository.Ref{Host: "github.com", Owner: "acme", Name: "web"}
	page, err := w.svc.App.Store.ListUnhealthy(context.Background(), "acme", ref, "flaky", store.PageQuery{Limit: 10})
	if err != nil || len(page.Tests) != 1 || page.Tests[0].Name != "TestLogin" {
		t.Errorf("flaky after the re-run: %v %v, want TestLogin", page.Tests, err)
	}
}

// TestREADMECISnippets runs the README's GitLab CI, Buildkite and CircleCI
// snippets: each command of the job with that CI's environment of a pull
// (merge) request (its documented variables), the snippet's variables, and
// the token as the CI's secret. `go install` of the program is checked to
// name this module's command and stands for the build this test made.
// TestLogin fails: the job fails with the failure labelled, and the upload
// names the commit, branch and pull request the CI's environment gave.
func TestREADMECISnippets(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program and runs Go tests")
	}
	t.Parallel()
	w := newCIWorld(t, true)
	mod, err := os.ReadFile(filepath.Join(w.root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	install := "go install " + strings.TrimPrefix(strings.SplitN(string(mod), "\n", 2)[0], "module ") + "/cmd/mainguard@"

	type snippet struct {
		info   string
		env    map[string]string // the CI's own
		sha    string
		branch string
		pr     int
	}
	sha := func(d string) string { return strings.Repeat(d, 40) }
	snippets := []snippet{
		{info: "yaml ci-gitlab", sha: sha("b"), branch: "feature/a", pr: 11, env: map[string]string{
			"CI": "true", "GITLAB_CI": "true", "CI_PROJECT_URL": "https://gitlab.com/acme/web", "CI_COMMIT_SHA": sha("b"),
			"CI_COMMIT_REF_NAME": "feature/a", "CI_MERGE_REQUEST_IID": "11", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "feature/a",
			"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "CI_JOB_URL": "https://gitlab.com/acme/web/-/jobs/1",
		}},
		{info: "yaml ci-buildkite", sha: sha("c"), branch: "feature/b", pr: 12, env: map[string]string{
			"CI": "true", "BUILDKITE": "true", "BUILDKITE_REPO": "git@github.com:acme/web.git", "BUILDKITE_COMMIT": sha("c"),
			"BUILDKITE_BRANCH": "feature/b", "BUILDKITE_PULL_REQUEST": "12", "BUILDKITE_PULL_REQUEST_BASE_BRANCH": "main",
			"BUILDKITE_BUILD_URL": "https://buildkite.com/acme/web/builds/3", "BUILDKITE_JOB_ID": "j1", "BUILDKITE_RETRY_COUNT": "0",
		}},
		{info: "yaml ci-circleci", sha: sha("d"), branch: "feature/c", pr: 13, env: map[string]string{
			"CI": "true", "CIRCLECI": "true", "CIRCLE_REPOSITORY_URL": "git@github.com:acme/web.git", "CIRCLE_SHA1": sha("d"),
			"CIRCLE_BRANCH": "feature/c", "CIRCLE_PULL_REQUEST": "https://github.com/acme/web/pull/13",
			"CIRCLE_BUILD_URL": "https://app.circleci.com/pipelines/github/acme/web/4/workflows/w/jobs/9",
		}},
	}
	for _, s := range snippets {
		var commands []string
		vars := map[string]string{}
		switch s.info {
		case "yaml ci-gitlab":
			var doc map[string]struct {
				Variables map[string]string
				Script    []string
			}
			readmeBlock(t, w.root, s.info, &doc)
			commands, vars = doc["test"].Script, doc["test"].Variables
		case "yaml ci-buildkite":
			var doc struct {
				Steps []struct {
					Env      map[string]string
					Commands []string
				}
			}
			readmeBlock(t, w.root, s.info, &doc)
			if len(doc.Steps) != 1 {
				t.Fatalf("%s: %d steps", s.info, len(doc.Steps))
			}
			commands, vars = doc.Steps[0].Commands, doc.Steps[0].Env
		case "yaml ci-circleci":
			var doc struct {
				Jobs map[string]struct {
					Environment map[string]string
					Steps       []any
				}
			}
			readmeBlock(t, w.root, s.info, &doc)
			job := doc.Jobs["test"]
			vars = job.Environment
			for _, st := range job.Steps {
				switch st := st.(type) {
				case string:
					if st != "checkout" {
						t.Fatalf("%s: step %q", s.info, st)
					}
				case map[string]any:
					run, _ := st["run"].(string)
					commands = append(commands, run)
				}
			}
		}
		env := map[string]string{}
		for k, v := range s.env {
			env[k] = v
		}
		for k, v := range vars {
			env[k] = v
		}
		if env["MAINGUARD_URL"] == "" || env["MAINGUARD_ORG"] != "acme" {
			t.Errorf("%s does not set MAINGUARD_URL and MAINGUARD_ORG: %v", s.info, vars)
		}
		// This service, and the token the CI keeps as a secret.
		env["MAINGUARD_URL"], env["MAINGUARD_TOKEN"] = w.base, w.token
		env["PATH"] = w.bin + string(os.PathListSeparator) + os.Getenv("PATH")
		var script strings.Builder
		installed := false
		for _, c := range commands {
			if strings.HasPrefix(c, install) {
				installed = true
				continue
			}
			script.WriteString(c + "\n")
		}
		if !installed {
			t.Errorf("%s does not install mainguard with %s…", s.info, install)
		}
		if !strings.Contains(script.String(), "mainguard test --junit") {
			t.Fatalf("%s does not run mainguard test:\n%s", s.info, script.String())
		}
		w.failLogin(true)
		w.svc.Clock.Advance(time.Minute)
		code, out := w.shell(script.String(), env)
		t.Logf("%s:\n%s", s.info, out)
		if code != 1 || !strings.Contains(out, "TestLogin") || !strings.Contains(out, "new: ") {
			t.Errorf("%s: exit %d, want 1 with TestLogin labelled", s.info, code)
		}
		if up := w.latestUpload(); up.SHA != s.sha || up.Branch != s.branch || up.PR != s.pr {
			t.Errorf("%s: the upload is of %s PR %d %s, want %s PR %d %s", s.info, up.Branch, up.PR, up.SHA, s.branch, s.pr, s.sha)
		}
	}
}
