package mergequeue

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// allowedTransitions is table 3.5 of the contract, written out here rather
// than taken from the engine so that the test can disagree with it.
var allowedTransitions = map[[2]PRState]bool{
	{"", NotReady}:              true,
	{NotReady, Pending}:         true,
	{Pending, Testing}:          true,
	{Testing, TestsPassed}:      true,
	{TestsPassed, Merged}:       true,
	{Testing, PendingFailure}:   true,
	{PendingFailure, Failed}:    true,
	{PendingFailure, Pending}:   true,
	{PendingFailure, Merged}:    true, // optimistic merge
	{Testing, Pending}:          true,
	{TestsPassed, Pending}:      true,
	{TestsPassed, Failed}:       true, // the merge call failed
	{NotReady, Cancelled}:       true,
	{Pending, Cancelled}:        true,
	{Testing, Cancelled}:        true,
	{TestsPassed, Cancelled}:    true,
	{PendingFailure, Cancelled}: true,
	{NotReady, Merged}:          true, // by hand
	{Pending, Merged}:           true,
	{Testing, Merged}:           true,
}

// propSim is a sim whose driver misbehaves the ways real ones can.
type propSim struct {
	*sim
	rng       *rand.Rand
	history   []Snapshot
	submitted map[int]bool
	lastSeen  map[int]Entry  // last version of each entry the driver stored
	retries   map[string]int // flaky retries by entry id and episode
	nextPR    int
	// apRNG is the autopilot's own stream (its bounds), so that turning it
	// on leaves the other draws of a seed as they were.
	apRNG *rand.Rand
}

func (p *propSim) check(before Snapshot, out Output) {
	t := p.t
	t.Helper()
	for _, tr := range out.Transitions {
		if !allowedTransitions[[2]PRState{tr.From, tr.To}] {
			t.Fatalf("transition %s → %s (%s) of PR %d is not in table 3.5", tr.From, tr.To, tr.Reason, tr.PRNumber)
		}
		if (tr.From == PendingFailure && tr.To == Merged) || tr.Reason == ReasonLaterRunPassed {
			optimisticSeen.Add(1)
		}
		if tr.Reason == ReasonDirectMerge {
			directSeen.Add(1)
		}
		if tr.Reason == ReasonRetryKnownFlaky || tr.Reason == ReasonRetryFailure {
			retriesSeen.Add(1)
			k := fmt.Sprint(tr.EntryID, "/", tr.Episode)
			p.retries[k]++
			if p.retries[k] > p.snap.Queue.FlakyRetries {
				t.Fatalf("PR %d retried %d times in episode %d; flakyRetries is %d", tr.PRNumber, p.retries[k], tr.Episode, p.snap.Queue.FlakyRetries)
			}
		}
		if tr.To == TestsPassed && p.runs[tr.RunID].Bisection {
			bisectionSeen.Add(1)
		}
		optimistic := tr.From == PendingFailure && tr.Reason == ReasonMergeGraphMerge && p.snap.Queue.CanOptimisticallyMerge
		if tr.To == Merged && tr.From != TestsPassed && tr.Reason != ReasonManualMerge && !optimistic {
			t.Fatalf("PR %d merged from %s with %s", tr.PRNumber, tr.From, tr.Reason)
		}
		if tr.From == TestsPassed && tr.To == Failed && tr.Reason != ReasonMergeFailed {
			t.Fatalf("PR %d failed after passing with %s", tr.PRNumber, tr.Reason)
		}
	}
	for _, e := range out.Entries {
		p.lastSeen[e.PRNumber] = e
	}
	// Every merge the driver performs was recorded as an intent in the
	// snapshot it saved, and an outstanding intent never changes.
	entries := map[string]Entry{}
	for _, e := range p.snap.Entries {
		entries[e.ID] = e
	}
	for _, eff := range out.Effects {
		if eff.Kind != EffectMergePR {
			continue
		}
		e, ok := entries[eff.MergePR.EntryID]
		if !ok || e.Intent == nil || e.Intent.Key != eff.Key || e.Intent.SHA != eff.MergePR.SHA {
			t.Fatalf("merge %s performed without its intent saved: %+v", eff.Key, e.Intent)
		}
	}
	for _, b := range before.Entries {
		if a, ok := entries[b.ID]; ok && b.Intent != nil && a.Intent != nil && a.Intent.Key != b.Intent.Key {
			t.Fatalf("PR %d: outstanding intent %s replaced by %s", b.PRNumber, b.Intent.Key, a.Intent.Key)
		}
	}
	// Test runs and bisection runs each keep to their own slots (more only
	// when a command lowered the setting while runs were in progress).
	for _, bisection := range []bool{false, true} {
		running, runningBefore := 0, 0
		for _, r := range p.snap.Runs {
			if r.Status == RunInProgress && r.Bisection == bisection {
				running++
			}
		}
		for _, r := range before.Runs {
			if r.Status == RunInProgress && r.Bisection == bisection {
				runningBefore++
			}
		}
		// The autopilot may lower the limit at the end of a step that
		// started runs under the one before.
		limit := max(p.snap.Limits().Concurrency, before.Limits().Concurrency)
		if bisection {
			limit = max(p.snap.Limits().Bisection, before.Limits().Bisection)
		}
		if running > max(limit, runningBefore) {
			t.Fatalf("%d runs in progress (bisection: %v) with a limit of %d", running, bisection, limit)
		}
	}
	p.checkAutopilot(before, out)
	// No PR lost: every submitted PR is in the snapshot, or was stored
	// finished before it was pruned.
	inSnap := map[int]bool{}
	for _, e := range p.snap.Entries {
		inSnap[e.PRNumber] = true
	}
	for pr := range p.submitted {
		if !inSnap[pr] && !p.lastSeen[pr].State.Terminal() {
			t.Fatalf("PR %d lost: not in the snapshot, last seen %s", pr, p.lastSeen[pr].State)
		}
	}
}

