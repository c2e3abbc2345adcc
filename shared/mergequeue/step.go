package mergequeue

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"time"
)

// RetryInterval is how long a build or a merge may go unanswered before a
// step asks for it again (its effect may have been lost in a crash).
const RetryInterval = 2 * time.Minute

// defaultTimeout applies when a queue has no usable testingTimeoutMinutes.
const defaultTimeout = 300 * time.Minute

// Step advances the queue: it folds in the observations, then moves entries
// along the transitions of contract 3.5 as far as they go at time now. It
// never reads a clock, does no I/O, and makes ids only through newID. The
// snapshot passed in is not changed.
func Step(s Snapshot, obs Observations, now time.Time, newID func() string) (Snapshot, Output) {
	return newMachine(s, now, newID).step(obs)
}

// StepConsuming is Step for a caller that keeps only the snapshot it
// returns, as the simulator does: it writes into s's entries and
// transitions instead of copying them, so s must not be used after the
// call. The result is Step's.
func StepConsuming(s Snapshot, obs Observations, now time.Time, newID func() string) (Snapshot, Output) {
	return consumingMachine(s, now, newID).step(obs)
}

func (m *machine) step(obs Observations) (Snapshot, Output) {
	prObs := &prObservations{prs: obs.PRs}
	if obs.BranchProtection != nil {
		m.s.ProtectionContexts = slices.Clone(obs.BranchProtection.Contexts)
		m.s.ProtectionKnown = true
	}
	m.observeNotified(obs.Notified)
	m.observeMerges(obs.Merges, prObs)
	bumped := m.observePRs(obs.PRs)
	m.observeHead(obs.TargetHeadSHA, bumped)
	m.observeTargets(obs.Targets)
	m.observeBuilds(obs.Builds)
	m.observeChecks(obs.Checks)
	m.timeouts()
	m.direct = obs.Direct
	if len(obs.Evidence) > 0 {
		m.evidence = make(map[string]*RunEvidence, len(obs.Evidence))
	}
	for i := range obs.Evidence {
		m.evidence[obs.Evidence[i].RunID] = &obs.Evidence[i]
	}
	m.settle()
	m.retries(prObs)
	m.settle() // an abandoned merge restarts its entry
	m.retryNotices()
	if m.autopilot() {
		m.settle() // its new settings apply at once
	}
	return m.finish()
}

// prObservations finds a step's observation of a PR by its number. Most
// steps ask for none (only merge outcomes and retried merges do), so the
// map is made at the first question.
type prObservations struct {
	prs []PRObservation
	by  map[int]*PRObservation
}

func (p *prObservations) of(pr int) *PRObservation {
	if p.by == nil {
		p.by = make(map[int]*PRObservation, len(p.prs))
		for i := range p.prs {
			p.by[p.prs[i].Number] = &p.prs[i]
		}
	}
	return p.by[pr]
}

// observeMerges folds in merge outcomes. A failure is believed only when the
// same observations show the PR not merged: a retried merge of a PR that
// the first attempt merged fails too.
func (m *machine) observeMerges(results []MergeResult, prObs *prObservations) {
	for _, r := range results {
		e, ok := m.entryFor(r.PRNumber)
		if !ok || e.Intent == nil || e.Intent.Key != r.Key || !e.Active() {
			continue
		}
		o := prObs.of(r.PRNumber)
		switch {
		case r.Merged:
			m.mergedByQueue(e, r.SHA)
		case o != nil && o.State == PRMerged:
			m.mergedByQueue(e, o.MergeSHA)
		case o != nil:
			e.Intent = nil
			if e.CancelRequested != "" {
				m.cancel(e, e.CancelRequested)
			} else {
				e.Position = 0
				m.transition(e, Failed, ReasonMergeFailed)
			}
		}
	}
}

// mergedByQueue concludes an entry whose merge intent succeeded.
func (m *machine) mergedByQueue(e *Entry, sha string) {
	e.VerifiedByTestRun = e.Intent.RunID
	e.MergeSHA = sha
	e.Intent = nil
	e.CancelRequested = ""
	e.Position = 0
	reason := ReasonMergeGraphMerge
	if r := m.run(e.VerifiedByTestRun); r != nil && r.Direct {
		reason = ReasonDirectMerge
	}
	m.transition(e, Merged, reason)
	// The target head is now our merge; without its sha, the next observed
	// head is adopted as is.
	m.s.TargetHead = sha
}

