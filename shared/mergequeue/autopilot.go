package mergequeue

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
)

// The autopilot (ours). With the queue setting autopilot on, the engine
// chooses the concurrency and the batch size itself, within the bounds the
// team sets (autopilotMaxConcurrency, autopilotMaxBatch,
// autopilotMaxCiRunsPerMerge), and the team's concurrency, batch,
// batchingMinSize and bisectionConcurrency wait, unchanged, for it to be
// turned off (bisection runs on as many slots as the chosen concurrency).
//
// It keeps, in the snapshot, three small windows of what the queue saw
// (AutopilotState): the last PRs concluded, each failed by a test or
// merged (the bad-PR rate: failures that the queue's own search, a
// single run or bisection, pinned on a PR); the last completed runs with
// the failures later shown to be flakes (a retry that passed, a pending
// failure merged by a later run, a bisection whose prefixes all passed:
// the flake rate); and the last run durations (their median: the run
// time, robust to a run that hung until its timeout). At most once a run
// time, once it has seen enough, it asks the model (model.go) which
// concurrency and batch size one step away (concurrency by at most half
// again, or 2, the batch size halved or doubled) would merge the most per
// hour within the bounds, and moves there only when the model expects at
// least autopilotHysteresis more: small changes in the estimates never
// make it swing back and forth. The model's merges count only up to the
// demand (the arrival rate of the last submissions and the PRs waiting,
// with headroom): a queue that keeps up gains nothing from more
// throughput, and batches would only make its PRs wait. Each change is
// recorded (Changes, the queue's page and `mainguard queue status`) and
// sent as the webhook event merge_queue.autopilot_changed.

// AutopilotSettings are the autopilot's queue settings, as createQueue,
// updateQueue and getQueue name them.
type AutopilotSettings struct {
	// Autopilot turns the autopilot on.
	Autopilot bool `json:"autopilot"`
	// AutopilotMaxConcurrency bounds the test runs at once it chooses
	// (1..MaxAutopilotConcurrency).
	AutopilotMaxConcurrency int `json:"autopilotMaxConcurrency"`
	// AutopilotMaxBatch bounds the batch size it chooses
	// (1..MaxAutopilotBatch; 1 never batches).
	AutopilotMaxBatch int `json:"autopilotMaxBatch"`
	// AutopilotMaxCiRunsPerMerge bounds the CI runs per merged PR the
	// model expects of its choice (MinAutopilotRunsPerMerge..100).
	AutopilotMaxCiRunsPerMerge float64 `json:"autopilotMaxCiRunsPerMerge"`
}

// AutopilotPatch is the autopilot's part of a createQueue or updateQueue
// call: nil fields are left alone.
type AutopilotPatch struct {
	Autopilot                  *bool    `json:"autopilot"`
	AutopilotMaxConcurrency    *int     `json:"autopilotMaxConcurrency"`
	AutopilotMaxBatch          *int     `json:"autopilotMaxBatch"`
	AutopilotMaxCiRunsPerMerge *float64 `json:"autopilotMaxCiRunsPerMerge"`
}

// The autopilot's defaults and limits.
const (
	DefaultAutopilotMaxConcurrency    = 10
	DefaultAutopilotMaxBatch          = 8
	DefaultAutopilotMaxCiRunsPerMerge = 3.0
	MaxAutopilotConcurrency           = 100
	MaxAutopilotBatch                 = 64
	MinAutopilotRunsPerMerge          = 0.1
	MaxAutopilotRunsPerMerge          = 100.0
)

// defaultAutopilot fills the bounds of a queue stored before they existed.
func (a AutopilotSettings) withDefaults() AutopilotSettings {
	if a.AutopilotMaxConcurrency == 0 {
		a.AutopilotMaxConcurrency = DefaultAutopilotMaxConcurrency
	}
	if a.AutopilotMaxBatch == 0 {
		a.AutopilotMaxBatch = DefaultAutopilotMaxBatch
	}
	if a.AutopilotMaxCiRunsPerMerge == 0 {
		a.AutopilotMaxCiRunsPerMerge = DefaultAutopilotMaxCiRunsPerMerge
	}
	return a
}