// checkAutopilot: the limits the queue runs with stay within the
// autopilot's bounds, a new run tests no more PRs than the batch size
// (before or after the step: the autopilot decides at its end), and each
// change the autopilot makes on its own comes a run window (its run time
// then) after the one before, one step away.
func (p *propSim) checkAutopilot(before Snapshot, out Output) {
	t := p.t
	t.Helper()
	q := p.snap.Queue
	if q.Autopilot {
		b := q.WithRetryDefaults().AutopilotSettings
		if l := p.snap.Limits(); l.Concurrency > b.AutopilotMaxConcurrency || l.Batch > b.AutopilotMaxBatch || l.Bisection > b.AutopilotMaxConcurrency {
			t.Fatalf("the autopilot runs with %+v, beyond its bounds %+v", l, b)
		}
	}
	old := map[string]bool{}
	for _, r := range before.Runs {
		old[r.ID] = true
	}
	for _, r := range out.Runs {
		if old[r.ID] || r.Bisection || r.Direct {
			continue
		}
		if n, most := countUnderTest(&r), max(before.Limits().Batch, p.snap.Limits().Batch); n > most {
			t.Fatalf("run %s tests %d PRs; the batch size is %d", r.ID, n, most)
		}
	}
	for _, e := range out.Effects {
		if e.Kind != EffectEvent || e.Event.Autopilot == nil {
			continue
		}
		c := *e.Event.Autopilot
		if c.Kind != ChangeModel {
			continue
		}
		autopilotSeen.Add(1)
		if before.Autopilot == nil || c.At.Before(before.Autopilot.ChangedAt.Add(c.RunTime)) {
			t.Fatalf("the autopilot changed %+v within a run window (%v) of its last change", c, c.RunTime)
		}
		fc, fb := c.FromConcurrency, c.FromBatch
		if c.ToConcurrency > fc+max(2, fc/2) || c.ToConcurrency < fc-max(2, fc/3) || c.ToBatch > 2*fb || c.ToBatch < fb/2 {
			t.Fatalf("the autopilot jumped: %s", c.Line)
		}
	}
}

