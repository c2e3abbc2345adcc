package queuemetrics_test

import (
	"bytes"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/queuemetrics"
	"github.com/mainguard/mainguard/shared/queuemetrics/promtooltest"
)

var now = time.Date(2026, 7, 23, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) time.Time { return now.Add(-d) }

// sample is several queues of two repositories, one of them a bisection
// queue and one idle, with figures that fall into different buckets.
func sample() []queuemetrics.Queue {
	web := queuemetrics.WindowOf(now, testkit.QueueHistory([]mergequeue.Transition{
		// #1: 2 min wait, 10 min testing, merged 20 s later.
		{EntryID: "1", At: ago(50 * time.Minute), To: mergequeue.NotReady},
		{EntryID: "1", At: ago(40 * time.Minute), From: mergequeue.NotReady, To: mergequeue.Pending},
		{EntryID: "1", At: ago(38 * time.Minute), From: mergequeue.Pending, To: mergequeue.Testing},
		{EntryID: "1", At: ago(28 * time.Minute), From: mergequeue.Testing, To: mergequeue.TestsPassed},
		{EntryID: "1", At: ago(27*time.Minute + 40*time.Second), From: mergequeue.TestsPassed, To: mergequeue.Merged},
		// #2: pending since 3 h ago, retried once for a flaky test, failed.
		{EntryID: "2", At: ago(3 * time.Hour), From: mergequeue.NotReady, To: mergequeue.Pending},
		{EntryID: "2", At: ago(30 * time.Minute), From: mergequeue.Pending, To: mergequeue.Testing},
		{EntryID: "2", At: ago(25 * time.Minute), From: mergequeue.Testing, To: mergequeue.Pending, Reason: mergequeue.ReasonRetryKnownFlaky},
		{EntryID: "2", At: ago(20 * time.Minute), From: mergequeue.Pending, To: mergequeue.Testing},
		{EntryID: "2", At: ago(5 * time.Minute), From: mergequeue.Testing, To: mergequeue.PendingFailure},
		{EntryID: "2", At: ago(1 * time.Minute), From: mergequeue.PendingFailure, To: mergequeue.Failed},
		// #3: cancelled before it became ready.
		{EntryID: "3", At: ago(10 * time.Minute), To: mergequeue.NotReady},
		{EntryID: "3", At: ago(9 * time.Minute), From: mergequeue.NotReady, To: mergequeue.Cancelled},
	}))
	bisect := queuemetrics.WindowOf(now, testkit.QueueHistory([]mergequeue.Transition{
		{EntryID: "9", At: ago(100 * time.Minute), From: mergequeue.NotReady, To: mergequeue.Pending},
		{EntryID: "9", At: ago(10 * time.Minute), From: mergequeue.Pending, To: mergequeue.Testing},
		{EntryID: "9", At: ago(1 * time.Minute), From: mergequeue.Testing, To: mergequeue.TestsPassed},
		{EntryID: "9", At: ago(0), From: mergequeue.TestsPassed, To: mergequeue.Merged},
	}))
	return []queuemetrics.Queue{
		{Repo: "acme/web", Branch: "main", Type: queuemetrics.QueueMain, Window: web, States: map[mergequeue.PRState]int{
			mergequeue.NotReady: 2, mergequeue.Pending: 3, mergequeue.Testing: 2, mergequeue.TestsPassed: 1,
			mergequeue.PendingFailure: 1, mergequeue.Merged: 40,
		}, Autopilot: &queuemetrics.Autopilot{Concurrency: 8, Batch: 4, BadRate: 0.03, FlakeRate: 0.01, RunTime: 27 * time.Minute}},
		{Repo: "acme/web", Branch: "main", Type: queuemetrics.QueueBisection, Window: bisect, States: map[mergequeue.PRState]int{mergequeue.Testing: 1}},
		{Repo: "acme/api", Branch: "release/1.x", Type: queuemetrics.QueueMain},
	}
}

func render(t *testing.T, qs []queuemetrics.Queue) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := queuemetrics.Write(&buf, qs); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestWriteGolden(t *testing.T) {
	got := render(t, sample())
	testkit.GoldenText(t, filepath.Join("testdata", "queues.golden"), got)
	if queuemetrics.ContentType != "text/plain; version=0.0.4; charset=utf-8" {
		t.Errorf("content type %q", queuemetrics.ContentType)
	}
}

func TestWriteIsOrderIndependent(t *testing.T) {
	qs := sample()
	rev := slices.Clone(qs)
	slices.Reverse(rev)
	if d := cmp.Diff(string(render(t, rev)), string(render(t, qs))); d != "" {
		t.Errorf("output depends on input order (-reversed +given):\n%s", d)
	}
}

