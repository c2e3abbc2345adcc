package mergequeue

import (
	"slices"
	"strconv"
)

// bisect moves on the search for the culprit of each failed batch (a run
// with several PRs under test, contract 3.7). The search looks for the
// shortest failing prefix of the batch: with its first Lo PRs known to pass
// together and its first Hi known to fail, it tests prefixes in between on
// bisection runs (on bisectionConcurrency slots of their own, on the same
// PRs ahead; as many prefixes, evenly spread, as there are free slots, so
// one slot makes a binary search), until Hi = Lo+1. The PRs of the passing prefix pass on its run and go on
// to merge; PR Hi is the culprit and goes to PENDING_FAILURE, then FAILED
// by the usual rule; the PRs after it are retested once it has left the
// line. Meanwhile every PR of the batch stays TESTING. A batch starts its
// search only once every PR it was tested on top of has passed: until
// then its failure may be theirs. The search never
// tests a prefix whose result is implied; with optimizationMode OFF it
// also runs the whole batch again once beside the first half, so a batch
// that failed on a flake passes without bisecting further
// (BISECTION_SKIP_REDUNDANT_TESTS skips that rerun).
func (m *machine) bisect() {
	var batches []string // by id: starting runs moves m.s.Runs
	for i := range m.s.Runs {
		if b := &m.s.Runs[i]; b.Bisect != nil && !b.Bisection {
			batches = append(batches, b.ID)
		}
	}
	for _, id := range batches {
		m.bisectBatch(id)
	}
}

func (m *machine) bisectBatch(id string) {
	b := m.run(id)
	members := b.PRs[firstUnderTest(b):]
	n := len(members)
	if bs := b.Bisect; bs.Lo >= bs.Hi && bs.Lo < n {
		// A prefix passed that holds a failed one: one of the two runs was
		// a flake. Trust the pass; the batch as a whole still failed.
		m.editBisect(b, func(bs *Bisection) { bs.Hi, bs.FailRun = n, b.ID })
		m.apFlake()
	}
	bs := *b.Bisect
	onBatch := func(i int) *Entry {
		e := m.entryOf(members[i].EntryID, members[i].PRNumber)
		if e == nil || e.Episode != members[i].Episode || e.RunID != b.ID || e.State != Testing {
			return nil
		}
		return e
	}
	if !m.searchHolds(b, bs, members, onBatch) {
		return
	}
	for i := range bs.Lo { // the passing prefix passes on its run
		if e := onBatch(i); e != nil {
			e.RunID = bs.PassRun
			m.transition(e, TestsPassed, ReasonTestRunPassed)
		}
	}
	switch {
	case bs.Lo >= n: // the whole batch passed on its rerun: it failed on a flake
		m.endBisectionRuns(b, 0, n+1)
		m.apFlake()
	case bs.Hi == bs.Lo+1:
		m.endBisectionRuns(b, 0, n+1)
		m.settleCulprit(b, bs, members, onBatch)
	default:
		m.searchOn(id, b, bs, n)
	}
}

// searchHolds reports whether the search of batch run b goes on: some PR
// of the batch is still testing on it, and every PR not yet settled by
// the search still is, or has passed since (optimistic merge: a later run
// that held it passed). Otherwise it ends the search: nothing is left to
// search for, or a PR left otherwise (cancelled, pushed to, restarted) and
// the search is moot: the rest retest.
func (m *machine) searchHolds(b *Run, bs Bisection, members []RunPR, onBatch func(int) *Entry) bool {
	n := len(members)
	culprit := bs.Hi == bs.Lo+1
	left := 0
	for i := range n {
		if onBatch(i) != nil {
			left++
		}
	}
	if left == 0 { // every PR settled otherwise: nothing to search for
		m.endBisectionRuns(b, 0, n+1)
		return false
	}
	for i := bs.Lo; i < n; i++ {
		if onBatch(i) == nil && !(culprit && i >= bs.Hi-1) && !m.passedSince(members[i]) {
			m.abandonBisection(b, members, onBatch)
			return false
		}
	}
	return true
}

// settleCulprit ends a search that found its culprit, PR Hi: it goes to
// PENDING_FAILURE on the run that failed with it last; if it merged after
// all (optimistic merge), those after it retest on top of it.
func (m *machine) settleCulprit(b *Run, bs Bisection, members []RunPR, onBatch func(int) *Entry) {
	c := m.entryOf(members[bs.Hi-1].EntryID, members[bs.Hi-1].PRNumber)
	if e := onBatch(bs.Hi - 1); e != nil {
		e.RunID = bs.FailRun
		reason := b.Reason
		if f := m.run(bs.FailRun); f != nil && f.Reason != "" {
			reason = f.Reason
		}
		m.transition(e, PendingFailure, reason)
		return
	}
	if c != nil && c.State == Merged {
		for i := bs.Hi; i < len(members); i++ {
			if e := onBatch(i); e != nil {
				m.restart(e, ReasonPrerequisiteFailed, false)
			}
		}
	}
}

