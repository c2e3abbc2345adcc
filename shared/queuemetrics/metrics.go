package queuemetrics

import (
	"cmp"
	"io"
	"slices"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/mergequeue"
)

// ContentType is the Content-Type of the text Write produces:
// "text/plain; version=0.0.4; charset=utf-8".
const ContentType = string(expfmt.FmtText)

// QueueType is the queue_type label: the main queue of a branch, or the
// bisection runs of its failed batches.
type QueueType string

// The queue types of contract 3.9.
const (
	QueueMain      QueueType = "main"
	QueueBisection QueueType = "bisection"
)

// Conclusion is how a pull request left the queue, the conclusion label.
type Conclusion string

// The conclusions of contract 3.9, in the order they are written.
const (
	Merged    Conclusion = "merged"
	Failed    Conclusion = "failed"
	Cancelled Conclusion = "cancelled"
)

var conclusions = []Conclusion{Merged, Failed, Cancelled}

// Buckets are the histogram upper bounds in seconds; +Inf is implied.
var Buckets = []float64{60, 300, 600, 900, 1800, 3600, 5400, 7200}

// Queue is what the metrics of one queue are computed from.
type Queue struct {
	Repo   string // owner/name
	Branch string
	Type   QueueType
	// States counts the queue's pull requests by current state; states not
	// present count zero.
	States map[mergequeue.PRState]int
	// Window is the last hour's activity, usually from WindowOf.
	Window Window
	// Autopilot is what the autopilot chose and estimates (ours), nil
	// while it is off; only a main queue has one.
	Autopilot *Autopilot
}

// Autopilot is the autopilot's choices and estimates, for its gauges.
type Autopilot struct {
	Concurrency, Batch int
	BadRate, FlakeRate float64
	RunTime            time.Duration
}

// Window is the activity of one queue over the last hour.
type Window struct {
	// Concluded holds one entry per pull request episode that reached
	// MERGED, FAILED or CANCELLED in the window.
	Concluded []Concluded
	// Restarts counts TESTING → PENDING transitions in the window;
	// FlakyRetries those of them that were anti-flake retries (ours).
	Restarts     int
	FlakyRetries int
}

// Concluded is one pull request that left the queue in the window, with the
// durations the histograms observe.
type Concluded struct {
	Conclusion Conclusion
	// Tested is whether it ever reached TESTING; Wait and Test are observed
	// only then.
	Tested bool
	Wait   time.Duration // from first PENDING to first TESTING
	Test   time.Duration // total time spent in TESTING
	// Queued is whether it ever reached PENDING; InQueue is observed only
	// then (time waiting for mergeability is not time in the queue).
	Queued  bool
	InQueue time.Duration // from first PENDING to the conclusion
}

// Write renders the metric families of qs as Prometheus text (ContentType).
// With no queues it writes nothing: the text format has no way to write a
// family without series, and an empty scrape is valid.
func Write(w io.Writer, qs []Queue) error {
	fams, err := Families(qs)
	if err != nil {
		return err
	}
	enc := expfmt.NewEncoder(w, expfmt.FmtText)
	for _, f := range fams {
		if len(f.Metric) == 0 {
			continue
		}
		if err := enc.Encode(f); err != nil {
			return errs.Wrap(errs.Internal, err, "writing metrics")
		}
	}
	return nil
}

// family names, help texts and types of contract 3.9; the help texts of the
// first five follow the public service's sample output.
var (
	famDepth      = newFamily("mq_depth_current", "PRs currently in the queue", dto.MetricType_GAUGE)
	famAwaiting   = newFamily("mq_awaiting_mergeability", "Number of PRs currently awaiting mergeability", dto.MetricType_GAUGE)
	famTesting    = newFamily("mq_testing_slots_active", "PRs currently in TESTING state", dto.MetricType_GAUGE)
	famConcluded  = newFamily("mq_pr_conclusions_1h_total", "PRs exiting the queue in last hour", dto.MetricType_GAUGE)
	famRestarts   = newFamily("mq_pr_restarts_1h_total", "PR restarts in last hour", dto.MetricType_GAUGE)
	famRetries    = newFamily("mq_pr_flaky_retries_1h", "PR test runs retried in last hour because their failure was known flaky (or any failure, by policy)", dto.MetricType_GAUGE)
	famWait       = newFamily("mq_pr_wait_duration_1h_seconds", "Time PRs concluded in the last hour waited before testing started", dto.MetricType_HISTOGRAM)
	famTest       = newFamily("mq_pr_test_duration_1h_seconds", "Time PRs concluded in the last hour spent in testing", dto.MetricType_HISTOGRAM)
	famTimeQueued = newFamily("mq_pr_time_in_queue_1h_seconds", "Time PRs concluded in the last hour spent in the queue, from pending to conclusion", dto.MetricType_HISTOGRAM)
	// The autopilot's (ours): its choices and the estimates it made them on.
	famAPConcurrency = newFamily("mq_autopilot_concurrency", "Test runs at once the autopilot chose", dto.MetricType_GAUGE)
	famAPBatch       = newFamily("mq_autopilot_batch_size", "Batch size the autopilot chose (1: no batching)", dto.MetricType_GAUGE)
	famAPBadRate     = newFamily("mq_autopilot_bad_pr_ratio", "Share of the last concluded PRs failed by their own tests, as the autopilot estimates it", dto.MetricType_GAUGE)
	famAPFlakeRate   = newFamily("mq_autopilot_flake_ratio", "Share of the last completed runs that failed on a flake, as the autopilot estimates it", dto.MetricType_GAUGE)
	famAPRunTime     = newFamily("mq_autopilot_run_duration_seconds", "Median duration of the last test runs, the autopilot's run time", dto.MetricType_GAUGE)
)