// observePRs folds in pull request facts: manual merges, cancellations and
// fresh metadata. It reports whether the target branch changed under the
// queue (a manual merge).
func (m *machine) observePRs(prs []PRObservation) (bumped bool) {
	for i := range prs {
		o := &prs[i]
		e, ok := m.entryFor(o.Number)
		if !ok || !e.Active() {
			continue
		}
		if o.State == PRMerged {
			if e.Intent != nil {
				m.mergedByQueue(e, o.MergeSHA)
				continue
			}
			if r := m.run(e.RunID); r != nil {
				m.endRun(r, RunCancelled, ReasonManualMerge)
			}
			e.MergeSHA, e.Position = o.MergeSHA, 0
			m.transition(e, Merged, ReasonManualMerge)
			m.s.BaseEpoch++
			bumped = true
			continue
		}
		first := e.PR.HeadSHA == ""
		reason := ""
		switch {
		case o.State == PRClosed:
			reason = ReasonPRClosed
		case first:
		case o.HeadSHA != "" && o.HeadSHA != e.PR.HeadSHA:
			reason = ReasonPRPushedTo
		case o.Draft && !e.PR.Draft:
			reason = ReasonConvertedDraft
		case e.PR.BaseBranch == m.s.Queue.Branch && o.BaseBranch != "" && o.BaseBranch != m.s.Queue.Branch:
			reason = ReasonBaseChanged
		}
		facts := PRFacts{
			Title: o.Title, Author: o.Author, Mergeability: o.Mergeability, Draft: o.Draft,
			HeadSHA: cmp.Or(o.HeadSHA, e.PR.HeadSHA), BaseBranch: cmp.Or(o.BaseBranch, e.PR.BaseBranch),
		}
		if facts != e.PR { // most observations change nothing: keep Output small
			e.PR = facts
			m.touchEntry(e)
		}
		if reason != "" {
			m.cancel(e, reason)
		}
	}
	return bumped
}

// observeHead compares the target head with the one the queue accounts
// for. A head the queue did not make means every run was built on a stale
// base.
func (m *machine) observeHead(head string, bumped bool) {
	switch {
	case head == "" || head == m.s.TargetHead:
	case m.s.TargetHead == "":
		m.s.TargetHead = head
	default:
		if !bumped {
			m.s.BaseEpoch++
		}
		m.s.TargetHead = head
	}
}

func (m *machine) observeBuilds(builds []BuildResult) {
	for _, b := range builds {
		r := m.run(b.RunID)
		if r == nil || r.Status != RunInProgress || r.HeadSHA != "" {
			continue
		}
		switch {
		case b.ConflictPR != 0:
			r.ConflictPR = b.ConflictPR
			m.runFailed(r, ReasonMergeConflict)
		case b.HeadSHA != "":
			r.HeadSHA = b.HeadSHA
			m.touchRun(r)
		}
	}
}

func (m *machine) observeChecks(checks []RunChecks) {
	for _, c := range checks {
		r := m.run(c.RunID)
		if r == nil || r.Status != RunInProgress || r.HeadSHA == "" || c.SHA != r.HeadSHA {
			continue
		}
		merged := maps.Clone(r.Checks) // runs share maps with the caller's snapshot
		if merged == nil {
			merged = make(map[string]CheckState, len(c.Checks))
		}
		for k, v := range c.Checks {
			if id := r.Stale[k]; id != "" && c.IDs[k] == id {
				continue // the result that failed the run this one retries
			}
			merged[k] = NormalizeCheck(v)
		}
		r.Checks = merged
		m.touchRun(r)
		passed := true
		for _, ctx := range r.RequiredStatuses {
			switch merged[ctx] {
			case CheckFailure:
				r.FailedChecks = failedIDs(r.RequiredStatuses, merged, c.IDs)
				m.runFailed(r, ReasonStatusFailed)
				passed = false
			case CheckSuccess:
			default:
				passed = false
			}
			if r.Status != RunInProgress {
				break
			}
		}
		if passed && r.Status == RunInProgress {
			m.runPassed(r)
		}
	}
}

// failedIDs identifies the failed required results among checks.
func failedIDs(required []string, checks map[string]CheckState, ids map[string]string) map[string]string {
	var out map[string]string
	for _, ctx := range required {
		if id := ids[ctx]; id != "" && checks[ctx] == CheckFailure {
			if out == nil {
				out = map[string]string{}
			}
			out[ctx] = id
		}
	}
	return out
}

func (m *machine) timeouts() {
	limit := time.Duration(m.s.Queue.TestingTimeoutMinutes) * time.Minute
	if limit <= 0 {
		limit = defaultTimeout
	}
	for i := range m.s.Runs {
		r := &m.s.Runs[i]
		if r.Status == RunInProgress && !m.now.Before(r.CreatedAt.Add(limit)) {
			m.runFailed(r, ReasonTimeout)
		}
	}
}

// runFailed ends a failed run. The PR under test goes to PENDING_FAILURE;
// the PRs of a failed batch stay TESTING while bisection looks for the
// culprit; a bisection run's result narrows that search.
func (m *machine) runFailed(r *Run, reason string) {
	m.endRun(r, RunFailed, reason)
	if r.Bisection {
		if b := m.run(r.BisectOf); b != nil && b.Bisect != nil && r.Prefix < b.Bisect.Hi {
			m.editBisect(b, func(bs *Bisection) { bs.Hi, bs.FailRun = r.Prefix, r.ID })
		}
		return
	}
	members := m.underTest(r)
	if len(members) > 1 && reason != ReasonNoRequiredStatuses {
		r.Bisect = &Bisection{Hi: len(r.PRs) - firstUnderTest(r), FailRun: r.ID}
		return
	}
	if len(members) == 1 && m.mayRetry(members[0], reason) {
		// It stays TESTING while test health's evidence is awaited (retry).
		r.EvidenceDue = m.now.Add(time.Duration(m.s.Queue.FlakyEvidenceWaitSeconds) * time.Second)
		return
	}
	for _, e := range members {
		m.transition(e, PendingFailure, reason)
	}
}

