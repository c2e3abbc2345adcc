package metricsapi_test

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/metricsapi"
	"github.com/mainguard/mainguard/shared/queuemetrics"
	"github.com/mainguard/mainguard/shared/queuemetrics/promtooltest"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
)

const web, apiRepo, otherWeb = "acme/web", "acme/api", "other/web"

// busy drives the scenario: acme has three queues (acme/web main, busy;
// acme/web release and acme/api main, idle), other has one. On acme/web
// main, within the hour before the read: A restarted once, tested for more
// than an hour and merged (its first PENDING is older than the hour), B
// failed, C was cancelled; D is testing and F awaits mergeability. OLD was
// cancelled more than an hour before the read and must not count.
func busy(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	for _, q := range []struct{ org, full, branch string }{
		{"acme", web, "main"}, {"acme", web, "release"}, {"acme", apiRepo, "main"}, {"other", otherWeb, "main"},
	} {
		e.do(q.org, "createQueue", queue(q.full, q.branch, nil))
	}
	old := e.openPR(web, "old")
	e.do("acme", "submitPullRequest", pr(web, old))
	e.do("acme", "cancelPullRequest", pr(web, old))

	a, b, c := e.openPR(web, "a"), e.openPR(web, "b"), e.openPR(web, "c")
	for _, n := range []int{a, b, c} {
		e.do("acme", "submitPullRequest", pr(web, n))
	}
	e.tickUntil(web, c, "PENDING") // GitHub computed C's mergeability after the submit's read
	e.tickUntil(web, a, "TESTING")
	e.Clock.Advance(70 * time.Minute) // A's CI takes its time
	// Restarted in place: TESTING → PENDING, and at once TESTING again.
	e.do("acme", "restartTestsOnPullRequest", pr(web, a))
	e.tickUntil(web, a, "TESTING")
	e.do("acme", "cancelPullRequest", pr(web, c))
	e.until(web, a, "MERGED", "b.txt")
	e.until(web, b, "FAILED", "b.txt")

	d, f := e.openPR(web, "d"), e.openPR(web, "f")
	if err := e.Sim.SetMergeableUnknown(web, f, true); err != nil {
		t.Fatal(err)
	}
	e.do("acme", "submitPullRequest", pr(web, d))
	e.do("acme", "submitPullRequest", pr(web, f))
	e.tickUntil(web, d, "TESTING")
	e.Clock.Advance(3 * time.Minute)
	if got := e.state(web, f); got != "NOT_READY" {
		t.Fatalf("F is %s, want NOT_READY", got)
	}
	return e
}

// tickUntil ticks, with no CI, until PR n of full is in state want.
func (e *env) tickUntil(full string, n int, want string) {
	e.tb.Helper()
	for range 10 {
		if e.state(full, n) == want {
			return
		}
		e.tick()
	}
	e.tb.Fatalf("%s#%d is %s, want %s", full, n, e.state(full, n), want)
}

// fromSnapshots computes what the endpoint must answer for org from the
// queue snapshots alone: states from their entries, the window from
// queuemetrics.WindowOf over their kept transitions folded as a whole
// history (complete here: far fewer than mergequeue.MaxKeptTransitions).
func fromSnapshots(t *testing.T, e *env, now time.Time, queues ...store.QueueRecord) []byte {
	t.Helper()
	var qs []queuemetrics.Queue
	for _, r := range queues {
		if len(r.Snapshot.Transitions) >= mergequeue.MaxKeptTransitions {
			t.Fatalf("%s: the snapshot may have dropped transitions", r.Key)
		}
		states := map[mergequeue.PRState]int{}
		for _, en := range r.Snapshot.Entries {
			if en.Active() {
				states[en.State]++
			}
		}
		qs = append(qs, queuemetrics.Queue{Repo: r.Key.Repo.Owner + "/" + r.Key.Repo.Name, Branch: r.Key.Branch,
			Type: queuemetrics.QueueMain, States: states, Window: queuemetrics.WindowOf(now, testkit.QueueHistory(r.Snapshot.Transitions))})
	}
	var buf bytes.Buffer
	if err := queuemetrics.Write(&buf, qs); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestMetricsOfAnOrganization(t *testing.T) {
	t.Parallel()
	e := busy(t)
	resp := e.metrics("acme", "")
	if resp.StatusCode != http.StatusOK || resp.Headers["content-type"] != "text/plain; version=0.0.4; charset=utf-8" {
		t.Fatalf("%d %q: %s", resp.StatusCode, resp.Headers["content-type"], resp.Body)
	}
	got := []byte(resp.Body)

	t.Run("golden", func(t *testing.T) {
		testkit.GoldenText(t, filepath.Join("testdata", "queues.golden"), got)
	})

	t.Run("agrees with the snapshots", func(t *testing.T) {
		want := fromSnapshots(t, e, e.Clock.Now(),
			e.queueRecord("acme", web, "main"), e.queueRecord("acme", web, "release"), e.queueRecord("acme", apiRepo, "main"))
		if d := cmp.Diff(string(got), string(want)); d != "" {
			t.Errorf("(-got +want):\n%s", d)
		}
	})

	t.Run("parses", func(t *testing.T) {
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(bytes.NewReader(got))
		if err != nil {
			t.Fatal(err)
		}
		value := func(name, branch string, extra ...string) float64 {
			t.Helper()
			for _, m := range fams[name].GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if labels["repo"] == "acme/web" && labels["branch"] == branch && labels["queue_type"] == "main" &&
					(len(extra) == 0 || labels[extra[0]] == extra[1]) {
					if h := m.GetHistogram(); h != nil {
						return float64(h.GetSampleCount())
					}
					return m.GetGauge().GetValue()
				}
			}
			t.Fatalf("no %s for acme/web %s %v", name, branch, extra)
			return 0
		}
		checks := []struct {
			name, branch string
			extra        []string
			want         float64
		}{
			{"mq_depth_current", "main", nil, 1},
			{"mq_awaiting_mergeability", "main", nil, 1},
			{"mq_testing_slots_active", "main", nil, 1},
			{"mq_pr_conclusions_1h_total", "main", []string{"conclusion", "merged"}, 1},
			{"mq_pr_conclusions_1h_total", "main", []string{"conclusion", "failed"}, 1},
			{"mq_pr_conclusions_1h_total", "main", []string{"conclusion", "cancelled"}, 1}, // C, not OLD
			{"mq_pr_restarts_1h_total", "main", nil, 1},
			{"mq_pr_wait_duration_1h_seconds", "main", nil, 2}, // A and B were tested
			{"mq_pr_time_in_queue_1h_seconds", "main", nil, 3}, // A, B and C were queued
			{"mq_depth_current", "release", nil, 0},
		}
		for _, c := range checks {
			if got := value(c.name, c.branch, c.extra...); got != c.want {
				t.Errorf("%s %s %v = %v, want %v", c.name, c.branch, c.extra, got, c.want)
			}
		}
		if len(fams) != 9 {
			t.Errorf("%d families, want 9", len(fams))
		}
		for _, m := range fams["mq_depth_current"].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "repo" && l.GetValue() == "other/web" {
					t.Error("another organization's queue is in acme's metrics")
				}
			}
		}
	})

	t.Run("promtool", func(t *testing.T) { promtooltest.Check(t, got) })
}