// save is a successful conditional save followed by the effects.
func (p *propSim) save(before Snapshot, snap Snapshot, out Output, perform func([]Effect)) {
	p.t.Helper()
	p.history = append(p.history, before)
	p.snap = snap
	p.w.parallel = snap.Queue.Mode == ModeParallel
	p.record(out)
	p.check(before, out)
	perform(out.Effects)
}

func (p *propSim) driverStep() {
	p.t.Helper()
	before := p.snap
	obs := p.w.observe(p.snap)
	switch f := p.rng.IntN(20); {
	case f == 0: // effects performed twice
		snap, out := Step(before, obs, p.now, p.newID)
		p.save(before, snap, out, func(e []Effect) { p.w.apply(e); p.w.apply(e) })
	case f == 1: // saved, then crashed before performing anything but the outbox
		snap, out := Step(before, obs, p.now, p.newID)
		p.save(before, snap, out, func(effects []Effect) {
			for _, e := range effects {
				if e.Kind == EffectEvent {
					p.w.apply([]Effect{e})
				}
			}
		})
	case f == 2: // performed, then crashed before reporting the outcomes
		snap, out := Step(before, obs, p.now, p.newID)
		p.save(before, snap, out, func(e []Effect) {
			p.w.apply(e)
			p.w.pendingBuilds, p.w.pendingMerges = nil, nil
		})
	case f == 3: // two drivers step the same snapshot; one save wins
		snapA, outA := Step(before, obs, p.now, p.newID)
		snapB, outB := Step(before, obs, p.now, p.newID)
		if p.rng.IntN(2) == 0 {
			snapA, outA = snapB, outB
		}
		p.save(before, snapA, outA, p.w.apply)
	case f == 4 && len(p.history) > 3: // a late driver steps an old snapshot;
		// its save fails on the version, and the outcomes it read are lost
		old := p.history[len(p.history)-1-p.rng.IntN(3)]
		if _, _ = Step(old, obs, p.now, p.newID); old.Version == before.Version {
			p.t.Fatal("an old snapshot has the current version")
		}
	default:
		snap, out := Step(before, obs, p.now, p.newID)
		p.save(before, snap, out, p.w.apply)
	}
}

func (p *propSim) randomPR() int { return 1 + p.rng.IntN(p.nextPR) }