// runPassed ends a passed run: its PRs under test pass; a bisection run's
// result narrows the search of its batch.
func (m *machine) runPassed(r *Run) {
	m.endRun(r, RunSucceeded, "")
	if r.Bisection {
		if b := m.run(r.BisectOf); b != nil && b.Bisect != nil && r.Prefix > b.Bisect.Lo {
			m.editBisect(b, func(bs *Bisection) { bs.Lo, bs.PassRun = r.Prefix, r.ID })
		}
		return
	}
	for _, e := range m.underTest(r) {
		m.transition(e, TestsPassed, ReasonTestRunPassed)
	}
}

// underTest is the entries r tests (its PRs under test, in order) that are
// still TESTING on it.
func (m *machine) underTest(r *Run) []*Entry {
	var out []*Entry
	for _, p := range r.PRs {
		if e := m.entryOf(p.EntryID, p.PRNumber); p.UnderTest && e != nil && e.RunID == r.ID && e.State == Testing && e.Episode == p.Episode {
			out = append(out, e)
		}
	}
	return out
}

// firstUnderTest is the index in r.PRs of its first PR under test: the
// PRs ahead come first.
func firstUnderTest(r *Run) int {
	for i, p := range r.PRs {
		if p.UnderTest {
			return i
		}
	}
	return len(r.PRs)
}

// settle applies the queue's rules until nothing more moves. Each pass can
// enable another (a failure restarts the PRs behind, which may start at
// once), and a few passes always suffice; the bound guards against a bug
// turning into a hang.
func (m *machine) settle() {
	for range 16 {
		before := len(m.out.Transitions) + len(m.out.Effects)
		m.switchModes()
		m.deferredCancels()
		m.promoteReady()
		m.bisect()
		m.retry()
		m.evaluateLines()
		m.jumpTheLine()
		m.startRuns()
		if len(m.out.Transitions)+len(m.out.Effects) == before {
			return
		}
	}
}

// switchModes ends SWITCHING_MODES once no entry holds a place in the line.
func (m *machine) switchModes() {
	q := &m.s.Queue
	if q.State == QueueSwitchingModes && !lineBusy(m.s) {
		q.State, q.Mode, q.NextMode = QueueRunning, q.NextMode, ""
	}
}

func (m *machine) deferredCancels() {
	for i := range m.s.Entries {
		e := &m.s.Entries[i]
		if e.Active() && e.Intent == nil && e.CancelRequested != "" {
			reason := e.CancelRequested
			e.CancelRequested = ""
			m.cancel(e, reason)
		}
	}
}

// ready is the readiness rule of contract 3.5: in PARALLEL mode the PR's
// impacted targets must also be known for its head.
func (m *machine) ready(e *Entry) bool {
	return e.PR.HeadSHA != "" && e.PR.Mergeability == Mergeable && !e.PR.Draft &&
		e.PR.BaseBranch == m.s.Queue.Branch && (m.s.Queue.Mode != ModeParallel || e.targetsKnown())
}

func (m *machine) promoteReady() {
	for i := range m.s.Entries {
		e := &m.s.Entries[i]
		if e.State == NotReady && m.ready(e) {
			m.transition(e, Pending, ReasonNowReady)
		}
	}
}

// observeTargets keeps the impacted targets observed for each PR's head.
func (m *machine) observeTargets(obs []TargetsObservation) {
	for _, o := range obs {
		e, ok := m.entryFor(o.PRNumber)
		if !ok || !e.Active() || o.Targets == nil || o.HeadSHA == "" || (e.TargetsSHA == o.HeadSHA && e.Targets != nil) {
			continue
		}
		e.Targets, e.TargetsSHA = o.Targets, o.HeadSHA
		m.touchEntry(e)
	}
}

// line returns the entries that hold a place in the testing line, in
// position order.
func (m *machine) line() []*Entry {
	var line []*Entry
	for i := range m.s.Entries {
		e := &m.s.Entries[i]
		if e.Active() && e.Position > 0 {
			line = append(line, e)
		}
	}
	slices.SortFunc(line, func(a, b *Entry) int { return cmp.Compare(a.Position, b.Position) })
	return line
}

// dependsOn reports whether e is tested on top of the earlier entry x:
// always in SINGLE mode (one lane); in PARALLEL mode when their impacted
// targets intersect (unknown targets intersect everything).
func (m *machine) dependsOn(e, x *Entry) bool {
	if m.s.Queue.Mode != ModeParallel || e.Targets.Intersects(x.Targets) {
		return true
	}
	// Tested on top of it already, as another PR of its batch.
	r := m.run(e.RunID)
	return r != nil && slices.ContainsFunc(r.PRs, func(p RunPR) bool { return p.EntryID == x.ID })
}

// dependencies returns, in PARALLEL mode, for each entry of line the
// indexes (ascending) of the earlier entries it is tested on top of: those
// it depends on and, transitively, theirs. Dependencies only point back,
// so a PR joining the line never changes what the PRs already in it were
// built on, and a failure resets only the PRs that depended on it. In
// SINGLE mode each entry depends on all those ahead of it, and it returns
// nil: the callers walk the line instead, which allocates nothing.
func (m *machine) dependencies(line []*Entry) [][]int {
	if m.s.Queue.Mode != ModeParallel {
		return nil
	}
	deps := make([][]int, len(line))
	for i, e := range line {
		deps[i] = m.closure(line, deps[:i], e)
	}
	return deps
}