func TestMetricsRequests(t *testing.T) {
	t.Parallel()
	e := busy(t)
	acmeWebMain := fromSnapshots(t, e, e.Clock.Now(), e.queueRecord("acme", web, "main"), e.queueRecord("acme", web, "release"))
	otherAll := fromSnapshots(t, e, e.Clock.Now(), e.queueRecord("other", otherWeb, "main"))
	cases := []struct {
		name, org, query string
		status           int
		body             string
	}{
		{"one repository", "acme", "repo=acme/web&repoHost=github.com", 200, string(acmeWebMain)},
		{"any letter case on github.com", "acme", "repo=ACME/Web&repoHost=GitHub.com", 200, string(acmeWebMain)},
		{"the other organization sees its own", "other", "", 200, string(otherAll)},
		{"repo without repoHost", "acme", "repo=acme/web", 400, "repoHost is required with repo"},
		{"repo not owner/name", "acme", "repo=web&repoHost=github.com", 400, `repo must be OWNER/NAME, got "web"`},
		{"another tenant's repository", "acme", "repo=other/web&repoHost=github.com", 404, "no merge queue for repository github.com/other/web"},
		{"a repository without queues", "acme", "repo=acme/none&repoHost=github.com", 404, "no merge queue for repository github.com/acme/none"},
		{"another host", "acme", "repo=acme/web&repoHost=gitlab.com", 404, "no merge queue for repository gitlab.com/acme/web"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := e.metrics(c.org, c.query)
			if resp.StatusCode != c.status || resp.Body != c.body {
				t.Errorf("got %d %q, want %d %q", resp.StatusCode, resp.Body, c.status, c.body)
			}
			wantType := queuemetrics.ContentType
			if c.status != 200 {
				wantType = api.ErrorContentType
			}
			if got := resp.Headers["content-type"]; got != wantType {
				t.Errorf("Content-Type %q, want %q", got, wantType)
			}
		})
	}
}

// TestDynamoDBCallsPerRequest counts the reads: one listing of the
// repositories, one Query per repository (its queues with their
// snapshots) and one per queue (its hour of transitions).
func TestDynamoDBCallsPerRequest(t *testing.T) {
	t.Parallel()
	e := busy(t)
	h := &metricsapi.Handler{Store: e.App.Store, Now: e.Clock.Now}
	repo := &repository.Ref{Host: "github.com", Owner: "acme", Name: "web"}
	cases := []struct {
		name  string
		ref   *repository.Ref
		calls int
	}{
		{"organization: 2 repositories, 3 queues", nil, 1 + 2 + 3},
		{"one repository: 2 queues", repo, 1 + 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, usage := store.WithUsage(context.Background())
			if _, err := h.Queues(ctx, "acme", c.ref); err != nil {
				t.Fatal(err)
			}
			if calls, _ := usage.Snapshot(); calls != c.calls {
				t.Errorf("%d DynamoDB calls, want %d", calls, c.calls)
			}
		})
	}
}
