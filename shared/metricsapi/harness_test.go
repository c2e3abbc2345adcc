package metricsapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mainguard/mainguard/internal/testkit/service"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// t0 is the fixed clock the golden file was written at.
var t0 = time.Date(2026, 7, 23, 1, 0, 0, 0, time.UTC)

// env is the whole service (internal/testkit/service) with a simulated
// GitHub holding acme/web and acme/api (main protected by the required
// status "ci") and other/web, and the organizations acme and other with a
// token each.
type env struct {
	tb testing.TB
	*service.Service
}

func newEnv(tb testing.TB) *env {
	tb.Helper()
	return &env{tb: tb, Service: service.New(tb, service.Options{
		Start: t0, Repos: []string{"acme/web", "acme/api", "other/web"}, Orgs: []string{"acme", "other"},
	})}
}

// do POSTs body as org to /v1/{path} and fails unless the answer is 200.
func (e *env) do(org, path string, body map[string]any) string {
	e.tb.Helper()
	b, _ := json.Marshal(body)
	code, out := e.Post(org, path, b)
	if code != http.StatusOK {
		e.tb.Fatalf("%s %s: %d %s", org, path, code, out)
	}
	return out
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
	if _, err := e.Sim.CommitFile(full, name, name+".txt", name+"\n", "add "+name); err != nil {
		e.tb.Fatal(err)
	}
	n, err := e.Sim.OpenPR(full, name, "main", "Add "+name, "dev")
	if err != nil {
		e.tb.Fatal(err)
	}
	return n
}

// ci plays the CI system on full: every test branch head not yet judged
// gets "ci" failure if it holds one of the files in bad, else success.
func (e *env) ci(full string, bad ...string) {
	e.tb.Helper()
	if err := e.CI.Judge(full, bad...); err != nil {
		e.tb.Fatal(err)
	}
}

// tick runs the scheduled function a minute later.
func (e *env) tick() {
	e.tb.Helper()
	e.Clock.Advance(time.Minute)
	if err := e.App.Tick(context.Background()); err != nil {
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
	fn, err := e.App.Function("get-merge-queue-metrics")
	if err != nil {
		e.tb.Fatal(err)
	}
	resp, err := fn(context.Background(), events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "ANY /v1/getMergeQueueMetrics", RawPath: "/v1/getMergeQueueMetrics", RawQueryString: query,
		Headers: map[string]string{"x-api-token": e.Tokens[org]},
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
	r, err := e.App.Store.GetQueue(context.Background(), store.QueueKey{Org: org, Repo: repository.Ref{Host: "github.com", Owner: owner, Name: name}, Branch: branch})
	if err != nil {
		e.tb.Fatal(err)
	}
	return r
}
