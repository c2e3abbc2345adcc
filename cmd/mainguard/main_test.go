package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
	"github.com/mainguard/mainguard/shared/wiring"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// env is a getenv over a map.
func getenvOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// localEnv points the program at a fresh table of the test's DynamoDB Local.
func localEnv(t *testing.T, extra map[string]string) map[string]string {
	t.Helper()
	_, table := storetest.NewTable(t)
	m := map[string]string{"DYNAMODB_ENDPOINT": storetest.Endpoint(), "TABLE_NAME": table}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// tableOf is the store of the table e points at, for a test to look at
// or change directly.
func tableOf(t *testing.T, e map[string]string) *store.Store {
	t.Helper()
	cfg, err := config.FromEnv(getenvOf(e))
	if err != nil {
		t.Fatal(err)
	}
	db, err := wiring.DynamoClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return store.New(db, cfg.TableName, nil)
}

func mg(t *testing.T, e map[string]string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb, getenvOf(e))
	return out.String(), errb.String(), code
}

var tokenRE = regexp.MustCompile(`mg_[0-9A-Za-z]{43}`)

func TestAdministration(t *testing.T) {
	t.Parallel()
	e := localEnv(t, nil)
	out, _, code := mg(t, e, "org", "create", "--slug", "acme", "--name", "Acme Inc")
	secret := tokenRE.FindString(out)
	if code != 0 || secret == "" {
		t.Fatalf("org create: %d %q", code, out)
	}
	if _, errOut, code := mg(t, e, "org", "create", "--slug", "acme"); code != 1 || !strings.Contains(errOut, `organization "acme" already exists`) {
		t.Errorf("duplicate org: %d %q", code, errOut)
	}
	if _, errOut, code := mg(t, e, "org", "create"); code != 2 || !strings.Contains(errOut, "--slug") {
		t.Errorf("org create without slug: %d %q", code, errOut)
	}
	out, _, code = mg(t, e, "token", "create", "--org", "acme", "--scope", "read,queue")
	second := tokenRE.FindString(out)
	if code != 0 || second == "" || second == secret {
		t.Fatalf("token create: %d %q", code, out)
	}
	if _, errOut, code := mg(t, e, "token", "create", "--org", "acme"); code != 2 || !strings.Contains(errOut, "needs --scope") {
		t.Errorf("token without a scope: %d %q", code, errOut)
	}
	if _, errOut, code := mg(t, e, "token", "create", "--org", "acme", "--scope", "upload,root"); code != 2 || !strings.Contains(errOut, `"root" is not a scope`) {
		t.Errorf("unknown scope: %d %q", code, errOut)
	}
	if _, errOut, code := mg(t, e, "token", "create", "--org", "ghost", "--scope", "upload"); code != 1 || !strings.Contains(errOut, `organization "ghost" not found`) {
		t.Errorf("token for absent org: %d %q", code, errOut)
	}
	out, _, code = mg(t, e, "token", "revoke", "--org", "acme", "--token", second)
	if code != 0 || !strings.Contains(out, "revoked") {
		t.Errorf("token revoke: %d %q", code, out)
	}
	out, _, _ = mg(t, e, "token", "list", "--org", "acme")
	if strings.Count(out, "active") != 1 || strings.Count(out, "revoked") != 1 || strings.Contains(out, secret) ||
		!strings.Contains(out, "scopes admin\tactive") || !strings.Contains(out, "scopes queue,read\trevoked") {
		t.Errorf("token list: %q", out)
	}
	out, _, code = mg(t, e, "repo", "set", "github.com/acme/web", "--org", "acme", "--jira-base-url", "https://acme.atlassian.net")
	if code != 0 || !strings.Contains(out, "tracker jira https://acme.atlassian.net") {
		t.Errorf("repo set jira: %d %q", code, out)
	}
	out, _, code = mg(t, e, "repo", "set", "github.com/acme/web", "--org", "acme", "--linear-workspace", "acme", "--default-branch", "trunk")
	if code != 0 || !strings.Contains(out, "tracker linear acme") || !strings.Contains(out, "default branch trunk") {
		t.Errorf("repo set linear replaces jira: %d %q", code, out)
	}
	if _, errOut, code := mg(t, e, "repo", "set", "github.com/acme/web", "--org", "acme", "--jira-base-url", "x", "--linear-workspace", "y"); code != 2 || !strings.Contains(errOut, "one tracker") {
		t.Errorf("two trackers: %d %q", code, errOut)
	}
	if _, errOut, code := mg(t, e, "repo", "set", "acme/web", "--org", "acme"); code != 2 || !strings.Contains(errOut, "HOST/OWNER/NAME") {
		t.Errorf("bad repo: %d %q", code, errOut)
	}
	// Ownership: a repository is one organization's, by an administrator's
	// claim; another's claim is refused unless forced.
	if out, errOut, code := mg(t, e, "org", "create", "--slug", "beta"); code != 0 {
		t.Fatalf("org create beta: %d %s %s", code, out, errOut)
	}
	if out, _, code := mg(t, e, "repo", "claim", "github.com/acme/web", "--org", "acme"); code != 0 || !strings.Contains(out, "repository github.com/acme/web belongs to acme") {
		t.Errorf("repo claim: %d %q", code, out)
	}
	if _, errOut, code := mg(t, e, "repo", "claim", "github.com/Acme/Web", "--org", "beta"); code != 1 || !strings.Contains(errOut, `repository Acme/Web belongs to organization "acme"`) {
		t.Errorf("another organization's claim: %d %q", code, errOut)
	}
	if out, _, code := mg(t, e, "repo", "claim", "github.com/acme/web", "--org", "beta", "--force"); code != 0 || !strings.Contains(out, "belongs to beta") {
		t.Errorf("a forced claim: %d %q", code, out)
	}
	if _, errOut, code := mg(t, e, "repo", "claim", "github.com/acme/web", "--org", "acme", "--release"); code != 1 || !strings.Contains(errOut, "holds no claim") {
		t.Errorf("releasing another's claim: %d %q", code, errOut)
	}
	if out, _, code := mg(t, e, "repo", "claim", "github.com/acme/web", "--org", "beta", "--release"); code != 0 || !strings.Contains(out, "no longer claimed by beta") {
		t.Errorf("release: %d %q", code, out)
	}
	if out, _, code := mg(t, e, "org", "set", "--org", "acme", "--github-installation", "4711"); code != 0 || !strings.Contains(out, "installation 4711 is its own") {
		t.Errorf("org set --github-installation: %d %q", code, out)
	}
	if _, errOut, code := mg(t, e, "org", "set", "--org", "beta", "--github-installation", "4711"); code != 1 || !strings.Contains(errOut, `installation 4711 belongs to organization "acme"`) {
		t.Errorf("another organization's installation: %d %q", code, errOut)
	}
	if _, errOut, code := mg(t, e, "org", "set", "--org", "acme", "--github-installation", "x"); code != 2 || !strings.Contains(errOut, "installation id") {
		t.Errorf("a bad installation id: %d %q", code, errOut)
	}
	if out, _, code := mg(t, e, "org", "set", "--org", "acme", "--remove-github-installation", "4711"); code != 0 || !strings.Contains(out, "forgotten") {
		t.Errorf("org set --remove-github-installation: %d %q", code, out)
	}
	if _, errOut, code := mg(t, e, "org", "set", "--org", "acme"); code != 2 || !strings.Contains(errOut, "org set needs") {
		t.Errorf("org set with nothing to set: %d %q", code, errOut)
	}
	if _, _, code := mg(t, e, "frobnicate"); code != 2 {
		t.Errorf("unknown command: %d", code)
	}
}