// closure is the indexes of the entries of line (whose dependencies are
// deps) that e, coming after all of them, would be tested on top of in
// PARALLEL mode.
func (m *machine) closure(line []*Entry, deps [][]int, e *Entry) []int {
	marked := make([]bool, len(deps))
	for i := range deps {
		if !marked[i] && m.dependsOn(e, line[i]) {
			marked[i] = true
			for _, d := range deps[i] {
				marked[d] = true
			}
		}
	}
	var out []int
	for i, ok := range marked {
		if ok {
			out = append(out, i)
		}
	}
	return out
}

// inLine is the entries of line at idxs that still hold a place in it (an
// entry restarted or failed earlier in the same pass no longer does).
func inLine(line []*Entry, idxs []int) []*Entry {
	out := make([]*Entry, 0, len(idxs))
	for _, i := range idxs {
		if line[i].Active() && line[i].Position > 0 {
			out = append(out, line[i])
		}
	}
	return out
}

// dependents is the entries of line after idx that depend on line[idx],
// in line order: in SINGLE mode (deps nil) all of them.
func dependents(line []*Entry, deps [][]int, idx int) []*Entry {
	if deps == nil {
		return line[idx+1:]
	}
	var out []*Entry
	for j := idx + 1; j < len(line); j++ {
		if _, ok := slices.BinarySearch(deps[j], idx); ok {
			out = append(out, line[j])
		}
	}
	return out
}

// evaluateLines checks each in-flight entry against the PRs it now depends
// on: a run built on anything else restarts; a pending failure with every
// PR it depends on passed fails; a passed PR that depends on nothing
// unmerged merges.
func (m *machine) evaluateLines() {
	line := m.line()
	deps := m.dependencies(line)
	if deps == nil {
		// SINGLE mode: the entries of a batch share their run and what
		// is ahead of it; its walk is made once (walkAhead).
		m.walked = map[*Run][2]int{}
		defer func() { m.walked = nil }()
	}
	var kept []*Entry // SINGLE mode: the entries so far that still hold a place
	for idx, e := range line {
		ahead := kept
		if deps != nil {
			ahead = inLine(line, deps[idx])
		}
		if e.Intent == nil {
			m.evaluate(e, ahead, dependents(line, deps, idx))
		}
		if e.Active() && e.Position > 0 {
			kept = append(kept, e)
		}
	}
}

// evaluate is evaluateLines for one entry without a merge in flight.
func (m *machine) evaluate(e *Entry, ahead, behind []*Entry) {
	var r *Run
	if e.RunID != "" {
		r = m.run(e.RunID)
		if reason, ok := m.valid(r, e, ahead); !ok {
			m.restart(e, reason, false)
			return
		}
	} else if e.State != Pending {
		m.restart(e, ReasonPrerequisiteFailed, false)
		return
	}
	if e.State == Testing && r != nil && r.Status == RunCancelled {
		// Its batch's run was cancelled for another PR of the batch.
		m.restart(e, ReasonPrerequisiteCancelled, false)
		return
	}
	mergeAllowed := m.s.Queue.State != QueuePaused
	rescue := m.optimisticRun(e, ahead, behind)
	switch {
	case e.State == PendingFailure && rescue == nil:
		if allPassed(ahead) && m.depthSatisfied(behind) {
			e.Position = 0
			m.transition(e, Failed, r.Reason)
		}
	case e.State == TestsPassed && len(ahead) == 0 && mergeAllowed:
		m.requestMerge(e, r)
	case rescue != nil && len(ahead) == 0 && mergeAllowed:
		if e.State == Testing {
			// Its own run no longer matters: a later run that contained
			// it passed. TESTS_PASSED first, so the entry takes only the
			// transitions of table 3.5.
			m.endRun(r, RunCancelled, ReasonLaterRunPassed)
			m.transition(e, TestsPassed, ReasonLaterRunPassed)
		}
		m.requestMerge(e, rescue)
	}
}

func allPassed(ahead []*Entry) bool {
	for _, a := range ahead {
		if a.State != TestsPassed {
			return false
		}
	}
	return true
}

// waiting is the PENDING entries that have no place in the line yet, in
// the order they join it.
func (m *machine) waiting() []*Entry {
	var out []*Entry
	for i := range m.s.Entries {
		if e := &m.s.Entries[i]; e.State == Pending && e.Position == 0 {
			out = append(out, e)
		}
	}
	sortWaiting(out)
	return out
}

// optimisticRun is the run that lets e merge optimistically (contract
// 3.7), nil when there is none: with canOptimisticallyMerge and a
// pending-failure depth of at least 1 (with depth 0 a failed PR fails at
// once, so optimistic merge changes nothing, as the commercial queue
// documents), the passed run, in this base epoch, of an entry behind e
// that depends on it, within the depth when e is PENDING_FAILURE, that
// merged e in at its current head on top of exactly what e depends on now
// and what the queue has merged since (so e lands on what that run
// tested).
func (m *machine) optimisticRun(e *Entry, ahead, behind []*Entry) *Run {
	q := m.s.Queue
	if !q.CanOptimisticallyMerge || q.PendingFailureDepth < 1 || (e.State != Testing && e.State != PendingFailure) {
		return nil
	}
	for k, later := range behind {
		if e.State == PendingFailure && k >= q.PendingFailureDepth {
			return nil
		}
		if later.State != TestsPassed {
			continue
		}
		if r := m.run(later.RunID); r != nil && r.Status == RunSucceeded && r.BaseEpoch == m.s.BaseEpoch && m.builtOn(r, e, ahead) {
			return r
		}
	}
	return nil
}