// apply validates p and applies it to a; the sentences name the field and
// its range.
func (a AutopilotSettings) apply(p AutopilotPatch) (AutopilotSettings, error) {
	if v := p.AutopilotMaxConcurrency; v != nil && (*v < 1 || *v > MaxAutopilotConcurrency) {
		return a, errs.E(errs.Invalid, "autopilotMaxConcurrency must be 1 to %d", MaxAutopilotConcurrency)
	}
	if v := p.AutopilotMaxBatch; v != nil && (*v < 1 || *v > MaxAutopilotBatch) {
		return a, errs.E(errs.Invalid, "autopilotMaxBatch must be 1 to %d (1 never batches)", MaxAutopilotBatch)
	}
	if v := p.AutopilotMaxCiRunsPerMerge; v != nil && !(*v >= MinAutopilotRunsPerMerge && *v <= MaxAutopilotRunsPerMerge) {
		return a, errs.E(errs.Invalid, "autopilotMaxCiRunsPerMerge must be a number from %g to %g", MinAutopilotRunsPerMerge, MaxAutopilotRunsPerMerge)
	}
	if p.Autopilot != nil {
		a.Autopilot = *p.Autopilot
	}
	if p.AutopilotMaxConcurrency != nil {
		a.AutopilotMaxConcurrency = *p.AutopilotMaxConcurrency
	}
	if p.AutopilotMaxBatch != nil {
		a.AutopilotMaxBatch = *p.AutopilotMaxBatch
	}
	if p.AutopilotMaxCiRunsPerMerge != nil {
		a.AutopilotMaxCiRunsPerMerge = *p.AutopilotMaxCiRunsPerMerge
	}
	return a, nil
}

// Limits are the test runs at once, the batch size (1: no batching) and
// the bisection slots a queue runs with.
type Limits struct {
	Concurrency, Batch, Bisection int
}

// Limits are the queue's own settings, or, with the autopilot on, its
// choices (within the bounds, whatever the state holds).
func (s *Snapshot) Limits() Limits {
	q := &s.Queue
	if q.Autopilot && s.Autopilot != nil {
		a := q.AutopilotSettings.withDefaults()
		c := min(max(s.Autopilot.Concurrency, 1), a.AutopilotMaxConcurrency)
		return Limits{Concurrency: c, Batch: min(max(s.Autopilot.Batch, 1), a.AutopilotMaxBatch), Bisection: c}
	}
	b := 1
	if q.Batch {
		b = max(q.BatchingMinSize, 1)
	}
	return Limits{Concurrency: max(q.Concurrency, 1), Batch: b, Bisection: max(q.BisectionConcurrency, 1)}
}

// The autopilot's windows and rules.
const (
	// AutopilotPRWindow is how many of the last concluded PRs the bad-PR
	// rate is measured over, AutopilotRunWindow how many completed runs
	// the flake rate, and len(AutopilotState.Durations) how many run
	// durations the run time.
	AutopilotPRWindow  = 100
	AutopilotRunWindow = 120
	// It changes nothing before it has seen minDurations runs end (it
	// needs the run time). Until the window fills, the bad-PR rate leans
	// on a prior of priorBadRate, worth priorPRs concluded PRs: enough to
	// raise the concurrency at once (more runs at once merge more at any
	// rate), not to batch on no evidence.
	minDurations = 3
	priorBadRate = 0.05
	priorPRs     = 10
	// autopilotHysteresis is the least gain in merges per hour the model
	// must expect of a change.
	autopilotHysteresis = 0.03
	// demandHeadroom is the capacity over the demand a setting must give
	// before more throughput counts for nothing: a queue run at half its
	// capacity keeps its waits short, and a burst is taken in its stride.
	demandHeadroom = 2.0
	// MaxAutopilotChanges is how many changes the state keeps.
	MaxAutopilotChanges = 10
)