// served is what a `mainguard serve` of a test printed (stdout and
// stderr), and exited, closed (never drained) when it has returned.
type served struct {
	*testkit.SyncBuffer
	exited chan struct{}
}

// startServe runs `mainguard serve` until the test ends and returns its
// base URL and its output.
func startServe(t testing.TB, e map[string]string, args ...string) (string, *served) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &served{SyncBuffer: &testkit.SyncBuffer{}, exited: make(chan struct{})}
	// exited is closed, never drained: the wait below and the cleanup both
	// see it, and code is read once it is closed.
	exited := out.exited
	var code int
	dir := t.TempDir() // removed after the cleanup below has stopped serve
	go func() {
		defer close(exited)
		code = run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--github-sim", "off"}, args...), out, out, getenvOf(e))
		fmt.Fprintf(out, "[serve returned %d]\n", code)
	}()
	t.Cleanup(func() {
		cancel()
		testkit.AwaitExit(t, "serve", exited, time.Minute, nil, out.String)
		select {
		case <-exited:
			if code != 0 {
				t.Errorf("serve exited with %d: %s", code, out)
			}
		default:
		}
	})
	re := regexp.MustCompile(`serving (http://\S+/v1)`)
	testkit.Await(t, "serve to answer", func() bool { return re.MatchString(out.String()) }, exited, out.String)
	return re.FindStringSubmatch(out.String())[1], out
}