// TestParseBack reads the text with the Prometheus parser and checks each
// family against the contract, and each value against the inputs.
func TestParseBack(t *testing.T) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(render(t, sample())))
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := map[string]dto.MetricType{
		"mq_depth_current": dto.MetricType_GAUGE, "mq_awaiting_mergeability": dto.MetricType_GAUGE,
		"mq_testing_slots_active": dto.MetricType_GAUGE, "mq_pr_conclusions_1h_total": dto.MetricType_GAUGE,
		"mq_pr_restarts_1h_total": dto.MetricType_GAUGE, "mq_pr_flaky_retries_1h": dto.MetricType_GAUGE,
		"mq_pr_wait_duration_1h_seconds": dto.MetricType_HISTOGRAM, "mq_pr_test_duration_1h_seconds": dto.MetricType_HISTOGRAM,
		"mq_pr_time_in_queue_1h_seconds": dto.MetricType_HISTOGRAM,
		"mq_autopilot_concurrency":       dto.MetricType_GAUGE, "mq_autopilot_batch_size": dto.MetricType_GAUGE,
		"mq_autopilot_bad_pr_ratio": dto.MetricType_GAUGE, "mq_autopilot_flake_ratio": dto.MetricType_GAUGE,
		"mq_autopilot_run_duration_seconds": dto.MetricType_GAUGE,
	}
	gotTypes := map[string]dto.MetricType{}
	for name, f := range fams {
		gotTypes[name] = f.GetType()
		if f.GetHelp() == "" {
			t.Errorf("%s has no help", name)
		}
		for _, m := range f.Metric {
			var names []string
			for _, l := range m.Label {
				names = append(names, l.GetName())
			}
			slices.Sort(names)
			want := []string{"branch", "queue_type", "repo"}
			if name == "mq_pr_conclusions_1h_total" {
				want = []string{"branch", "conclusion", "queue_type", "repo"}
			}
			if d := cmp.Diff(names, want); d != "" {
				t.Errorf("%s labels (-got +want):\n%s", name, d)
			}
			if h := m.Histogram; h != nil {
				var bounds []float64
				for _, b := range h.Bucket {
					bounds = append(bounds, b.GetUpperBound())
				}
				if d := cmp.Diff(bounds, append(slices.Clone(queuemetrics.Buckets), math.Inf(1))); d != "" {
					t.Errorf("%s buckets (-got +want):\n%s", name, d)
				}
			}
		}
	}
	if d := cmp.Diff(gotTypes, wantTypes); d != "" {
		t.Errorf("families (-got +want):\n%s", d)
	}

	value := func(name string, labels ...string) float64 {
		t.Helper()
		for _, m := range fams[name].GetMetric() {
			if matches(m, labels) {
				if m.Histogram != nil {
					return float64(m.Histogram.GetSampleCount())
				}
				return m.GetGauge().GetValue()
			}
		}
		t.Fatalf("%s%v: no series", name, labels)
		return 0
	}
	web := []string{"repo", "acme/web", "branch", "main", "queue_type", "main"}
	cases := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"mq_depth_current", web, 7}, // pending 3 + testing 2 + passed 1 + pending failure 1
		{"mq_awaiting_mergeability", web, 2},
		{"mq_testing_slots_active", web, 2},
		{"mq_pr_conclusions_1h_total", append(slices.Clone(web), "conclusion", "merged"), 1},
		{"mq_pr_conclusions_1h_total", append(slices.Clone(web), "conclusion", "failed"), 1},
		{"mq_pr_conclusions_1h_total", append(slices.Clone(web), "conclusion", "cancelled"), 1},
		{"mq_pr_restarts_1h_total", web, 1},
		{"mq_pr_flaky_retries_1h", web, 1},
		{"mq_pr_wait_duration_1h_seconds", web, 2}, // #1 and #2 were tested
		{"mq_pr_time_in_queue_1h_seconds", web, 2}, // #3 never queued
		{"mq_testing_slots_active", []string{"queue_type", "bisection"}, 1},
		{"mq_depth_current", []string{"repo", "acme/api"}, 0},
		{"mq_autopilot_concurrency", web, 8},
		{"mq_autopilot_batch_size", web, 4},
		{"mq_autopilot_bad_pr_ratio", web, 0.03},
		{"mq_autopilot_flake_ratio", web, 0.01},
		{"mq_autopilot_run_duration_seconds", web, 1620},
	}
	for _, c := range cases {
		if got := value(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}

func matches(m *dto.Metric, kv []string) bool {
	for i := 0; i+1 < len(kv); i += 2 {
		found := false
		for _, l := range m.Label {
			found = found || (l.GetName() == kv[i] && l.GetValue() == kv[i+1])
		}
		if !found {
			return false
		}
	}
	return true
}

func TestPromtoolCheckMetrics(t *testing.T) {
	promtooltest.Check(t, render(t, sample()))
}

func TestWriteNothingForNoQueues(t *testing.T) {
	if got := render(t, nil); len(got) != 0 {
		t.Errorf("got %q, want empty", got)
	}
}

func TestFamiliesRefusesUnknownValues(t *testing.T) {
	cases := map[string]queuemetrics.Queue{
		"queue type": {Repo: "a/b", Branch: "main", Type: "side"},
		"conclusion": {Repo: "a/b", Branch: "main", Type: queuemetrics.QueueMain,
			Window: queuemetrics.Window{Concluded: []queuemetrics.Concluded{{Conclusion: "exploded"}}}},
	}
	for name, q := range cases {
		if _, err := queuemetrics.Families([]queuemetrics.Queue{q}); !errs.Is(err, errs.Internal) {
			t.Errorf("%s: got %v, want internal", name, err)
		}
	}
}

// TestWindowOf measures the episodes the engine's fold kept, over a queue's
// whole history (testkit.QueueHistory).
func TestWindowOf(t *testing.T) {
	tr := func(entry string, at time.Duration, from, to mergequeue.PRState) mergequeue.Transition {
		return mergequeue.Transition{EntryID: entry, At: ago(at), From: from, To: to}
	}
	const (
		nr = mergequeue.NotReady
		p  = mergequeue.Pending
		ts = mergequeue.Testing
		tp = mergequeue.TestsPassed
		pf = mergequeue.PendingFailure
	)
	cases := []struct {
		name string
		in   []mergequeue.Transition
		want queuemetrics.Window
	}{{
		name: "merged after a restart: test time adds both runs, wait is to the first",
		in: []mergequeue.Transition{
			tr("a", 50*time.Minute, nr, p), tr("a", 45*time.Minute, p, ts), tr("a", 40*time.Minute, ts, p),
			tr("a", 30*time.Minute, p, ts), tr("a", 10*time.Minute, ts, tp), tr("a", 9*time.Minute, tp, mergequeue.Merged),
		},
		want: queuemetrics.Window{Restarts: 1, Concluded: []queuemetrics.Concluded{{
			Conclusion: queuemetrics.Merged, Tested: true, Wait: 5 * time.Minute, Test: 25 * time.Minute,
			Queued: true, InQueue: 41 * time.Minute,
		}}},
	}, {
		name: "concluded over an hour ago: not counted, nor its old restart",
		in:   []mergequeue.Transition{tr("a", 3*time.Hour, nr, p), tr("a", 2*time.Hour, p, ts), tr("a", 90*time.Minute, ts, p), tr("a", 61*time.Minute, p, mergequeue.Cancelled)},
		want: queuemetrics.Window{},
	}, {
		name: "an anti-flake retry is a restart and a flaky retry; a manual restart only a restart",
		in: []mergequeue.Transition{
			tr("a", 30*time.Minute, p, ts), {EntryID: "a", At: ago(20 * time.Minute), From: ts, To: p, Reason: mergequeue.ReasonRetryFailure},
			tr("a", 10*time.Minute, p, ts), {EntryID: "a", At: ago(5 * time.Minute), From: ts, To: p, Reason: mergequeue.ReasonRestartedByAPI},
		},
		want: queuemetrics.Window{Restarts: 2, FlakyRetries: 1},
	}, {
		name: "still active: restarts count, nothing concluded",
		in:   []mergequeue.Transition{tr("a", 30*time.Minute, p, ts), tr("a", 20*time.Minute, ts, p), tr("a", 10*time.Minute, p, ts)},
		want: queuemetrics.Window{Restarts: 1},
	}, {
		name: "failed from pending failure while testing time was closed",
		in:   []mergequeue.Transition{tr("b", 20*time.Minute, nr, p), tr("b", 20*time.Minute, p, ts), tr("b", 5*time.Minute, ts, pf), tr("b", 0, pf, mergequeue.Failed)},
		want: queuemetrics.Window{Concluded: []queuemetrics.Concluded{{
			Conclusion: queuemetrics.Failed, Tested: true, Test: 15 * time.Minute, Queued: true, InQueue: 20 * time.Minute,
		}}},
	}, {
		name: "cancelled from not ready: concluded but never queued",
		in:   []mergequeue.Transition{tr("c", 20*time.Minute, "", nr), tr("c", 10*time.Minute, nr, mergequeue.Cancelled)},
		want: queuemetrics.Window{Concluded: []queuemetrics.Concluded{{Conclusion: queuemetrics.Cancelled}}},
	}, {
		name: "resubmitted after merging: the second episode starts fresh; input order does not matter",
		in: []mergequeue.Transition{
			tr("d", 5*time.Minute, p, mergequeue.Cancelled), tr("d", 50*time.Minute, ts, mergequeue.Merged),
			tr("d", 58*time.Minute, p, ts), tr("d", 59*time.Minute, nr, p), tr("d", 10*time.Minute, nr, p),
		},
		want: queuemetrics.Window{Concluded: []queuemetrics.Concluded{
			{Conclusion: queuemetrics.Merged, Tested: true, Wait: time.Minute, Test: 8 * time.Minute, Queued: true, InQueue: 9 * time.Minute},
			{Conclusion: queuemetrics.Cancelled, Queued: true, InQueue: 5 * time.Minute},
		}},
	}, {
		name: "a transition in the future (clock skew) is outside the window",
		in:   []mergequeue.Transition{tr("e", -time.Minute, ts, p)},
		want: queuemetrics.Window{},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if d := cmp.Diff(queuemetrics.WindowOf(now, testkit.QueueHistory(c.in)), c.want); d != "" {
				t.Errorf("(-got +want):\n%s", d)
			}
		})
	}
}
