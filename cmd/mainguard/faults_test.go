package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testhealth"
	"github.com/mainguard/mainguard/shared/testhealth/bundle"
)

// TestKilledServerFinishesItsIngest is issue 10's first fault: `kill -9`
// of the server mid-ingest, a restart on the same data folder, and the
// upload is INGESTED soon after the restarted server answers (it takes the
// interrupted ingest over at start, not once its lease has lapsed), with
// every run counted exactly once. DynamoDB Local dies with the killed
// server (else the restart could not use its data).
func TestKilledServerFinishesItsIngest(t *testing.T) {
	t.Parallel()
	bin := testkit.Program(t)
	dir := t.TempDir()
	first := startServeProcess(t, bin, dir)
	st := first.store(t)

	// Nine batches (store.MaxBatchTests tests each, eight recorded at a
	// time): the ninth starts only once one of the first eight is recorded,
	// and is a hundred sequential writes, so it is still going when the
	// last of the first eight is recorded. Every tenth test fails, so
	// failed runs and their items are counted too.
	const tests = 9 * store.MaxBatchTests
	names := make([]string, tests)
	cases := make([]string, tests)
	ids := make([]string, tests)
	for i := range names {
		names[i] = fmt.Sprintf("case %05d", i)
		cases[i] = names[i]
		if i%10 == 0 {
			cases[i] += "!"
		}
		ids[i] = testhealth.TestID(testhealth.Identity{Org: "local", Repo: "github.com/acme/web",
			File: "src/checkout/cart_test.go", Classname: "web.Checkout", Parent: "checkout-suite", Name: names[i]})
	}
	ref := repository.Ref{Host: "github.com", Owner: "acme", Name: "web"}
	const sha = "5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed"
	var created struct{ ID, URL string }
	code, body := post(t, first.base+"/metrics/createBundleUpload", faultToken,
		`{"repo":{"host":"github.com","owner":"acme","name":"web"},"orgUrlSlug":"local","clientVersion":"crash-test","remoteUrls":[]}`)
	if err := json.Unmarshal([]byte(body), &created); code != 200 || err != nil {
		t.Fatalf("createBundleUpload: %d %s", code, body)
	}
	var buf bytes.Buffer
	meta := bundle.Meta{Org: "local", BundleUploadID: created.ID, UploadTime: time.Now(),
		Repo: bundle.Repo{Host: ref.Host, Owner: ref.Owner, Name: ref.Name, HeadSHA: sha, HeadBranch: "main"}}
	if err := bundle.Write(&buf, bundle.WriteInput{Meta: meta, JUnit: []bundle.File{{OriginalPath: "report.xml", Body: []byte(junitXML(cases...))}}}); err != nil {
		t.Fatal(err)
	}
	// The PUT is answered once the ingest is done; the kill cuts it off.
	put := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPut, created.URL, &buf)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("answered %d", resp.StatusCode)
		}
		put <- err
	}()

	runs := testhealth.UploadRuns{Org: "local", Repo: ref, Upload: created.ID, SHA: sha}
	// The server is looked at frozen (SIGSTOP), and let run again between
	// looks until the ingest is one batch from its end (the first eight
	// recorded, or the ninth, if it overtook one of them): frozen, it sends
	// nothing more, so it stays frozen until the kill and the table holds
	// what the kill leaves (but for writes already sent). Its upload is
	// finished only once every batch is recorded, so fewer recorded than
	// there are means the kill lands mid-ingest, however fast or slow the
	// machine; and the restarted server skips the batches recorded and
	// finishes the one half recorded, not the whole upload again.
	pid := first.cmd.Process.Pid
	t.Cleanup(func() { // before the SIGTERM of startServeProcess's cleanup, if the test failed while it was frozen
		select {
		case <-first.done:
		default:
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	})
	const batches = (tests + store.MaxBatchTests - 1) / store.MaxBatchTests
	var done map[int]bool
	testkit.Await(t, "all batches but one recorded", func() bool {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		var err error
		if done, err = st.DoneBatches(context.Background(), runs); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-put:
			t.Fatalf("the PUT ended before the kill (%v): no ingest to interrupt", err)
		default:
		}
		if len(done) < batches-1 && !done[batches-1] {
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			return false
		}
		return true
	}, first.done, first.out.String)
	if up, err := st.GetUpload(context.Background(), "local", created.ID); err != nil || up.State == store.UploadIngested || len(done) >= batches {
		t.Fatalf("the ingest ended before the server was frozen (%d of %d batches recorded, upload %+v, %v): no ingest to interrupt", len(done), batches, up, err)
	}
	java := dynamoLocalPID(t, pid, dir)
	if java == 0 {
		t.Fatal("the server runs no DynamoDB Local")
	}
	first.kill(t)
	if err := <-put; err == nil || strings.Contains(err.Error(), "answered") {
		t.Fatalf("the PUT after the kill: %v", err)
	}
	// DynamoDB Local goes with the server (dynamolocal's Pdeathsig).
	for deadline := time.Now().Add(time.Minute); alive(java); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("DynamoDB Local (process %d) outlived the killed server", java)
		}
	}
	t.Logf("killed the server with %d of %d batches recorded", len(done), batches)

	second := startServeProcess(t, bin, dir)
	answered := time.Now()
	st = second.store(t)
	var up store.Upload
	// That the ingest was taken over at start, not resumed by a tick once
	// its lease lapsed (healthsvc.LeaseTTL and store.ResumeGrace later),
	// the log says. The wait lasts while batches get done.
	testkit.Await(t, "the upload INGESTED after the restart", func() bool {
		var err error
		if up, err = st.GetUpload(context.Background(), "local", created.ID); err != nil {
			t.Fatal(err)
		}
		if done, err = st.DoneBatches(context.Background(), runs); err != nil {
			t.Fatal(err)
		}
		return up.State == store.UploadIngested
	}, second.done, func() string {
		return fmt.Sprintf("upload %+v, %d batches done\n%s", up, len(done), second.out)
	})
	t.Logf("INGESTED %s (%.1f ticks) after the restarted server answered", time.Since(answered).Round(time.Millisecond), time.Since(answered).Seconds()/faultTick.Seconds())
	if !strings.Contains(second.out.String(), `"msg":"taking over an interrupted ingest","org":"local","upload":"`+created.ID+`"`) {
		t.Errorf("the restarted server did not take the ingest over: %s", second.out)
	}
	if up.Runs != tests || up.Tests != tests || up.Failed != tests/10 || up.Passed != tests-tests/10 {
		t.Errorf("upload counts: %d runs of %d tests, %d passed, %d failed", up.Runs, up.Tests, up.Passed, up.Failed)
	}
	got, err := st.GetTestCases(context.Background(), "local", ref, ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != tests {
		t.Fatalf("%d of %d tests recorded", len(got), tests)
	}
	wrong := 0
	for i, tc := range got {
		passed, failed := total(tc.PassedByHour), total(tc.FailedByHour)
		if want := i % 10; (want == 0 && (passed != 0 || failed != 1)) || (want != 0 && (passed != 1 || failed != 0)) {
			if wrong++; wrong <= 5 {
				t.Errorf("%s: %d passed, %d failed runs counted; want its one run", tc.Name, passed, failed)
			}
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d tests counted wrong", wrong, tests)
	}
}

// TestStoreKilledUnderTraffic is issue 10's second fault: DynamoDB Local
// killed under traffic. Until the server has started it again (on the same
// port and data), every answer is a 200 or a 503 with Retry-After, then
// 200s come back from the same server, and what was written before the
// kill is still there.
func TestStoreKilledUnderTraffic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base, served := startServe(t, map[string]string{"MAINGUARD_BOOTSTRAP_TOKEN": faultToken, "LOG_LEVEL": "error"},
		"--data-dir", dir, "--tick", faultTick.String())
	call := func(path, branch string) (int, string, error) {
		req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(`{"repo":{"host":"github.com","owner":"acme","name":"web"},"targetBranch":"`+branch+`"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-api-token", faultToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, "", err
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Retry-After"), nil
	}
	// No GitHub here: an administrator claims the repository for the
	// local organization, as without an App.
	if out, errOut, code := mg(t, nil, "repo", "claim", "github.com/acme/web", "--org", "local", "--data-dir", dir); code != 0 {
		t.Fatalf("repo claim: %d %s %s", code, out, errOut)
	}
	if code, _, err := call("/createQueue", "main"); code != 200 {
		t.Fatalf("createQueue main: %d %v", code, err)
	}

	// Three clients, each a write (a queue of a branch of its own, never
	// retried, so never a 409) and a read, paced below the rate limit.
	var (
		mu             sync.Mutex
		bad            []string
		written        []string // branches whose createQueue answered 200
		ok, unavail    int
		okAfterOutage  int // 200s after the first 503
		stop, finished = make(chan struct{}), make(chan struct{})
	)
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
				branch := fmt.Sprintf("w%d-%d", w, i)
				for _, path := range []string{"/createQueue", "/getQueue"} {
					code, retryAfter, err := call(path, map[string]string{"/createQueue": branch, "/getQueue": "main"}[path])
					mu.Lock()
					switch {
					case code == 200:
						ok++
						if unavail > 0 {
							okAfterOutage++
						}
						if path == "/createQueue" {
							written = append(written, branch)
						}
					case code == 503 && retryAfter != "":
						unavail++
					default:
						bad = append(bad, fmt.Sprintf("%s %s: %d (Retry-After %q) %v", path, branch, code, retryAfter, err))
					}
					mu.Unlock()
				}
			}
		})
	}
	go func() { wg.Wait(); close(finished) }()
	halt := sync.OnceFunc(func() { close(stop); <-finished })
	defer halt()
	// Until cond holds, or an answer was wrong (failed below); meanwhile
	// runs before each look. The wait lasts while answers come or the
	// server says something (a DynamoDB Local restarting reports its
	// progress): a restart takes as long as the machine needs.
	until := func(what string, cond func() bool, meanwhile func()) {
		t.Helper()
		testkit.Await(t, what, func() bool {
			meanwhile()
			mu.Lock()
			defer mu.Unlock()
			return cond() || len(bad) > 0
		}, served.exited, func() string {
			mu.Lock()
			defer mu.Unlock()
			return fmt.Sprintf("%d answers 200, %d answers 503, %d wrong\n%s", ok, unavail, len(bad), served)
		})
	}
	until("traffic", func() bool { return ok >= 20 }, func() {})
	// The server starts DynamoDB Local again within seconds, about as long
	// as the SDK retries a refused connection: so that the outage outlasts
	// those retries whatever the machine's speed, it is killed again each
	// time it comes back, until a 503 has been seen.
	kills := 0
	until("503 while DynamoDB Local was down", func() bool { return unavail > 0 }, func() {
		if pid := dynamoLocalPID(t, os.Getpid(), dir); pid != 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			kills++
		}
	})
	until("200s once DynamoDB Local was back", func() bool { return okAfterOutage >= 20 }, func() {})
	halt()
	if len(bad) > 0 {
		t.Fatalf("answers other than 200 or 503 with Retry-After: %d, first %s\nserver output:\n%s", len(bad), bad[0], served)
	}
	t.Logf("DynamoDB Local killed %d time(s); %d answers 200, %d answers 503, %d of the 200s after the first 503", kills, ok, unavail, okAfterOutage)
	// The data outlived the process: every queue written is there.
	for _, branch := range append(written, "main") {
		if code, _, err := call("/getQueue", branch); code != 200 {
			t.Errorf("getQueue %s after the restart: %d %v", branch, code, err)
		}
	}
}

// faultToken is the organization "local"'s token in these tests' servers;
// faultTick their scheduler's period: serve's default, as a user runs it.
// Neither test waits on a tick (an interrupted ingest is taken over at
// start), and a tick still runs several times through each fault; a tick
// a second was most of an idle server's CPU and its DynamoDB Local's
// (2.7 s a minute against 1.1 s).
const (
	faultToken = "mg_fault_test_token"
	faultTick  = 5 * time.Second
)

// serveProcess is `mainguard serve` run as its own process, on its own
// DynamoDB Local, as a user runs it.
type serveProcess struct {
	cmd  *exec.Cmd
	dir  string // its data folder
	base string // its API, http://…/v1
	out  *testkit.SyncBuffer
	done chan struct{}
}

// startServeProcess starts bin serve on the data folder dir and returns
// once it answers; it is killed when the test ends.
func startServeProcess(t *testing.T, bin, dir string) *serveProcess {
	t.Helper()
	p := &serveProcess{dir: dir, out: &testkit.SyncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--github-sim", "off", "--tick", faultTick.String())
	// Its own DynamoDB Local, not the tests' (DYNAMODB_ENDPOINT).
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DYNAMODB_ENDPOINT=") {
			p.cmd.Env = append(p.cmd.Env, kv)
		}
	}
	p.cmd.Env = append(p.cmd.Env, "MAINGUARD_BOOTSTRAP_TOKEN="+faultToken)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// p.done is closed, never drained, so every wait on it sees the end.
	go func() {
		err := p.cmd.Wait()
		fmt.Fprintf(p.out, "[serve process ended: %v]\n", err)
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		testkit.AwaitExit(t, "serve", p.done, time.Minute, func() { _ = p.cmd.Process.Kill() }, p.out.String)
	})
	re := regexp.MustCompile(`serving (http://\S+/v1)`)
	testkit.Await(t, "serve to answer", func() bool { return re.MatchString(p.out.String()) }, p.done, p.out.String)
	p.base = re.FindStringSubmatch(p.out.String())[1]
	return p
}

// store is the table of the server's DynamoDB Local, found as the
// administration commands find it.
func (p *serveProcess) store(t *testing.T) *store.Store {
	t.Helper()
	ep, err := os.ReadFile(filepath.Join(p.dir, endpointFile))
	if err != nil {
		t.Fatal(err)
	}
	return tableOf(t, map[string]string{"DYNAMODB_ENDPOINT": strings.TrimSpace(string(ep))})
}

// dynamoLocalPID is the process id of the DynamoDB Local that process
// parent runs for the server on data folder dir (its child listening on
// the port of dir's endpoint file); 0 when none runs.
func dynamoLocalPID(t *testing.T, parent int, dir string) int {
	t.Helper()
	port := strconv.Itoa(endpointPort(t, dir))
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", parent))
	for _, task := range tasks {
		b, _ := os.ReadFile(task)
		for _, f := range strings.Fields(string(b)) {
			pid, _ := strconv.Atoi(f)
			cmdline, _ := os.ReadFile("/proc/" + f + "/cmdline")
			if alive(pid) && strings.Contains(string(cmdline), "\x00-port\x00"+port+"\x00") {
				return pid
			}
		}
	}
	return 0
}

// endpointPort is the port of the DynamoDB Local of the server on dir.
func endpointPort(t *testing.T, dir string) int {
	t.Helper()
	ep, err := os.ReadFile(filepath.Join(dir, endpointFile))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSpace(string(ep))
	port, err := strconv.Atoi(s[strings.LastIndex(s, ":")+1:])
	if err != nil {
		t.Fatalf("endpoint %q: %v", s, err)
	}
	return port
}

// kill ends the server with SIGKILL, as `kill -9` does, and waits for it.
func (p *serveProcess) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testkit.AwaitExit(t, "the killed serve", p.done, time.Minute, nil, p.out.String)
}

// alive reports whether process pid still runs (a zombie does not).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndex(s, ")")+1:])
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
