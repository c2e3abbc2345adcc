package queueapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mainguard/mainguard/internal/testkit/service"
	"github.com/mainguard/mainguard/shared/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

const (
	repoFull      = "acme/web"
	webhookSecret = "gh-secret"
)

var t0 = time.Date(2026, 7, 23, 1, 0, 0, 0, time.UTC)

// env is the whole service (internal/testkit/service) with a simulated
// GitHub holding acme/web (main protected by the required status "ci"),
// and the organization acme with a token.
type env struct {
	tb testing.TB
	*service.Service
}

func newEnv(tb testing.TB, tweak func(map[string]string)) *env {
	tb.Helper()
	vars := map[string]string{"GITHUB_WEBHOOK_SECRET": webhookSecret}
	if tweak != nil {
		tweak(vars)
	}
	return &env{tb: tb, Service: service.New(tb, service.Options{Start: t0, Repos: []string{repoFull}, Orgs: []string{"acme"}, Env: vars})}
}

// call POSTs body (JSON-encoded unless a string) to /v1/{path} and returns
// the status and the response body.
func (e *env) call(path string, body any) (int, string) {
	e.tb.Helper()
	var b []byte
	switch v := body.(type) {
	case string:
		b = []byte(v)
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			e.tb.Fatal(err)
		}
	}
	return e.Post("acme", path, b)
}

// ok calls and fails the test unless the answer is 200; it decodes the
// answer into out when out is not nil.
func (e *env) ok(path string, body any, out any) {
	e.tb.Helper()
	code, resp := e.call(path, body)
	if code != http.StatusOK {
		e.tb.Fatalf("%s: %d %s", path, code, resp)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(resp), out); err != nil {
			e.tb.Fatalf("%s: %v in %s", path, err, resp)
		}
	}
}

func q(extra map[string]any) map[string]any {
	m := map[string]any{"repo": map[string]string{"host": "github.com", "owner": "acme", "name": "web"}, "targetBranch": "main"}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func prq(n int, extra map[string]any) map[string]any {
	m := q(extra)
	m["pr"] = map[string]any{"number": n}
	return m
}

// openPR opens a PR adding its own file, so PRs never conflict.
func (e *env) openPR(name string) int {
	e.tb.Helper()
	if _, err := e.Sim.CommitFile(repoFull, name, name+".txt", name+"\n", "add "+name); err != nil {
		e.tb.Fatal(err)
	}
	n, err := e.Sim.OpenPR(repoFull, name, "main", "Add "+name, "dev")
	if err != nil {
		e.tb.Fatal(err)
	}
	return n
}

// ci plays the CI system: for every test branch head not yet judged, it
// sets "ci" to failure if the branch holds one of the files in bad, else
// success.
func (e *env) ci(bad ...string) {
	e.tb.Helper()
	if err := e.CI.Judge(repoFull, bad...); err != nil {
		e.tb.Fatal(err)
	}
}

// tick runs the scheduled function a minute later.
func (e *env) tick() {
	e.tb.Helper()
	e.Clock.Advance(time.Minute)
	if err := e.App.Tick(context.Background()); err != nil {
		e.tb.Fatalf("tick: %v", err)
	}
}

type submitted struct {
	ID                          string `json:"id"`
	State                       string `json:"state"`
	PriorityValue               int    `json:"priorityValue"`
	PriorityName                string `json:"priorityName"`
	IsCurrentlySubmittedToQueue bool   `json:"isCurrentlySubmittedToQueue"`
	VerifiedByTestRun           string `json:"verifiedByTestRun"`
	PRSha                       string `json:"prSha"`
	FlakyRetriesUsed            int    `json:"flakyRetriesUsed"`
	Readiness                   struct {
		HasImpactedTargets bool   `json:"hasImpactedTargets"`
		GitHubMergeability string `json:"gitHubMergeability"`
	} `json:"readiness"`
}

func (e *env) pr(n int) submitted {
	e.tb.Helper()
	var s submitted
	e.ok("getSubmittedPullRequest", prq(n, nil), &s)
	return s
}

// until runs CI and ticks until done says so, failing after many rounds.
func (e *env) until(done func() bool, bad ...string) {
	e.tb.Helper()
	for range 40 {
		if done() {
			return
		}
		e.ci(bad...)
		e.tick()
	}
	e.tb.Fatal("the queue did not get there in 40 ticks")
}

func (e *env) states(prs ...int) []string {
	e.tb.Helper()
	out := make([]string, len(prs))
	for i, n := range prs {
		out[i] = e.pr(n).State
	}
	return out
}

// mergedOrder lists the PR numbers of the squash commits on main, oldest
// first.
func (e *env) mergedOrder() []int {
	e.tb.Helper()
	hist, err := e.Sim.History(repoFull, "main")
	if err != nil {
		e.tb.Fatal(err)
	}
	var out []int
	for i := len(hist) - 1; i >= 0; i-- {
		var n int
		if j := strings.LastIndex(hist[i].Subject, "(#"); j >= 0 {
			if _, err := fmt.Sscanf(hist[i].Subject[j:], "(#%d)", &n); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}