type family struct {
	name, help string
	typ        dto.MetricType
}

func newFamily(name, help string, typ dto.MetricType) family { return family{name, help, typ} }

func (f family) with(ms []*dto.Metric) *dto.MetricFamily {
	return &dto.MetricFamily{Name: &f.name, Help: &f.help, Type: f.typ.Enum(), Metric: ms}
}

// Families builds the metric families of qs, queues in (repo, branch,
// queue_type) order so the output is stable. Every family is present, with
// no series when qs is empty. Internal when a queue has an unknown type or
// a concluded entry an unknown conclusion: both are the caller's bugs.
func Families(qs []Queue) ([]*dto.MetricFamily, error) {
	qs = slices.Clone(qs)
	slices.SortFunc(qs, func(a, b Queue) int {
		return cmp.Or(cmp.Compare(a.Repo, b.Repo), cmp.Compare(a.Branch, b.Branch), cmp.Compare(a.Type, b.Type))
	})
	var depth, awaiting, testing, concluded, restarts, retries, wait, test, inQueue []*dto.Metric
	var apConc, apBatch, apBad, apFlake, apRun []*dto.Metric
	for _, q := range qs {
		if q.Type != QueueMain && q.Type != QueueBisection {
			return nil, errs.E(errs.Internal, "metrics: queue %s %s has unknown queue type %q", q.Repo, q.Branch, q.Type)
		}
		labels := func(extra ...*dto.LabelPair) []*dto.LabelPair {
			return append([]*dto.LabelPair{pair("repo", q.Repo), pair("branch", q.Branch), pair("queue_type", string(q.Type))}, extra...)
		}
		st := q.States
		depth = append(depth, gauge(labels(), st[mergequeue.Pending]+st[mergequeue.Testing]+st[mergequeue.TestsPassed]+st[mergequeue.PendingFailure]))
		awaiting = append(awaiting, gauge(labels(), st[mergequeue.NotReady]))
		testing = append(testing, gauge(labels(), st[mergequeue.Testing]))

		byConclusion := map[Conclusion]int{}
		var w, t, iq []float64
		for _, c := range q.Window.Concluded {
			if !slices.Contains(conclusions, c.Conclusion) {
				return nil, errs.E(errs.Internal, "metrics: queue %s %s has unknown conclusion %q", q.Repo, q.Branch, c.Conclusion)
			}
			byConclusion[c.Conclusion]++
			if c.Tested {
				w, t = append(w, c.Wait.Seconds()), append(t, c.Test.Seconds())
			}
			if c.Queued {
				iq = append(iq, c.InQueue.Seconds())
			}
		}
		for _, c := range conclusions {
			concluded = append(concluded, gauge(labels(pair("conclusion", string(c))), byConclusion[c]))
		}
		restarts = append(restarts, gauge(labels(), q.Window.Restarts))
		retries = append(retries, gauge(labels(), q.Window.FlakyRetries))
		wait = append(wait, histogram(labels(), w))
		test = append(test, histogram(labels(), t))
		inQueue = append(inQueue, histogram(labels(), iq))
		if a := q.Autopilot; a != nil && q.Type == QueueMain {
			apConc, apBatch = append(apConc, gauge(labels(), a.Concurrency)), append(apBatch, gauge(labels(), a.Batch))
			apBad, apFlake = append(apBad, gaugeOf(labels(), a.BadRate)), append(apFlake, gaugeOf(labels(), a.FlakeRate))
			apRun = append(apRun, gaugeOf(labels(), a.RunTime.Seconds()))
		}
	}
	return []*dto.MetricFamily{
		famDepth.with(depth), famAwaiting.with(awaiting), famTesting.with(testing),
		famConcluded.with(concluded), famRestarts.with(restarts), famRetries.with(retries),
		famWait.with(wait), famTest.with(test), famTimeQueued.with(inQueue),
		famAPConcurrency.with(apConc), famAPBatch.with(apBatch), famAPBadRate.with(apBad), famAPFlakeRate.with(apFlake), famAPRunTime.with(apRun),
	}, nil
}

func pair(name, value string) *dto.LabelPair { return &dto.LabelPair{Name: &name, Value: &value} }

func gauge(labels []*dto.LabelPair, v int) *dto.Metric { return gaugeOf(labels, float64(v)) }

func gaugeOf(labels []*dto.LabelPair, v float64) *dto.Metric {
	return &dto.Metric{Label: labels, Gauge: &dto.Gauge{Value: &v}}
}

// histogram builds cumulative buckets over observations (seconds).
func histogram(labels []*dto.LabelPair, obs []float64) *dto.Metric {
	var sum float64
	for _, o := range obs {
		sum += o
	}
	count := uint64(len(obs))
	h := &dto.Histogram{SampleCount: &count, SampleSum: &sum}
	for _, ub := range Buckets {
		var n uint64
		for _, o := range obs {
			if o <= ub {
				n++
			}
		}
		h.Bucket = append(h.Bucket, &dto.Bucket{UpperBound: ptr(ub), CumulativeCount: ptr(n)})
	}
	return &dto.Metric{Label: labels, Histogram: h}
}

func ptr[T any](v T) *T { return &v }