// builtOn reports whether run r merged e in, at its current head, after
// exactly the entries ahead (at theirs) and those the queue merged since.
func (m *machine) builtOn(r *Run, e *Entry, ahead []*Entry) bool {
	differs, short, self := m.walkAhead(r, e, ahead, false)
	return differs == nil && !short && self != nil && !self.UnderTest &&
		self.Episode == e.Episode && self.HeadSHA == e.PR.HeadSHA
}

// walkAhead walks run r up to e's place in it and compares what r merged
// in before e (the PRs ahead, then the PRs of its batch before it), less
// what the queue has merged since, with ahead, in order and at the same
// heads. It returns the first of those PRs that is not the next of ahead
// (nil when none), whether some of ahead was left unmet (short), and e's
// own place in r (nil when r does not hold e).
//
// With resume (e under test in r, from evaluateLines in SINGLE mode), a
// walk of r's PRs ahead of its batch that matched is kept in m.walked
// (the index of its first PR under test, and the entries of ahead it
// met), and the next entry of the batch resumes there: its ahead starts
// with the same entries, as the line only grows during one evaluation.
func (m *machine) walkAhead(r *Run, e *Entry, ahead []*Entry, resume bool) (differs *RunPR, short bool, self *RunPR) {
	k, from := 0, 0
	if w, ok := m.walked[r]; resume && ok && w[1] <= len(ahead) {
		from, k = w[0], w[1]
	}
	for i := from; i < len(r.PRs); i++ {
		p := &r.PRs[i]
		if resume && m.walked != nil && p.UnderTest && from == 0 {
			m.walked[r], from = [2]int{i, k}, i // the batch starts here; nothing differed
		}
		// The PR numbers first: an entry id is one PR's for good (entryOf),
		// and ids of the same length differ only after a call to compare
		// their bytes.
		if p.PRNumber == e.PRNumber && p.EntryID == e.ID {
			self = p
			break
		}
		if k < len(ahead) && ahead[k].PRNumber == p.PRNumber && ahead[k].ID == p.EntryID && ahead[k].Episode == p.Episode && ahead[k].PR.HeadSHA == p.HeadSHA {
			k++ // the common case first: an entry ahead is active, so never merged
			continue
		}
		if !m.mergedByQueueAt(*p) {
			return p, false, nil
		}
	}
	return nil, k != len(ahead), self
}

// mergedByQueueAt reports whether the queue merged p's entry, in p's
// episode, at p's head.
func (m *machine) mergedByQueueAt(p RunPR) bool {
	pe := m.entryOf(p.EntryID, p.PRNumber)
	return pe != nil && pe.Episode == p.Episode && pe.State == Merged &&
		pe.Reason == ReasonMergeGraphMerge && pe.PR.HeadSHA == p.HeadSHA
}

// depthSatisfied is the pending-failure depth rule: the failing PR waits
// until up to PendingFailureDepth PRs behind it (those that depend on it)
// have finished their runs, counting the PRs still waiting to join the
// line behind it.
func (m *machine) depthSatisfied(behind []*Entry) bool {
	depth := m.s.Queue.PendingFailureDepth
	if depth <= 0 {
		return true
	}
	// Fewer PRs behind than the depth while others wait to join the line:
	// wait for them too (the failing PR may be the last of a full line).
	if len(behind) < depth && m.s.Queue.State == QueueRunning && len(m.waiting()) > 0 {
		return false
	}
	n := min(depth, len(behind))
	for _, b := range behind[:n] {
		r := m.run(b.RunID)
		if r == nil || r.Status == RunInProgress {
			return false
		}
	}
	return true
}

// valid reports whether run r of e still predicts what would merge: built
// in the current base epoch, on exactly the PRs now ahead of e (less those
// the queue has merged since), at the same heads. When not, it names why.
func (m *machine) valid(r *Run, e *Entry, ahead []*Entry) (string, bool) {
	if r == nil {
		return ReasonPrerequisiteFailed, false
	}
	if r.BaseEpoch != m.s.BaseEpoch {
		for _, p := range r.PRs {
			if pe := m.entryOf(p.EntryID, p.PRNumber); pe != nil && pe.Episode == p.Episode &&
				pe.State == Merged && pe.Reason == ReasonManualMerge {
				return ReasonPrerequisiteManualMerg, false
			}
		}
		return ReasonManualPush, false
	}
	// What was merged in before e must be exactly what is ahead of it now.
	differs, short, _ := m.walkAhead(r, e, ahead, true)
	switch {
	case differs != nil:
		return missingReason(m.entryOf(differs.EntryID, differs.PRNumber), *differs), false
	case short:
		return ReasonSkipTheLine, false
	}
	return "", true
}

