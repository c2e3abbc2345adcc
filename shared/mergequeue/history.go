package mergequeue

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// A queue's history (ours): when its pull requests arrived, the test runs
// it started (start, end, outcome, failed tests) and how its pull
// requests concluded, for `mainguard sim --from-history` to replay under
// other settings. The driver keeps every transition (timeline items) and
// every ended run (run history items, HistoryRunOf); BuildHistory puts a
// window of them together.

// History is a queue's arrivals, runs and conclusions in [Since, Until).
type History struct {
	Since Timestamp `json:"since"`
	Until Timestamp `json:"until"`
	// Arrivals are the submissions (episodes) made in the window, in
	// submit order.
	Arrivals []HistoryArrival `json:"arrivals"`
	// Runs are the test runs started in the window that have ended, in
	// start order.
	Runs []HistoryRun `json:"runs"`
	// Merges, Failures and Cancellations are the conclusions in the
	// window, in time order.
	Merges        []HistoryConclusion `json:"merges"`
	Failures      []HistoryConclusion `json:"failures"`
	Cancellations []HistoryConclusion `json:"cancellations"`
}

// HistoryArrival is one submission of a pull request: when it was
// submitted and when it first became PENDING (ready to test; nil when it
// never did).
type HistoryArrival struct {
	PRNumber    int        `json:"prNumber"`
	Episode     int        `json:"episode"`
	SubmittedAt Timestamp  `json:"submittedAt"`
	ReadyAt     *Timestamp `json:"readyAt"`
}

// HistoryRun is one ended test run.
type HistoryRun struct {
	ID        string    `json:"id"`
	StartedAt Timestamp `json:"startedAt"`
	EndedAt   Timestamp `json:"endedAt"`
	// Outcome is SUCCEEDED, FAILED or CANCELLED, Reason why it failed or
	// was cancelled.
	Outcome RunStatus `json:"outcome"`
	Reason  string    `json:"reason,omitempty"`
	// PRNumbers are the pull requests under test, DependentPRNumbers
	// those merged in ahead of them.
	PRNumbers          []int `json:"prNumbers"`
	DependentPRNumbers []int `json:"dependentPrNumbers"`
	Bisection          bool  `json:"bisection"`
	// Direct marks a direct merge: no CI run, the PR's own checks.
	Direct bool `json:"direct"`
	// FailedTests are the tests test health reported failed in the run
	// (when the queue read them), else the required statuses that failed.
	FailedTests []string `json:"failedTests"`
}

// HistoryConclusion is how one submission ended.
type HistoryConclusion struct {
	PRNumber int       `json:"prNumber"`
	Episode  int       `json:"episode"`
	At       Timestamp `json:"at"`
	Reason   string    `json:"reason"`
}

// HistoryRunOf is the history record of run r, once it has ended.
func HistoryRunOf(r Run) HistoryRun {
	h := HistoryRun{
		ID: r.ID, StartedAt: Timestamp(r.CreatedAt), EndedAt: Timestamp(r.EndedAt), Outcome: r.Status, Reason: r.Reason,
		PRNumbers: []int{}, DependentPRNumbers: []int{}, Bisection: r.Bisection, Direct: r.Direct, FailedTests: []string{},
	}
	for _, p := range r.PRs {
		if p.UnderTest {
			h.PRNumbers = append(h.PRNumbers, p.PRNumber)
		} else {
			h.DependentPRNumbers = append(h.DependentPRNumbers, p.PRNumber)
		}
	}
	switch {
	case r.Evidence != nil:
		h.FailedTests = r.Evidence.names()
	case r.Status == RunFailed:
		for name, st := range r.Checks {
			if st == CheckFailure {
				h.FailedTests = append(h.FailedTests, name)
			}
		}
		slices.Sort(h.FailedTests)
	}
	return h
}

// BuildHistory puts together the history of [since, until) from a
// queue's transitions (any order; duplicates by Seq are dropped) and its
// ended runs.
func BuildHistory(ts []Transition, runs []HistoryRun, since, until time.Time) History {
	h := History{
		Since: Timestamp(since), Until: Timestamp(until), Arrivals: []HistoryArrival{}, Runs: []HistoryRun{},
		Merges: []HistoryConclusion{}, Failures: []HistoryConclusion{}, Cancellations: []HistoryConclusion{},
	}
	ts = slices.Clone(ts)
	slices.SortFunc(ts, func(a, b Transition) int { return cmp.Compare(a.Seq, b.Seq) })
	ts = slices.CompactFunc(ts, func(a, b Transition) bool { return a.Seq == b.Seq })
	in := func(t time.Time) bool { return !t.Before(since) && t.Before(until) }
	type episode struct {
		entry string
		n     int
	}
	arrival := map[episode]int{} // → index in h.Arrivals
	for _, t := range ts {
		ep := episode{t.EntryID, t.Episode}
		switch {
		case t.From == "" && t.To == NotReady && in(t.At):
			arrival[ep] = len(h.Arrivals)
			h.Arrivals = append(h.Arrivals, HistoryArrival{PRNumber: t.PRNumber, Episode: t.Episode, SubmittedAt: Timestamp(t.At)})
		case t.To == Pending:
			if i, ok := arrival[ep]; ok && h.Arrivals[i].ReadyAt == nil {
				at := Timestamp(t.At)
				h.Arrivals[i].ReadyAt = &at
			}
		}
		if !t.To.Terminal() || !in(t.At) {
			continue
		}
		c := HistoryConclusion{PRNumber: t.PRNumber, Episode: t.Episode, At: Timestamp(t.At), Reason: t.Reason}
		switch t.To {
		case Merged:
			h.Merges = append(h.Merges, c)
		case Failed:
			h.Failures = append(h.Failures, c)
		default:
			h.Cancellations = append(h.Cancellations, c)
		}
	}
	for _, r := range runs {
		if in(time.Time(r.StartedAt)) && r.Outcome != RunInProgress {
			h.Runs = append(h.Runs, r)
		}
	}
	slices.SortFunc(h.Runs, func(a, b HistoryRun) int {
		return cmp.Or(time.Time(a.StartedAt).Compare(time.Time(b.StartedAt)), strings.Compare(a.ID, b.ID))
	})
	return h
}

// TestFailure reports whether a failure's reason is the PR's own tests
// (or its merge conflicting): the failures the autopilot counts as bad
// PRs, and a replay replays as bad.
func TestFailure(reason string) bool {
	return reason == ReasonStatusFailed || reason == ReasonTimeout || reason == ReasonMergeConflict
}

// TimeFormat is the API's timestamp: RFC 3339 in UTC with milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// Timestamp is a time written as the API writes times (TimeFormat), and
// read from any RFC 3339 time.
type Timestamp time.Time

// MarshalJSON writes t in TimeFormat.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(t).UTC().Format(TimeFormat) + `"`), nil
}

// UnmarshalJSON reads an RFC 3339 time.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	var v time.Time
	if err := v.UnmarshalJSON(b); err != nil {
		return err
	}
	*t = Timestamp(v)
	return nil
}