// AutopilotState is what the autopilot keeps in the snapshot while it is
// on: its choices, its windows (fixed size: the snapshot stays small) and
// its last changes.
type AutopilotState struct {
	Concurrency int `json:"c"`
	Batch       int `json:"b"`
	// ChangedAt is when it last changed a setting (or was turned on).
	ChangedAt time.Time `json:"at"`
	// Conclusions: 1 a PR failed by a test, 0 a PR merged. Runs: 0 a run
	// completed, 1 a failure shown to be a flake.
	Conclusions BitWindow `json:"pr"`
	Runs        BitWindow `json:"ru"`
	// Durations holds the last run durations in seconds, a ring;
	// DurationsSeen counts every one ever pushed.
	Durations     [32]int32 `json:"d"`
	DurationsSeen int       `json:"dn,omitempty"`
	// Arrivals holds the Unix seconds of the last submissions, a ring;
	// ArrivalsSeen counts every one ever pushed: the arrival rate.
	Arrivals     [32]int64 `json:"ar"`
	ArrivalsSeen int       `json:"an,omitempty"`
	// RunsSince and MergesSince count the CI runs started and the PRs
	// merged since ChangedAt: the measured CI runs per merge.
	RunsSince   int `json:"rs,omitempty"`
	MergesSince int `json:"ms,omitempty"`
	// Changes are the last MaxAutopilotChanges changes, oldest first.
	Changes []AutopilotChange `json:"ch,omitempty"`
	// Observed counts the observations pushed into the windows; Evaluated
	// is that count at the last evaluation, EvaluatedAt its time: the
	// model is asked again only about something new.
	Observed    int       `json:"ob,omitempty"`
	Evaluated   int       `json:"ev,omitempty"`
	EvaluatedAt time.Time `json:"et,omitzero"`
}

// BitWindow is a window of the last 128 (at most) yes/no observations.
type BitWindow struct {
	Bits [2]uint64 `json:"b"`
	N    int       `json:"n"`
}

func (w *BitWindow) push(one bool) {
	w.Bits[1] = w.Bits[1]<<1 | w.Bits[0]>>63
	w.Bits[0] <<= 1
	if one {
		w.Bits[0] |= 1
	}
	w.N = min(w.N+1, 128)
}

// count is how many of the last n observations (at most N) were ones.
func (w BitWindow) count(n int) int {
	n = min(n, w.N)
	switch {
	case n <= 0:
		return 0
	case n <= 64:
		return bits.OnesCount64(w.Bits[0] & mask(n))
	}
	return bits.OnesCount64(w.Bits[0]) + bits.OnesCount64(w.Bits[1]&mask(n-64))
}

func mask(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<n - 1
}

// The kinds of autopilot changes.
const (
	ChangeOn     = "on"     // turned on: its starting point
	ChangeModel  = "model"  // the model expects more of the new settings
	ChangeBounds = "bounds" // the team lowered a bound below a choice
)

// AutopilotChange is one change of the autopilot's choices.
type AutopilotChange struct {
	ID   string    `json:"id,omitempty"`
	At   time.Time `json:"at"`
	Kind string    `json:"kind"`
	// From and To are the concurrency and batch size before and after.
	FromConcurrency int `json:"fc"`
	ToConcurrency   int `json:"tc"`
	FromBatch       int `json:"fb"`
	ToBatch         int `json:"tb"`
	// The estimates it was made on, over the windows of that many PRs and
	// runs, and the run window (the run time) that spaces changes.
	Estimates
	// Expected merges per hour before and after (0 when unknown).
	FromPerHour float64 `json:"fh,omitempty"`
	ToPerHour   float64 `json:"th,omitempty"`
	// Line is the change in words, as the queue's page shows it.
	Line string `json:"line"`
}