// TestStartServeReportsAnEarlyExit is issue 27's hang: serve ending before
// it answers (here its address is taken) fails the test at once with
// serve's own message, and the cleanup does not wait for an exit it has
// already seen.
func TestStartServeReportsAnEarlyExit(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	r := &testkit.Recorder{TB: t}
	// A cleanup that hung would be caught by go test's deadline, not timed
	// here: the machine's speed is no part of the behaviour.
	t.Cleanup(func() { // runs after startServe's own cleanup, registered later
		if _, errs := r.Failures(); len(errs) != 1 || !strings.Contains(errs[0], "serve exited with 1") {
			t.Errorf("startServe's cleanup reported %q, want the exit code", errs)
		}
	})
	r.Do(func() { startServe(r, localEnv(t, nil), "--addr", taken.Addr().String()) })
	fatal, _ := r.Failures()
	if want := "cannot serve on " + taken.Addr().String(); !strings.Contains(fatal, want) || !strings.Contains(fatal, "the process ended") {
		t.Errorf("startServe failed with %q, want serve's own %q", fatal, want)
	}
}

func post(t *testing.T, url, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const readmeBody = `{"repo":{"host":"github.com","owner":"acme","name":"web"},"org_url_slug":"local","test_id":"06cb6db5-f807-5198-b072-af67a0636f8a"}`

func TestServeWithBootstrapToken(t *testing.T) {
	t.Parallel()
	e := localEnv(t, map[string]string{"MAINGUARD_BOOTSTRAP_TOKEN": "mg_ci_token"})
	base, out := startServe(t, e)
	if tokenRE.MatchString(out.String()) {
		t.Errorf("a token was printed although one was given: %s", out)
	}
	resp, err := http.Get(base + "/status")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("status: %d", resp.StatusCode)
	}
	// The README's curl: an unknown test is the documented 404.
	if code, body := post(t, base+"/flaky-tests/get-test-details", "mg_ci_token", readmeBody); code != 404 || !strings.Contains(body, "not found") {
		t.Errorf("README curl: %d %s", code, body)
	}
	if code, _ := post(t, base+"/flaky-tests/get-test-details", "mg_wrong", readmeBody); code != 401 {
		t.Errorf("wrong token: %d", code)
	}
}

// TestServeStartsItsOwnDynamoDB is `make run` on a fresh machine: no
// endpoint given, so serve starts DynamoDB Local, creates the table and the
// organization, and prints a token that works.
func TestServeStartsItsOwnDynamoDB(t *testing.T) {
	t.Parallel()
	base, out := startServe(t, map[string]string{}, "--in-memory")
	token := tokenRE.FindString(out.String())
	if token == "" {
		t.Fatalf("no token printed: %s", out)
	}
	if code, body := post(t, base+"/flaky-tests/get-test-details", token, readmeBody); code != 404 {
		t.Errorf("README curl with the printed token: %d %s", code, body)
	}
}
