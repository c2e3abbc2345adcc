package metricsapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mainguard/mainguard/shared/app"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/github/githubsim"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// t0 is the fixed clock the golden file was written at.
var t0 = time.Date(2026, 7, 23, 1, 0, 0, 0, time.UTC)

// env is the whole service on a fresh table with a simulated GitHub
// holding acme/web and acme/api (main protected by the required status
// "ci") and other/web, and the organizations acme and other with a token
// each.
type env struct {
	tb     testing.TB
	app    *app.App
	sim    *githubsim.Server
	mux    http.Handler
	tokens map[string]string // org → token

	mu  sync.Mutex
	now time.Time
	ids int
	// ciSys reports the "ci" status on the queue's test branches.
	ciSys *githubsim.CI
}

func newEnv(tb testing.TB) *env {
	tb.Helper()
	e := &env{tb: tb, now: t0, tokens: map[string]string{}}
	sim, err := githubsim.New(tb.TempDir(), githubsim.Options{Now: e.clock})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = sim.Close() })
	e.ciSys = &githubsim.CI{Sim: sim, Context: "ci"}
	e.sim = sim
	for _, full := range []string{"acme/web", "acme/api", "other/web"} {
		if _, err := sim.CreateRepo(full, "main"); err != nil {
			tb.Fatal(err)
		}
		if err := sim.SetRequiredStatusChecks(full, "main", []string{"ci"}); err != nil {
			tb.Fatal(err)
		}
	}
	db, table := storetest.NewTable(tb)
	vars := map[string]string{"TABLE_NAME": table, "RATE_LIMIT_RPS": "0", "GITHUB_API_URL": sim.URL(), "GITHUB_TOKEN": "local"}
	cfg, err := config.FromEnv(func(k string) string { return vars[k] })
	if err != nil {
		tb.Fatal(err)
	}
	e.app, err = app.New(context.Background(), cfg, app.Options{
		DB: db, Now: e.clock, Log: slog.New(slog.DiscardHandler),
		NewUUID: func() string {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.ids++
			return fmt.Sprintf("00000000-0000-4000-8000-%012d", e.ids)
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	e.mux = e.app.Mux()
	for _, org := range []string{"acme", "other"} {
		if _, err := e.app.Store.CreateOrg(context.Background(), org, ""); err != nil {
			tb.Fatal(err)
		}
		if e.tokens[org], _, err = e.app.Store.CreateToken(context.Background(), org); err != nil {
			tb.Fatal(err)
		}
	}
	return e
}

func (e *env) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

func (e *env) advance(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = e.now.Add(d)
}

// do POSTs body as org to /v1/{path} and fails unless the answer is 200.
func (e *env) do(org, path string, body map[string]any) string {
	e.tb.Helper()
	b, _ := json.Marshal(body)
	req := httptest.NewRequest(http.MethodPost, "/v1/"+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-token", e.tokens[org])
	w := httptest.NewRecorder()
	e.mux.ServeHTTP(w, req)
	out, _ := io.ReadAll(w.Result().Body)
	if w.Code != http.StatusOK {
		e.tb.Fatalf("%s %s: %d %s", org, path, w.Code, out)
	}
	return string(out)
}

// queue is the common body of a merge-queue request on full's branch.
func queue(full, branch string, extra map[string]any) map[string]any {
	owner, name, _ := strings.Cut(full, "/")
	m := map[string]any{"repo": map[string]string{"host": "github.com", "owner": owner, "name": name}, "targetBranch": branch}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func pr(full string, n int) map[string]any {
	return queue(full, "main", map[string]any{"pr": map[string]any{"number": n}})
}

// openPR opens a PR on full adding its own file, so PRs never conflict.
func (e *env) openPR(full, name string) int {
	e.tb.Helper()
	if _, err := e.sim.CommitFile(full, name, name+".txt", name+"\n", "add "+name); err != nil {
		e.tb.Fatal(err)
	}
	n, err := e.sim.OpenPR(full, name, "main", "Add "+name, "dev")
	if err != nil {
		e.tb.Fatal(err)
	}
	return n
}

// ci plays the CI system on full: every test branch head not yet judged
// gets "ci" failure if it holds one of the files in bad, else success.
func (e *env) ci(full string, bad ...string) {
	e.tb.Helper()
	if err := e.ciSys.Judge(full, bad...); err != nil {
		e.tb.Fatal(err)
	}
}

// tick runs the scheduled function a minute later.
func (e *env) tick() {
	e.tb.Helper()
	e.advance(time.Minute)
	if err := e.app.Tick(context.Background()); err != nil {
		e.tb.Logf("tick: %v", err)
	}
}

// state is PR n's state in full's main queue.
func (e *env) state(full string, n int) string {
	e.tb.Helper()
	var s struct{ State string }
	if err := json.Unmarshal([]byte(e.do(orgOf(full), "getSubmittedPullRequest", pr(full, n))), &s); err != nil {
		e.tb.Fatal(err)
	}
	return s.State
}

func orgOf(full string) string { o, _, _ := strings.Cut(full, "/"); return o }

// until runs CI on full and ticks until PR n is in state want.
func (e *env) until(full string, n int, want string, bad ...string) {
	e.tb.Helper()
	for range 40 {
		if e.state(full, n) == want {
			return
		}
		e.ci(full, bad...)
		e.tick()
	}
	e.tb.Fatalf("%s#%d did not reach %s in 40 ticks (it is %s)", full, n, want, e.state(full, n))
}

// metrics calls the get-merge-queue-metrics function exactly as Lambda
// would, as org, with the raw query string.
func (e *env) metrics(org, query string) events.APIGatewayV2HTTPResponse {
	e.tb.Helper()
	fn, err := e.app.Function("get-merge-queue-metrics")
	if err != nil {
		e.tb.Fatal(err)
	}
	resp, err := fn(context.Background(), events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "ANY /v1/getMergeQueueMetrics", RawPath: "/v1/getMergeQueueMetrics", RawQueryString: query,
		Headers: map[string]string{"x-api-token": e.tokens[org]},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RequestID: "req-test",
			HTTP:      events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: http.MethodGet, Path: "/v1/getMergeQueueMetrics"},
		},
	})
	if err != nil {
		e.tb.Fatalf("the adapter returned an error: %v", err)
	}
	return resp
}

// queueRecord reads a queue of org as stored.
func (e *env) queueRecord(org, full, branch string) store.QueueRecord {
	e.tb.Helper()
	owner, name, _ := strings.Cut(full, "/")
	r, err := e.app.Store.GetQueue(context.Background(), store.QueueKey{Org: org, Repo: repository.Ref{Host: "github.com", Owner: owner, Name: name}, Branch: branch})
	if err != nil {
		e.tb.Fatal(err)
	}
	return r
}