// Estimates are the autopilot's estimates.
type Estimates struct {
	BadRate float64 `json:"p"`
	// BadLow and BadHigh are one standard error under and over BadRate:
	// a change must pay off over the whole range.
	BadLow    float64       `json:"pl,omitempty"`
	BadHigh   float64       `json:"ph,omitempty"`
	FlakeRate float64       `json:"f"`
	RunTime   time.Duration `json:"t"`
	PRs       int           `json:"np"` // the PRs the bad-PR rate was measured over
	Runs      int           `json:"nr"` // the runs the flake rate was measured over
}

// Estimates are what the state's windows say now.
func (a *AutopilotState) Estimates() Estimates {
	n := min(a.Conclusions.N, AutopilotPRWindow)
	e := Estimates{PRs: n, RunTime: a.runTime()}
	// The prior's pseudo-PRs while the window fills, then a half failure
	// and one conclusion more: never exactly 0 (a long run of merges does
	// not prove there are no bad PRs), close to the observed share.
	prior := float64(max(priorPRs-n, 0))
	weight := float64(n) + 1 + prior
	e.BadRate = (float64(a.Conclusions.count(n)) + 0.5 + prior*priorBadRate) / weight
	se := math.Sqrt(e.BadRate * (1 - e.BadRate) / weight)
	e.BadLow, e.BadHigh = max(e.BadRate-se, 0), min(e.BadRate+se, 1)
	// The runs window holds runs (0) and flakes (1) together.
	runs := min(a.Runs.N, AutopilotRunWindow)
	flakes := a.Runs.count(runs)
	e.Runs = runs - flakes
	if e.Runs > 0 {
		e.FlakeRate = min(float64(flakes)/float64(e.Runs), 0.9)
	}
	return e
}

// runTime is the median of the durations kept: the run window.
func (a *AutopilotState) runTime() time.Duration {
	n := min(a.DurationsSeen, len(a.Durations))
	if n == 0 {
		return 0
	}
	d := slices.Clone(a.Durations[:n])
	slices.Sort(d)
	return time.Duration(d[(n-1)/2]) * time.Second
}

// newAutopilot is the state of an autopilot turned on over queue q: it
// starts from the team's settings, within the bounds.
func newAutopilot(q Queue, now time.Time) *AutopilotState {
	s := Snapshot{Queue: q}
	s.Queue.Autopilot = false
	own := s.Limits()
	b := q.AutopilotSettings.withDefaults()
	a := &AutopilotState{
		Concurrency: min(own.Concurrency, b.AutopilotMaxConcurrency), Batch: min(own.Batch, b.AutopilotMaxBatch),
		ChangedAt: now,
	}
	a.Changes = []AutopilotChange{{
		At: now, Kind: ChangeOn, FromConcurrency: own.Concurrency, ToConcurrency: a.Concurrency, FromBatch: own.Batch, ToBatch: a.Batch,
		Line: fmt.Sprintf("autopilot on: starting from concurrency %d, %s, within concurrency ≤ %d, batch size ≤ %d, CI runs per merge ≤ %.3g",
			a.Concurrency, batchWords(a.Batch), b.AutopilotMaxConcurrency, b.AutopilotMaxBatch, b.AutopilotMaxCiRunsPerMerge),
	}}
	return a
}

func batchWords(b int) string {
	if b <= 1 {
		return "no batching"
	}
	return fmt.Sprintf("batches of %d", b)
}

// ap is the autopilot's state when it is on, else nil.
func (m *machine) ap() *AutopilotState {
	if !m.s.Queue.Autopilot {
		return nil
	}
	return m.s.Autopilot
}

// The autopilot's observations, made as the machine moves entries and
// runs.