// missingReason names why a PR a run was built on is no longer ahead.
func missingReason(pe *Entry, p RunPR) string {
	if pe == nil || pe.Episode != p.Episode {
		return ReasonPrerequisiteCancelled
	}
	switch pe.State {
	case Failed:
		return ReasonPrerequisiteFailed
	case Cancelled:
		return ReasonPrerequisiteCancelled
	case Merged:
		return ReasonPrerequisiteManualMerg
	case Pending:
		if pe.Reason != ReasonNowReady && pe.Reason != "" {
			return pe.Reason // it restarted; say why it did
		}
	}
	return ReasonSkipTheLine
}

func (m *machine) requestMerge(e *Entry, r *Run) {
	sha := e.PR.HeadSHA
	for _, p := range r.PRs {
		if p.EntryID == e.ID && p.Episode == e.Episode {
			sha = p.HeadSHA // under test, or contained by an optimistic run
		}
	}
	e.Intent = &MergeIntent{
		Key:         "merge/" + e.ID + "/" + strconv.Itoa(e.Episode) + "/" + r.ID,
		RunID:       r.ID,
		SHA:         sha,
		Method:      m.s.Queue.MergeMethod,
		RequestedAt: m.now,
		Attempts:    1,
		BaseEpoch:   m.s.BaseEpoch,
	}
	m.touchEntry(e)
	m.emitMerge(e)
}

func (m *machine) emitMerge(e *Entry) {
	in := e.Intent
	m.out.Effects = append(m.out.Effects, Effect{
		Key:  in.Key,
		Kind: EffectMergePR,
		MergePR: &MergePR{
			EntryID: e.ID, PRNumber: e.PRNumber, SHA: in.SHA, Method: in.Method, RunID: in.RunID, Attempt: in.Attempts,
		},
	})
}

// jumpTheLine lets a waiting urgent (priority 0) PR move ahead of the
// lower-priority PRs in the line: from the first of them on, every entry
// restarts behind it (those behind were tested on top of it).
func (m *machine) jumpTheLine() {
	if m.s.Queue.State != QueueRunning {
		return
	}
	urgent := false
	for i := range m.s.Entries {
		e := &m.s.Entries[i]
		if e.State == Pending && e.Position == 0 && e.Priority == PriorityUrgent {
			urgent = true
			break
		}
	}
	if !urgent {
		return
	}
	// In PARALLEL mode too the whole line behind restarts: simpler than
	// finding which lanes the urgent PR will join, and correct.
	line := m.line()
	j := slices.IndexFunc(line, func(e *Entry) bool { return e.Priority > PriorityUrgent && e.Intent == nil })
	if j < 0 {
		return
	}
	freed := 0
	for _, e := range line[j:] {
		if r := m.run(e.RunID); r != nil && r.Status == RunInProgress {
			freed++
		}
	}
	if m.inProgress()-freed >= m.concurrency() {
		return // the urgent PR would not start anyway
	}
	for _, e := range line[j:] {
		if e.Intent == nil { // in PARALLEL mode another lane's merge may be in flight
			m.restart(e, ReasonSkipTheLine, false)
		}
	}
}

// concurrency is the test runs at once: the queue's setting, or the
// autopilot's choice.
func (m *machine) concurrency() int { return m.s.Limits().Concurrency }

// inProgress counts the test runs in progress that take a concurrency
// slot: bisection runs have their own (bisectionInProgress).
func (m *machine) inProgress() int { return m.runsInProgress(false) }

func (m *machine) bisectionInProgress() int { return m.runsInProgress(true) }

func (m *machine) runsInProgress(bisection bool) int {
	n := 0
	for i := range m.s.Runs {
		if r := &m.s.Runs[i]; r.Status == RunInProgress && r.Bisection == bisection {
			n++
		}
	}
	return n
}

// requiredStatuses are the queue's (an empty list: none), else the branch
// protection's; known is false while neither is set nor observed (the step
// waits).
func (m *machine) requiredStatuses() (contexts []string, source string, known bool) {
	if m.s.Queue.RequiredStatuses != nil {
		return m.s.Queue.RequiredStatuses, SourceMergeInstance, true
	}
	return m.s.ProtectionContexts, SourceBranchProtection, m.s.ProtectionKnown
}

// startRuns fills free testing slots: first the entries restarting in
// place (in line order), then PENDING entries by priority, then submit
// order, each tested on top of the entries of the line it depends on.
func (m *machine) startRuns() {
	q := m.s.Queue
	if q.State == QueuePaused || m.s.TargetHead == "" {
		return
	}
	required, source, known := m.requiredStatuses()
	if !known {
		return
	}
	inProgress := m.inProgress()
	line := m.line()
	deps := m.dependencies(line)
	for idx, e := range line {
		if inProgress >= m.concurrency() {
			return
		}
		if e.State == Pending && e.RunID == "" {
			ahead := line[:idx]
			if deps != nil {
				ahead = inLine(line, deps[idx])
			}
			m.startRun(e, ahead, required, source)
			inProgress++
		}
	}
	if q.State != QueueRunning {
		return // draining: nothing joins the line
	}
	if m.awaitingEvidence() {
		return // nothing joins on top of a PR that may be about to fail (retry.go)
	}
	waiting := m.waiting()
	if len(line) == 0 && len(waiting) > 0 && m.directMerge(waiting[0], required, source) {
		waiting = waiting[1:]
	}
	for len(waiting) > 0 && inProgress < m.concurrency() {
		batch := m.nextBatch(waiting)
		if batch == nil {
			return // a short batch waits to fill
		}
		waiting = waiting[len(batch):]
		var d []int
		for _, e := range batch {
			if deps != nil {
				d = mergeSorted(d, m.closure(line, deps, e))
			}
		}
		ahead := line
		if deps != nil {
			ahead = inLine(line, d)
			for i := range batch { // each depends on the batch's PRs before it too
				deps = append(deps, append(slices.Clone(d), seq(len(line), len(line)+i)...))
			}
		}
		m.startBatch(batch, ahead, required, source)
		line = append(line, batch...)
		inProgress++
	}
}