func (p *propSim) act() {
	r, w := p.rng, p.w
	switch k := r.IntN(100); {
	case k < 12:
		p.nextPR++
		pr := p.nextPR
		w.openPR(pr)
		w.bad[pr] = r.IntN(5) == 0
		w.hold[pr] = r.IntN(8) == 0
		w.conflicts[pr] = r.IntN(20) == 0
		w.upToDate[pr] = r.IntN(2) == 0
		if r.IntN(3) == 0 {
			w.flakes[pr] = 1 + r.IntN(3)
		}
		switch r.IntN(4) {
		case 0:
			w.evidence[pr] = []FailedTest{{Name: "TestA", Status: "flaky"}}
		case 1:
			w.evidence[pr] = []FailedTest{{Name: "TestB", Status: "healthy"}}
		case 2:
			w.evidence[pr] = []FailedTest{{Name: "TestC", Status: "broken", Quarantined: true}}
		}
		switch k := r.IntN(12); {
		case k == 0:
			w.allTargets[pr] = true
		case k == 1:
			w.targets[pr] = []string{}
		case k == 2: // none set yet: NOT_READY in PARALLEL mode
		default:
			universe := []string{"api", "web", "db", "docs", "cli"}
			w.targets[pr] = []string{universe[r.IntN(5)], universe[r.IntN(5)]}
		}
		if r.IntN(10) == 0 {
			w.prs[pr].mergeability = MergeabilityBusy
		}
		p.command(pr, func(s Snapshot) (Snapshot, Output, error) {
			return Submit(s, SubmitRequest{PRNumber: pr, Priority: []*int{nil, ptr(0), ptr(10), ptr(100), ptr(200)}[r.IntN(5)]}, p.now, p.newID)
		})
	case k < 14 && p.nextPR > 0:
		pr := p.randomPR()
		p.command(pr, func(s Snapshot) (Snapshot, Output, error) {
			return Submit(s, SubmitRequest{PRNumber: pr, Priority: ptr(r.IntN(256))}, p.now, p.newID)
		})
	case k < 17 && p.nextPR > 0:
		pr := p.randomPR()
		p.command(pr, func(s Snapshot) (Snapshot, Output, error) { return Cancel(s, CancelRequest{PRNumber: pr}, p.now) })
	case k < 20 && p.nextPR > 0:
		pr := p.randomPR()
		p.command(pr, func(s Snapshot) (Snapshot, Output, error) { return Restart(s, RestartRequest{PRNumber: pr}, p.now) })
	case k < 22:
		state := []string{"RUNNING", "RUNNING", "PAUSED", "DRAINING"}[r.IntN(4)]
		p.command(0, func(s Snapshot) (Snapshot, Output, error) { return UpdateQueue(s, QueuePatch{State: &state}, p.now) })
	case k < 23:
		mode := []string{"SINGLE", "PARALLEL"}[r.IntN(2)]
		p.command(0, func(s Snapshot) (Snapshot, Output, error) { return UpdateQueue(s, QueuePatch{Mode: &mode}, p.now) })
	case k < 28 && p.nextPR > 0:
		pr := p.randomPR()
		switch gp := w.prs[pr]; {
		case gp.state != PROpen:
		case r.IntN(6) == 0:
			gp.state = PRClosed
		case r.IntN(6) == 0:
			gp.draft = !gp.draft
		case r.IntN(4) == 0:
			w.mergeByHand(pr)
		case r.IntN(3) == 0:
			gp.mergeability = []Mergeability{Mergeable, NotMergeable, MergeabilityBusy}[r.IntN(3)]
		default:
			w.push(pr)
		}
	case k < 30:
		w.pushTarget()
	case k < 34 && p.nextPR > 0:
		delete(w.hold, p.randomPR())
	case k < 38:
		p.now = p.now.Add(time.Duration(r.IntN(400)) * time.Minute)
		p.moveBounds()
	default:
		p.driverStep()
		p.now = p.now.Add(time.Duration(r.IntN(90)) * time.Second)
	}
}

// moveBounds, now and then on an autopilot's seed, changes its bounds
// (lowering them below its choices too) or turns it off and on again.
func (p *propSim) moveBounds() {
	if p.apRNG == nil || p.apRNG.IntN(3) > 0 {
		return
	}
	r := p.apRNG
	patch := AutopilotPatch{AutopilotMaxConcurrency: ptr(1 + r.IntN(6)), AutopilotMaxBatch: ptr(1 + r.IntN(8))}
	if r.IntN(5) == 0 {
		patch = AutopilotPatch{Autopilot: ptr(r.IntN(2) == 0)}
	}
	p.command(0, func(s Snapshot) (Snapshot, Output, error) {
		return UpdateQueue(s, QueuePatch{AutopilotPatch: patch}, p.now)
	})
}

func (p *propSim) command(pr int, f func(Snapshot) (Snapshot, Output, error)) {
	p.t.Helper()
	before := p.snap
	snap, out, err := f(before)
	if err != nil {
		return // refused commands change nothing
	}
	if pr > 0 {
		p.submitted[pr] = true
	}
	p.save(before, snap, out, p.w.apply)
}