// apConcluded notes a PR's conclusion: merged by the queue, or failed by
// its tests.
func (m *machine) apConcluded(from, to PRState, reason string) {
	a := m.ap()
	if a == nil {
		return
	}
	switch {
	case to == Merged && (reason == ReasonMergeGraphMerge || reason == ReasonDirectMerge):
		a.Observed++
		a.Conclusions.push(false)
		a.MergesSince++
		if from == PendingFailure { // a later run that held it passed
			a.Runs.push(true)
		}
	case to == Failed && TestFailure(reason):
		a.Observed++
		a.Conclusions.push(true)
	default:
		return
	}
	a.Conclusions.restartOnChange()
}

// restartOnChange forgets the older conclusions of the window when the
// last 25 or 50 are implausible under the rate of the others (a binomial
// tail under 0.1%: rare enough that, tested at every conclusion, a steady
// rate seldom sets it off): the bad-PR rate moved (a flaky week began, or
// ended), and the window follows at once rather than after a window's
// worth of PRs.
func (w *BitWindow) restartOnChange() {
	n := min(w.N, AutopilotPRWindow)
	for _, recent := range []int{25, 50} {
		if n < 2*recent {
			return
		}
		k := w.count(recent)
		rate := (float64(w.count(n)-k) + 0.5) / float64(n-recent+1)
		if binomialTail(recent, k, rate) < 0.001 {
			w.N = recent
			return
		}
	}
}