// nextBatch is the PRs the next test run takes from waiting (in line
// order): one PR, or with batching on up to batchingMinSize (or the
// autopilot's batch size) consecutive PRs of one priority that are not
// noBatch. A batch shorter than that waits for more until its first PR
// has waited batchingMaxWaitTimeMinutes; nil while it waits.
func (m *machine) nextBatch(waiting []*Entry) []*Entry {
	q := m.s.Queue
	size := m.s.Limits().Batch
	if size == 1 || waiting[0].NoBatch {
		return waiting[:1]
	}
	// A batch keeps to one priority: an urgent PR jumping the line restarts
	// the lower-priority PRs, which must not share its run.
	n := 0
	for n < len(waiting) && n < size && !waiting[n].NoBatch && waiting[n].Priority == waiting[0].Priority {
		n++
	}
	wait := time.Duration(q.BatchingMaxWaitTimeMinutes) * time.Minute
	if n < size && n == len(waiting) && m.now.Before(waiting[0].StateChangedAt.Add(wait)) {
		return nil
	}
	return waiting[:n]
}

// seq is lo, lo+1, …, hi-1.
func seq(lo, hi int) []int {
	out := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

// mergeSorted is the sorted union of two sorted index lists.
func mergeSorted(a, b []int) []int {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// sortWaiting orders PENDING entries as they join the line: by priority,
// then submit order.
func sortWaiting(waiting []*Entry) {
	slices.SortFunc(waiting, func(a, b *Entry) int {
		return cmp.Or(cmp.Compare(a.Priority, b.Priority), cmp.Compare(a.Seq, b.Seq))
	})
}

// DirectMergeCandidate is the PR direct merge would take next, and its
// head, for the driver to ask GitHub about (Observations.Direct): with
// directMergeMode ALWAYS on a RUNNING queue whose testing line is empty,
// the first PR in line order that is PENDING, or NOT_READY (it may become
// ready in the step the observation feeds), at its head as observed in
// prs (the same observations) or else as last known.
func DirectMergeCandidate(s Snapshot, prs []PRObservation) (pr int, head string, ok bool) {
	if s.Queue.DirectMergeMode != DirectMergeAlways || s.Queue.State != QueueRunning {
		return 0, "", false
	}
	var waiting []*Entry
	for i := range s.Entries {
		e := &s.Entries[i]
		if e.Active() && e.Position > 0 {
			return 0, "", false
		}
		if (e.State == Pending || e.State == NotReady) && e.Position == 0 {
			waiting = append(waiting, e)
		}
	}
	if len(waiting) == 0 {
		return 0, "", false
	}
	sortWaiting(waiting)
	e := waiting[0]
	head = e.PR.HeadSHA
	for _, o := range prs {
		if o.Number == e.PRNumber && o.HeadSHA != "" {
			head = o.HeadSHA
		}
	}
	return e.PRNumber, head, head != ""
}

// directMerge merges e without a test run when the observation shows it up
// to date with the target head the queue accounts for and its own required
// statuses passed on its head (contract 3.7): a run of its head alone,
// passed as it is made, which the merge is pinned to.
func (m *machine) directMerge(e *Entry, required []string, source string) bool {
	o := m.direct
	if m.s.Queue.DirectMergeMode != DirectMergeAlways || o == nil || o.PRNumber != e.PRNumber || !o.UpToDate ||
		o.HeadSHA != e.PR.HeadSHA || o.TargetSHA != m.s.TargetHead || len(required) == 0 {
		return false
	}
	for _, ctx := range required {
		if NormalizeCheck(o.Checks[ctx]) != CheckSuccess {
			return false
		}
	}
	m.direct = nil // used once
	r := m.addRun(Run{
		ID: m.newID(), EntryID: e.ID, PRNumber: e.PRNumber, Direct: true,
		PRs:     []RunPR{{EntryID: e.ID, Episode: e.Episode, PRNumber: e.PRNumber, HeadSHA: e.PR.HeadSHA, Title: e.PR.Title, UnderTest: true}},
		BaseSHA: m.s.TargetHead, BaseEpoch: m.s.BaseEpoch, HeadSHA: e.PR.HeadSHA,
		Status: RunSucceeded, CreatedAt: m.now, EndedAt: m.now,
		RequiredStatuses: required, RequiredStatusesSource: source, Checks: checkStates(o.Checks),
	})
	e.RunID = r.ID
	m.s.NextPosition++
	e.Position = m.s.NextPosition
	m.transition(e, Testing, ReasonDirectChecksPassed)
	m.transition(e, TestsPassed, ReasonDirectChecksPassed)
	return true
}

func checkStates(checks map[string]string) map[string]CheckState {
	out := make(map[string]CheckState, len(checks))
	for k, v := range checks {
		out[k] = NormalizeCheck(v)
	}
	return out
}

// startRun creates a run of e on top of the entries ahead and asks for its
// test branch.
func (m *machine) startRun(e *Entry, ahead []*Entry, required []string, source string) {
	m.startBatch([]*Entry{e}, ahead, required, source)
}

// startBatch creates one run of the PRs of batch, in order, on top of the
// entries ahead, and asks for its test branch; the run is the last PR's.
func (m *machine) startBatch(batch, ahead []*Entry, required []string, source string) {
	id := m.newID()
	prs := runPRs(ahead, batch)
	last := batch[len(batch)-1]
	n := strconv.Itoa(last.PRNumber)
	r := m.addRun(Run{
		ID: id, EntryID: last.ID, PRNumber: last.PRNumber,
		TestBranch: TestBranchPrefix + "pr-" + n + "/" + id,
		TempBranch: "trunk-temp/pr-" + n + "/" + id,
		PRs:        prs, BaseSHA: m.s.TargetHead, BaseEpoch: m.s.BaseEpoch,
		Status: RunInProgress, CreatedAt: m.now, BuildRequestedAt: m.now, BuildAttempts: 1,
		RequiredStatuses: required, RequiredStatusesSource: source,
	})
	if len(batch) == 1 {
		r.RetriesTaken = last.Retries
		if last.RetryOf != "" {
			m.repeat(r, m.run(last.RetryOf))
		}
	}
	for _, e := range batch {
		e.RunID, e.RetryOf = id, ""
		if e.Position == 0 {
			m.s.NextPosition++
			e.Position = m.s.NextPosition
		}
		m.transition(e, Testing, ReasonTestRunStarted)
	}
	if len(required) == 0 && source == SourceBranchProtection {
		// Nothing could ever pass; no branch was built, so none to delete.
		// (A queue's own empty list requires nothing: the run passes once
		// its branch is built.)
		r.Status, r.Reason, r.EndedAt = RunFailed, ReasonNoRequiredStatuses, m.now
		for _, e := range batch {
			m.transition(e, PendingFailure, ReasonNoRequiredStatuses)
		}
		return
	}
	m.emitBuild(r)
}

// runPRs lists the PRs a run merges in: those ahead, then those under test.
func runPRs(ahead, under []*Entry) []RunPR {
	prs := make([]RunPR, 0, len(ahead)+len(under))
	for _, a := range ahead {
		prs = append(prs, RunPR{EntryID: a.ID, Episode: a.Episode, PRNumber: a.PRNumber, HeadSHA: a.PR.HeadSHA, Title: a.PR.Title})
	}
	for _, e := range under {
		prs = append(prs, RunPR{EntryID: e.ID, Episode: e.Episode, PRNumber: e.PRNumber, HeadSHA: e.PR.HeadSHA, Title: e.PR.Title, UnderTest: true})
	}
	return prs
}

func (m *machine) emitBuild(r *Run) {
	m.out.Effects = append(m.out.Effects, Effect{
		Key:  "build/" + r.ID,
		Kind: EffectStartRun,
		StartRun: &StartRun{
			RunID: r.ID, TempBranch: r.TempBranch, TestBranch: r.TestBranch, BaseSHA: r.BaseSHA, Heads: r.PRs,
			ReuseSHA: r.ReuseSHA, OpenTestPR: m.s.Queue.CreatePrsForTestingBranches,
		},
	})
}

// retries asks again for builds and merges whose outcome has not come back
// within RetryInterval. Both are safe to repeat: a build recreates the same
// branches, and a merge is pinned to a head GitHub merges at most once. A
// merge is not repeated once the target branch changed under the queue
// (its base is no longer the tested one): if the PR is seen unmerged, the
// intent is dropped and the entry restarts (or is cancelled, if that was
// asked for meanwhile: a PR closed while its merge was in flight).
func (m *machine) retries(prObs *prObservations) {
	for i := range m.s.Runs {
		r := &m.s.Runs[i]
		if r.Status == RunInProgress && r.HeadSHA == "" && !m.now.Before(r.BuildRequestedAt.Add(RetryInterval)) {
			r.BuildRequestedAt = m.now
			r.BuildAttempts++
			m.touchRun(r)
			m.emitBuild(r)
		}
	}
	if m.s.Queue.State == QueuePaused {
		return
	}
	for i := range m.s.Entries {
		e := &m.s.Entries[i]
		if e.Active() && e.Intent != nil && !m.now.Before(e.Intent.RequestedAt.Add(RetryInterval)) {
			if e.Intent.BaseEpoch != m.s.BaseEpoch {
				// Seen unmerged (open, or closed meanwhile): the merge
				// did not happen and will not be repeated.
				if o := prObs.of(e.PRNumber); o != nil && o.State != PRMerged {
					e.Intent = nil
					if reason := e.CancelRequested; reason != "" {
						e.CancelRequested = ""
						m.cancel(e, reason)
					} else {
						m.restart(e, ReasonManualPush, false)
					}
				}
				continue
			}
			in := *e.Intent
			in.RequestedAt = m.now
			in.Attempts++
			e.Intent = &in
			m.touchEntry(e)
			m.emitMerge(e)
		}
	}
}