// checkMerges: each merge by the queue used a SUCCEEDED run holding the PR
// at the merged head, under test (or, under optimistic merge, merged in
// ahead of a later PR under test), and the branch it merged onto was
// exactly what that run tested up to it: its base plus the PRs ahead,
// merged before it in that order.
func (p *propSim) checkMerges() {
	t := p.t
	t.Helper()
	count := map[int]int{}
	contentAt := map[int][]int{} // merge index → target content before it
	content := []int{}
	for i, m := range p.w.merges {
		count[m.pr]++
		if count[m.pr] > 1 {
			t.Fatalf("PR %d merged twice", m.pr)
		}
		contentAt[i] = slices.Clone(content)
		_ = contentAt
		if m.manual {
			continue
		}
		run, ok := p.runs[m.runID]
		if !ok || run.Status != RunSucceeded {
			t.Logf("run %+v", run)
			t.Fatalf("PR %d merged on run %q (status %q), not a passing run", m.pr, m.runID, run.Status)
		}
		want := slices.Clone(p.w.commits[run.BaseSHA])
		under := false
		for _, rp := range run.PRs {
			// A PR already in the base merges in as nothing (git): the
			// base can hold the queue's own merge before the engine has
			// heard it went through.
			if !slices.Contains(p.w.commits[run.BaseSHA], rp.PRNumber) {
				want = append(want, rp.PRNumber)
			}
			if rp.PRNumber == m.pr && rp.HeadSHA == m.sha && (rp.UnderTest || p.snap.Queue.CanOptimisticallyMerge) {
				under = true
				break
			}
		}
		if !under {
			t.Fatalf("PR %d merged at %s, but run %s did not test it there: %+v", m.pr, m.sha, run.ID, run.PRs)
		}
		got := append(slices.Clone(p.w.commits[m.before]), m.pr)
		if !m.parallel {
			if !slices.Equal(got, want) {
				t.Fatalf("PR %d merged onto %v; its run %s tested %v", m.pr, got, run.ID, want)
			}
			continue
		}
		// PARALLEL: what the run tested merged first, in the run's order
		// (a PR never merges before one it depends on); whatever else
		// merged since the run's base is another lane's, so its targets
		// do not meet this PR's.
		if !allIn(want[len(p.w.commits[run.BaseSHA]):], got) {
			t.Fatalf("PR %d merged onto %v; its run %s tested %v, not all merged first", m.pr, got, run.ID, want)
		}
		for i, x := range want {
			for _, y := range want[i+1:] {
				if x > 0 && y > 0 && p.w.intersects(x, y) && slices.Index(got, x) > slices.Index(got, y) {
					t.Fatalf("PR %d merged before PR %d, which its run %s tested ahead of it: %v", y, x, run.ID, got)
				}
			}
		}
		for _, x := range got[len(p.w.commits[run.BaseSHA]) : len(got)-1] {
			if slices.Contains(want, x) {
				continue
			}
			if x < 0 || p.w.intersects(x, m.pr) {
				t.Fatalf("PR %d merged onto %v with %d, which its run %s did not test (%v) and which shares its targets", m.pr, got, x, run.ID, want)
			}
			lanesSeen.Add(1)
		}
	}
}

// optimisticSeen counts the optimistic merges the generator reached (a
// PENDING_FAILURE PR merged, or a TESTING one passed by a later run), so
// TestProperties knows its seeds still exercise them.
var optimisticSeen atomic.Int64

// directSeen counts the direct merges the generator reached.
var directSeen atomic.Int64

// retriesSeen counts the flaky retries the generator reached.
var retriesSeen atomic.Int64

// bisectionSeen counts the PRs that passed on a bisection run: batches
// failed and were searched.
var bisectionSeen atomic.Int64

// lanesSeen counts the PRs of another lane merged between a run's base and
// its PR's merge: PARALLEL lanes really ran side by side.
var lanesSeen atomic.Int64

// autopilotSeen counts the changes the autopilot made on its own (not to
// follow a bound) that the generator reached.
var autopilotSeen atomic.Int64