// binomialTail is the probability, among n draws of probability p, of a
// count as far from the expected as k or farther, on k's side.
func binomialTail(n, k int, p float64) float64 {
	pmf := func(i int) float64 {
		lg := func(x int) float64 { v, _ := math.Lgamma(float64(x + 1)); return v }
		return math.Exp(lg(n) - lg(i) - lg(n-i) + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
	}
	sum := 0.0
	if float64(k) >= float64(n)*p {
		for i := k; i <= n; i++ {
			sum += pmf(i)
		}
	} else {
		for i := 0; i <= k; i++ {
			sum += pmf(i)
		}
	}
	return sum
}

// apRunEnded notes a run that ended: its duration, and a flake when it was
// a retry that passed.
func (m *machine) apRunEnded(r *Run, status RunStatus) {
	a := m.ap()
	if a == nil || status == RunCancelled || r.Direct {
		return
	}
	d := max(m.now.Sub(r.CreatedAt), time.Second)
	a.Durations[a.DurationsSeen%len(a.Durations)] = int32(min(d/time.Second, math.MaxInt32))
	a.DurationsSeen++
	a.Observed++
	if !r.Bisection {
		a.Runs.push(false)
	}
	if status == RunSucceeded && r.RetryOf != "" {
		a.Runs.push(true)
	}
}

// apArrived notes a PR submitted (a new episode).
func (m *machine) apArrived() {
	if a := m.ap(); a != nil {
		a.Arrivals[a.ArrivalsSeen%len(a.Arrivals)] = m.now.Unix()
		a.ArrivalsSeen++
	}
}

// arrivalRate is the PRs submitted per hour over the last window (or
// since the oldest submission kept, when the ring holds only more recent
// ones), at now; ok is false before it has seen any.
func (a *AutopilotState) arrivalRate(now time.Time, window time.Duration) (perHour float64, ok bool) {
	n := min(a.ArrivalsSeen, len(a.Arrivals))
	if n == 0 {
		return 0, false
	}
	from := now.Add(-window)
	count, oldest := 0, now
	for _, at := range a.Arrivals[:n] {
		t := time.Unix(at, 0)
		if t.After(from) {
			count++
			if t.Before(oldest) {
				oldest = t
			}
		}
	}
	span := window
	if count == len(a.Arrivals) {
		// The ring holds only the window's latest: measure over them.
		span = max(now.Sub(oldest), time.Minute)
	}
	return float64(count) / span.Hours(), true
}

// apRunStarted counts a CI run started.
func (m *machine) apRunStarted() {
	if a := m.ap(); a != nil {
		a.RunsSince++
	}
}

// apFlake notes a failure shown to be a flake.
func (m *machine) apFlake() {
	if a := m.ap(); a != nil {
		a.Observed++
		a.Runs.push(true)
	}
}

// autopilot makes the autopilot's decision of this step; it reports
// whether a setting changed.
func (m *machine) autopilot() bool {
	a := m.ap()
	if a == nil {
		return false
	}
	b := m.s.Queue.AutopilotSettings.withDefaults()
	est := a.Estimates()
	if a.Concurrency > b.AutopilotMaxConcurrency || a.Batch > b.AutopilotMaxBatch {
		c, bs := min(a.Concurrency, b.AutopilotMaxConcurrency), min(a.Batch, b.AutopilotMaxBatch)
		m.apChange(ChangeBounds, c, bs, est, 0, 0, "within the team's bounds: concurrency ≤ "+fmt.Sprint(b.AutopilotMaxConcurrency)+", batch size ≤ "+fmt.Sprint(b.AutopilotMaxBatch))
		return true
	}
	due := a.ChangedAt.Add(est.RunTime)
	if a.DurationsSeen < minDurations || m.now.Before(due) ||
		a.Observed == a.Evaluated && !a.EvaluatedAt.Before(due) {
		return false
	}
	a.Evaluated, a.EvaluatedAt = a.Observed, m.now
	rerun := m.s.Queue.OptimizationMode != OptimizationBisectionSkipTests
	plan := func(c, bs int) Plan { return Plan{Concurrency: c, Batch: bs, Bisection: c, Rerun: rerun} }
	cur := Predict(est.BadRate, est.FlakeRate, plan(a.Concurrency, a.Batch))
	bound := b.AutopilotMaxCiRunsPerMerge
	// The target is the model's best within the bounds, where even the
	// high estimate of the bad-PR rate keeps CI runs per merge under the
	// bound; the current setting leaves the bound only when even the low
	// estimate takes it over. So an estimate wobbling near the bound does
	// not move the settings in and out of it.
	target, _ := Best(est.BadRate, est.BadHigh, est.FlakeRate, b.AutopilotMaxConcurrency, b.AutopilotMaxBatch, bound, rerun)
	within := Predict(est.BadLow, est.FlakeRate, plan(a.Concurrency, a.Batch)).RunsPerMerge <= bound
	// The model assumes a queue that never runs out of PRs, but a queue
	// merges no more than it is given: merges per run time are capped by
	// the demand (apDemand), so it does not trade time to merge (batches)
	// for throughput the queue cannot use.
	demand, known := m.apDemand(est.RunTime)
	merges := func(p float64, x Plan) float64 {
		v := Predict(p, est.FlakeRate, x).MergesPerRun
		if known {
			v = min(v, demand)
		}
		return v
	}
	// Worth a change only when the target merges more by the margin at
	// the low, the middle and the high estimate alike.
	pays := func(x Plan) bool {
		for _, p := range []float64{est.BadLow, est.BadRate, est.BadHigh} {
			if merges(p, x) < merges(p, plan(a.Concurrency, a.Batch))*(1+autopilotHysteresis) {
				return false
			}
		}
		return true
	}
	if target.Concurrency == a.Concurrency && target.Batch == a.Batch || within && !pays(target) {
		return false
	}
	// One step toward it: the concurrency by at most half again (or 2),
	// the batch size halved or doubled.
	c := min(max(target.Concurrency, a.Concurrency-max(2, a.Concurrency/3)), a.Concurrency+max(2, a.Concurrency/2))
	bs := a.Batch
	switch {
	case target.Batch > a.Batch:
		bs = min(a.Batch*2, target.Batch)
	case target.Batch < a.Batch:
		bs = max(a.Batch/2, target.Batch)
	}
	next := Predict(est.BadRate, est.FlakeRate, plan(c, bs))
	perHour := func(x Prediction) float64 {
		if est.RunTime <= 0 {
			return 0
		}
		return x.MergesPerRun / est.RunTime.Hours()
	}
	why := m.apWhy(est)
	if !within {
		why = fmt.Sprintf("the model expects %.1f CI runs per merge, above the bound of %.3g; ", cur.RunsPerMerge, bound) + why
	}
	m.apChange(ChangeModel, c, bs, est, perHour(cur), perHour(next), why)
	return true
}

// apDemand is the merges per run time t the queue can use: the arrivals
// the rate of the last two run times brings over t, and the PRs already in
// the queue, with demandHeadroom to spare. known is false before any
// arrival was seen.
func (m *machine) apDemand(t time.Duration) (demand float64, known bool) {
	rate, ok := m.s.Autopilot.arrivalRate(m.now, 2*t)
	if !ok || t <= 0 {
		return 0, false
	}
	active := 0
	for i := range m.s.Entries {
		if m.s.Entries[i].Active() {
			active++
		}
	}
	return demandHeadroom * (rate*t.Hours() + float64(active)), true
}

// apWhy says what the estimates are, and how the bad-PR rate moved since
// the last change.
func (m *machine) apWhy(est Estimates) string {
	moved := "is"
	a := m.s.Autopilot
	for _, last := range slices.Backward(a.Changes) {
		if last.Kind != ChangeModel {
			continue
		}
		switch prev, now := math.Round(last.BadRate*1000), math.Round(est.BadRate*1000); {
		case now > prev:
			moved = "rose to"
		case now < prev:
			moved = "fell to"
		}
		break
	}
	return fmt.Sprintf("bad-PR rate %s %s over the last %d pull requests, flake rate %s over the last %d runs, run time %s",
		moved, percent(est.BadRate), est.PRs, percent(est.FlakeRate), est.Runs, est.RunTime.Round(time.Second))
}

func percent(x float64) string {
	if x < 0.1 {
		return fmt.Sprintf("%.1f%%", 100*x)
	}
	return fmt.Sprintf("%.0f%%", 100*x)
}

// apChange moves the autopilot to concurrency c and batch size b, records
// the change and sends its event.
func (m *machine) apChange(kind string, c, b int, est Estimates, fromHour, toHour float64, why string) {
	a := m.s.Autopilot
	ch := AutopilotChange{
		At: m.now, Kind: kind, FromConcurrency: a.Concurrency, ToConcurrency: c, FromBatch: a.Batch, ToBatch: b,
		Estimates: est, FromPerHour: fromHour, ToPerHour: toHour,
	}
	if m.newID != nil {
		ch.ID = m.newID()
	}
	var parts []string
	if c != a.Concurrency {
		parts = append(parts, fmt.Sprintf("concurrency %d → %d", a.Concurrency, c))
	}
	if b != a.Batch {
		parts = append(parts, fmt.Sprintf("batch size %d → %d", a.Batch, b))
	}
	ch.Line = strings.Join(parts, ", ") + ": " + why
	if toHour > 0 {
		ch.Line += fmt.Sprintf("; expected merges per hour %.1f → %.1f", fromHour, toHour)
	}
	a.Concurrency, a.Batch, a.ChangedAt = c, b, m.now
	a.RunsSince, a.MergesSince = 0, 0
	a.Changes = append(a.Changes, ch)
	if n := len(a.Changes) - MaxAutopilotChanges; n > 0 {
		a.Changes = a.Changes[n:] // never written in place: shared
	}
	if ch.ID == "" {
		return
	}
	q := m.s.Queue
	ev := &Event{
		ID: "event/autopilot/" + ch.ID, Type: EventAutopilotChanged, Timestamp: m.now,
		Repository: q.Repo, TargetBranch: q.Branch, Autopilot: &ch,
	}
	m.out.Effects = append(m.out.Effects, Effect{Key: ev.ID, Kind: EffectEvent, Event: ev})
}

// EventAutopilotChanged is the type of the webhook event of an autopilot
// change (ours).
const EventAutopilotChanged = "merge_queue.autopilot_changed"