// searchOn moves an open search on: it ends the runs of prefixes already
// settled, and, once every PR the batch was tested on top of has passed,
// tests prefixes between Lo and Hi on the free bisection slots (and, with
// optimizationMode OFF, reruns the whole batch once).
func (m *machine) searchOn(id string, b *Run, bs Bisection, n int) {
	// Runs of prefixes already settled tell nothing new; the rerun of the
	// whole batch (OFF) still may, while the whole batch is all that is
	// known to fail.
	keep := bs.Hi
	if bs.Hi == n {
		keep = n + 1
	}
	m.endBisectionRuns(b, bs.Lo+1, keep)
	if m.s.Queue.State == QueuePaused || !m.aheadPassed(b) {
		// A batch tested on top of PRs whose fate is open may have failed
		// because of them: it waits for them, as a pending failure does.
		return
	}
	if m.s.Queue.OptimizationMode != OptimizationBisectionSkipTests && !bs.Retested && bs.Lo == 0 && bs.Hi == n {
		if m.startBisection(id, n) {
			m.editBisect(m.run(id), func(bs *Bisection) { bs.Retested = true })
		}
	}
	// With s bisection slots free, test s prefixes evenly spread between
	// Lo and Hi at once: the search ends in fewer rounds of T.
	// (The slots this batch holds count as its own, so the same prefixes
	// are chosen again while nothing changed.)
	mine := 0
	for i := range m.s.Runs {
		if r := &m.s.Runs[i]; r.Bisection && r.BisectOf == id && r.Status == RunInProgress && r.Prefix < n {
			mine++
		}
	}
	free := m.s.Limits().Bisection - m.bisectionInProgress() + mine
	for _, k := range spread(bs.Lo, bs.Hi, max(free, 1)) {
		m.startBisection(id, k)
	}
}

// passedSince reports whether p's entry, in p's episode, has passed or
// merged (on another run than its batch's).
func (m *machine) passedSince(p RunPR) bool {
	e := m.entryOf(p.EntryID, p.PRNumber)
	return e != nil && e.Episode == p.Episode && (e.State == TestsPassed || m.mergedByQueueAt(p))
}

// aheadPassed reports whether every PR run b (a batch, or a failed run
// awaiting a retry decision) was tested on top of has passed or merged
// since.
func (m *machine) aheadPassed(b *Run) bool {
	for _, p := range b.PRs[:firstUnderTest(b)] {
		if m.mergedByQueueAt(p) {
			continue
		}
		if e := m.entryOf(p.EntryID, p.PRNumber); e == nil || e.Episode != p.Episode || e.State != TestsPassed {
			return false
		}
	}
	return true
}

// editBisect changes b's bisection on a copy: the snapshot passed to Step
// shares its runs' pointers and must not change.
func (m *machine) editBisect(b *Run, f func(*Bisection)) {
	bs := *b.Bisect
	f(&bs)
	b.Bisect = &bs
	m.touchRun(b)
}

// startBisection starts a bisection run of the first prefix PRs of batch
// b, unless one is in progress or no bisection slot is free; it reports
// whether one is running.
func (m *machine) startBisection(batchID string, prefix int) bool {
	for i := range m.s.Runs {
		if r := &m.s.Runs[i]; r.Bisection && r.BisectOf == batchID && r.Prefix == prefix && r.Status == RunInProgress {
			return true
		}
	}
	b := m.run(batchID)
	if m.bisectionInProgress() >= m.s.Limits().Bisection {
		return false
	}
	first := firstUnderTest(b)
	var prs []RunPR
	for _, p := range b.PRs[:first] {
		if !m.mergedByQueueAt(p) { // merged since: now in the base
			prs = append(prs, p)
		}
	}
	prs = append(prs, b.PRs[first:first+prefix]...)
	last := b.PRs[first+prefix-1]
	m.editBisect(b, func(bs *Bisection) { bs.Runs++ })
	id := m.newID()
	n, k := strconv.Itoa(last.PRNumber), strconv.Itoa(b.Bisect.Runs)
	// addRun may move m.s.Runs: b is not used after it.
	r := m.addRun(Run{
		ID: id, PRNumber: last.PRNumber, Bisection: true, BisectOf: b.ID, Prefix: prefix,
		TestBranch: TestBranchPrefix + "pr-" + n + "/" + id + "-bisection-" + k,
		TempBranch: "trunk-temp/pr-" + n + "/" + id + "-bisection-" + k,
		PRs:        prs, BaseSHA: m.s.TargetHead, BaseEpoch: m.s.BaseEpoch,
		Status: RunInProgress, CreatedAt: m.now, BuildRequestedAt: m.now, BuildAttempts: 1,
		RequiredStatuses: b.RequiredStatuses, RequiredStatusesSource: b.RequiredStatusesSource,
	})
	m.emitBuild(r)
	return true
}

// endBisectionRuns cancels b's bisection runs in progress whose prefix is
// outside [lo, hi): their result would tell nothing new.
func (m *machine) endBisectionRuns(b *Run, lo, hi int) {
	for i := range m.s.Runs {
		r := &m.s.Runs[i]
		if r.Bisection && r.BisectOf == b.ID && r.Status == RunInProgress && (r.Prefix < lo || r.Prefix >= hi) {
			m.endRun(r, RunCancelled, ReasonBisectionSettled)
		}
	}
}

// abandonBisection ends the search of b: the PRs still testing on it
// retest.
func (m *machine) abandonBisection(b *Run, members []RunPR, onBatch func(int) *Entry) {
	m.endBisectionRuns(b, 0, len(members)+1)
	b.Bisect = nil
	m.touchRun(b)
	for i := range members {
		if e := onBatch(i); e != nil {
			m.restart(e, ReasonPrerequisiteCancelled, false)
		}
	}
}

// spread is up to n prefix lengths strictly between lo and hi, evenly
// spaced: the midpoint alone when n is 1.
func spread(lo, hi, n int) []int {
	gaps := min(n+1, hi-lo)
	var out []int
	for i := 1; i < gaps; i++ {
		out = append(out, lo+i*(hi-lo)/gaps)
	}
	return slices.Compact(out)
}