func TestProperties(t *testing.T) {
	defer func() {
		if optimisticSeen.Load() == 0 {
			t.Error("no seed reached an optimistic merge: the generator lost that case")
		}
		if bisectionSeen.Load() == 0 {
			t.Error("no seed passed a PR on a bisection run: the generator lost that case")
		}
		if retriesSeen.Load() == 0 {
			t.Error("no seed retried a flaky run: the generator lost that case")
		}
		if directSeen.Load() == 0 {
			t.Error("no seed reached a direct merge: the generator lost that case")
		}
		if lanesSeen.Load() == 0 {
			t.Error("no seed merged two PARALLEL lanes side by side: the generator lost that case")
		}
		if autopilotSeen.Load() == 0 {
			t.Error("no seed saw the autopilot change a setting: the generator lost that case")
		}
		t.Logf("optimistic merges %d, direct merges %d, side-by-side lane merges %d, passed on bisection %d, flaky retries %d, autopilot changes %d",
			optimisticSeen.Load(), directSeen.Load(), lanesSeen.Load(), bisectionSeen.Load(), retriesSeen.Load(), autopilotSeen.Load())
	}()
	seeds := 100
	if testing.Short() {
		seeds = 40
	}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			p := &propSim{
				sim: newSim(t, 1+rng.IntN(4)), rng: rng,
				submitted: map[int]bool{}, lastSeen: map[int]Entry{}, retries: map[string]int{},
			}
			switch rng.IntN(5) {
			case 0:
				p.update(QueuePatch{PendingFailureDepth: ptr(1 + rng.IntN(2))})
			case 1:
				p.update(QueuePatch{PendingFailureDepth: ptr(rng.IntN(3)), CanOptimisticallyMerge: ptr(true)})
			case 2:
				p.update(QueuePatch{DirectMergeMode: ptr("ALWAYS")})
			}
			if rng.IntN(3) == 0 {
				p.update(QueuePatch{
					FlakyRetries: ptr(1 + rng.IntN(3)), FlakyEvidenceWaitSeconds: ptr(rng.IntN(600)),
					FlakyRetryPolicy: ptr([]string{"KNOWN_FLAKY", "ANY_FAILURE"}[rng.IntN(2)]),
				})
				// A retry on the failed head first sees the failure it
				// repeats (not drawn from rng: the other draws stay put).
				p.w.reuseLag = seed % 3
			}
			if rng.IntN(2) == 0 {
				p.update(QueuePatch{
					Batch: ptr(true), BatchingMinSize: ptr(2 + rng.IntN(3)), BatchingMaxWaitTimeMinutes: ptr(rng.IntN(6)),
					BisectionConcurrency: ptr(1 + rng.IntN(2)),
					OptimizationMode:     ptr([]string{"OFF", "BISECTION_SKIP_REDUNDANT_TESTS"}[rng.IntN(2)]),
				})
			}
			// A third of the seeds run the autopilot, bounds drawn from a
			// stream of its own.
			if ap := rand.New(rand.NewPCG(uint64(seed), 8)); ap.IntN(3) == 0 {
				p.apRNG = ap
				p.update(QueuePatch{AutopilotPatch: AutopilotPatch{
					Autopilot: ptr(true), AutopilotMaxConcurrency: ptr(1 + ap.IntN(6)), AutopilotMaxBatch: ptr(1 + ap.IntN(8)),
					AutopilotMaxCiRunsPerMerge: ptr(0.5 + 3*ap.Float64()),
				}})
			}
			for range 250 {
				p.act()
			}
			// Then calm: GitHub settles, the queue runs, the driver behaves.
			for _, pr := range p.w.order {
				delete(p.w.hold, pr)
				if _, ok := p.w.targets[pr]; !ok && !p.w.allTargets[pr] {
					p.w.targets[pr] = []string{"late"}
				}
			}
			p.command(0, func(s Snapshot) (Snapshot, Output, error) {
				return UpdateQueue(s, QueuePatch{State: ptr("RUNNING")}, p.now)
			})
			for range 120 {
				before := p.snap
				snap, out := Step(before, p.w.observe(p.snap), p.now, p.newID)
				p.save(before, snap, out, p.w.apply)
				p.now = p.now.Add(time.Minute)
			}
			p.checkMerges()
			for _, e := range p.snap.Entries {
				gp := p.w.prs[e.PRNumber]
				blocked := e.State == NotReady && (gp.mergeability != Mergeable || gp.draft)
				if e.Active() && !blocked {
					if r, ok := p.runs[e.RunID]; ok {
						t.Logf("its run %s: %s %s, bisect %+v, PRs %+v", r.ID, r.Status, r.Reason, r.Bisect, r.PRs)
					}
					t.Errorf("PR %d still %s (%s) after the queue calmed down; GitHub: %+v", e.PRNumber, e.State, e.Reason, *gp)
				}
			}
		})
	}
}

// allIn reports whether every element of sub is in seq.
func allIn(sub, seq []int) bool {
	for _, x := range sub {
		if !slices.Contains(seq, x) {
			return false
		}
	}
	return true
}
