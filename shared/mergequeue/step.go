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
	m := newMachine(s, now, newID)
	prObs := make(map[int]*PRObservation, len(obs.PRs))
	for i := range obs.PRs {
		prObs[obs.PRs[i].Number] = &obs.PRs[i]
	}
	if obs.BranchProtection != nil {
		m.s.ProtectionContexts = slices.Clone(obs.BranchProtection.Contexts)
		m.s.ProtectionKnown = true
	}
	m.observeMerges(obs.Merges, prObs)
	bumped := m.observePRs(obs.PRs)
	m.observeHead(obs.TargetHeadSHA, bumped)
	m.observeBuilds(obs.Builds)
	m.observeChecks(obs.Checks)
	m.timeouts()
	m.settle()
	m.retries(prObs)
	m.settle() // an abandoned merge restarts its entry
	return m.finish()
}

// observeMerges folds in merge outcomes. A failure is believed only when the
// same observations show the PR not merged: a retried merge of a PR that
// the first attempt merged fails too.
func (m *machine) observeMerges(results []MergeResult, prObs map[int]*PRObservation) {
	for _, r := range results {
		e, ok := m.entryFor(r.PRNumber)
		if !ok || e.Intent == nil || e.Intent.Key != r.Key || !e.Active() {
			continue
		}
		o := prObs[r.PRNumber]
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
	m.transition(e, Merged, ReasonMergeGraphMerge)
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
			merged[k] = NormalizeCheck(v)
		}
		r.Checks = merged
		m.touchRun(r)
		passed := true
		for _, ctx := range r.RequiredStatuses {
			switch merged[ctx] {
			case CheckFailure:
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

func (m *machine) runFailed(r *Run, reason string) {
	m.endRun(r, RunFailed, reason)
	if e := m.entryByIDPtr(r.EntryID); e != nil && e.RunID == r.ID && e.State == Testing {
		m.transition(e, PendingFailure, reason)
	}
}

func (m *machine) runPassed(r *Run) {
	m.endRun(r, RunSucceeded, "")
	if e := m.entryByIDPtr(r.EntryID); e != nil && e.RunID == r.ID && e.State == Testing {
		m.transition(e, TestsPassed, ReasonTestRunPassed)
	}
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

// ready is the readiness rule of contract 3.5 for SINGLE mode.
func (m *machine) ready(e *Entry) bool {
	return e.PR.HeadSHA != "" && e.PR.Mergeability == Mergeable && !e.PR.Draft &&
		e.PR.BaseBranch == m.s.Queue.Branch
}

func (m *machine) promoteReady() {
	for i := range m.s.Entries {
		e := &m.s.Entries[i]
		if e.State == NotReady && m.ready(e) {
			m.transition(e, Pending, ReasonNowReady)
		}
	}
}

// lanes returns the testing lines: the entries that hold a place, in
// position order. SINGLE mode has one lane. PARALLEL mode will split it by
// impacted targets; until then it runs as one lane, which is correct (every
// PR is tested on top of all those ahead) but not parallel.
func (m *machine) lanes() [][]*Entry {
	var line []*Entry
	for i := range m.s.Entries {
		e := &m.s.Entries[i]
		if e.Active() && e.Position > 0 {
			line = append(line, e)
		}
	}
	slices.SortFunc(line, func(a, b *Entry) int { return cmp.Compare(a.Position, b.Position) })
	return [][]*Entry{line}
}

// evaluateLines checks each in-flight entry against the PRs now ahead of
// it: a run built on anything else restarts; a pending failure with every
// PR ahead passed fails; the first passed PR of a line merges.
func (m *machine) evaluateLines() {
	mergeAllowed := m.s.Queue.State != QueuePaused
	for _, line := range m.lanes() {
		ahead := make([]*Entry, 0, len(line))
		for idx, e := range line {
			if e.Intent != nil {
				ahead = append(ahead, e)
				continue
			}
			var r *Run
			if e.RunID != "" {
				r = m.run(e.RunID)
				if reason, ok := m.valid(r, e, ahead); !ok {
					m.restart(e, reason, false)
					continue
				}
			} else if e.State != Pending {
				m.restart(e, ReasonPrerequisiteFailed, false)
				continue
			}
			rescue := m.optimisticRun(line, idx)
			switch {
			case e.State == PendingFailure && rescue == nil:
				if allPassed(ahead) && m.depthSatisfied(line[idx+1:]) {
					e.Position = 0
					m.transition(e, Failed, r.Reason)
					continue
				}
			case e.State == TestsPassed && len(ahead) == 0 && mergeAllowed:
				m.requestMerge(e, r)
			case rescue != nil && len(ahead) == 0 && mergeAllowed:
				if e.State == Testing {
					// Its own run no longer matters: a later run that
					// contained it passed. TESTS_PASSED first, so the
					// entry takes only the transitions of table 3.5.
					m.endRun(r, RunCancelled, ReasonLaterRunPassed)
					m.transition(e, TestsPassed, ReasonLaterRunPassed)
				}
				m.requestMerge(e, rescue)
			}
			ahead = append(ahead, e)
		}
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

// optimisticRun is the run that lets line[idx] merge optimistically
// (contract 3.7), nil when there is none: with canOptimisticallyMerge and a
// pending-failure depth of at least 1 (with depth 0 a failed PR fails at
// once, so optimistic merge changes nothing, as the commercial queue
// documents), the passed run of a later entry of the line that contained
// line[idx] and every entry between them at the heads they have now, in
// this base epoch. Each PENDING_FAILURE entry it rescues must be within
// the depth of it; entries between that wait to restart (PENDING) stop
// the search, since their place in the line is being retested.
func (m *machine) optimisticRun(line []*Entry, idx int) *Run {
	q := m.s.Queue
	e := line[idx]
	if !q.CanOptimisticallyMerge || q.PendingFailureDepth < 1 || (e.State != Testing && e.State != PendingFailure) {
		return nil
	}
	for j := idx + 1; j < len(line); j++ {
		if !line[j-1].State.inFlight() {
			return nil
		}
		later := line[j]
		if later.State != TestsPassed {
			continue
		}
		r := m.run(later.RunID)
		if r != nil && r.Status == RunSucceeded && r.BaseEpoch == m.s.BaseEpoch &&
			containsAll(r, line[idx:j]) && pendingFailuresWithin(line[idx:j], j-idx, q.PendingFailureDepth) {
			return r
		}
	}
	return nil
}

// containsAll reports whether run r merged each of es in, at its current
// head and episode, ahead of the PR it tested.
func containsAll(r *Run, es []*Entry) bool {
	for _, e := range es {
		if !slices.ContainsFunc(r.PRs, func(p RunPR) bool {
			return !p.UnderTest && p.EntryID == e.ID && p.Episode == e.Episode && p.HeadSHA == e.PR.HeadSHA
		}) {
			return false
		}
	}
	return true
}

// pendingFailuresWithin reports whether every PENDING_FAILURE entry of es
// (the entries from the one to merge up to the passing one, which is dist
// places behind es[0]) is at most depth places ahead of the passing entry.
func pendingFailuresWithin(es []*Entry, dist, depth int) bool {
	for k, e := range es {
		if e.State == PendingFailure && dist-k > depth {
			return false
		}
	}
	return true
}

// depthSatisfied is the pending-failure depth rule: the failing PR waits
// until up to PendingFailureDepth PRs behind it have finished their runs.
func (m *machine) depthSatisfied(behind []*Entry) bool {
	n := min(m.s.Queue.PendingFailureDepth, len(behind))
	for _, b := range behind[:max(n, 0)] {
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
			if pe := m.entryByIDPtr(p.EntryID); pe != nil && pe.Episode == p.Episode &&
				pe.State == Merged && pe.Reason == ReasonManualMerge {
				return ReasonPrerequisiteManualMerg, false
			}
		}
		return ReasonManualPush, false
	}
	k := 0
	for _, p := range r.PRs {
		if p.UnderTest {
			continue
		}
		pe := m.entryByIDPtr(p.EntryID)
		if pe != nil && pe.Episode == p.Episode && pe.State == Merged &&
			pe.Reason == ReasonMergeGraphMerge && pe.PR.HeadSHA == p.HeadSHA {
			continue
		}
		if k >= len(ahead) || ahead[k].ID != p.EntryID || ahead[k].Episode != p.Episode ||
			ahead[k].PR.HeadSHA != p.HeadSHA {
			return missingReason(pe, p), false
		}
		k++
	}
	if k != len(ahead) {
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
	inProgress := m.inProgress()
	for _, line := range m.lanes() {
		j := slices.IndexFunc(line, func(e *Entry) bool { return e.Priority > PriorityUrgent && e.Intent == nil })
		if j < 0 {
			continue
		}
		freed := 0
		for _, e := range line[j:] {
			if r := m.run(e.RunID); r != nil && r.Status == RunInProgress {
				freed++
			}
		}
		if inProgress-freed >= m.concurrency() {
			continue // the urgent PR would not start anyway
		}
		for _, e := range line[j:] {
			m.restart(e, ReasonSkipTheLine, false)
		}
		inProgress -= freed
	}
}

func (m *machine) concurrency() int { return max(m.s.Queue.Concurrency, 1) }

func (m *machine) inProgress() int {
	n := 0
	for i := range m.s.Runs {
		if m.s.Runs[i].Status == RunInProgress {
			n++
		}
	}
	return n
}

// requiredStatuses are the queue's, else the branch protection's; known is
// false while neither is set nor observed (the step waits).
func (m *machine) requiredStatuses() (contexts []string, source string, known bool) {
	if len(m.s.Queue.RequiredStatuses) > 0 {
		return m.s.Queue.RequiredStatuses, SourceMergeInstance, true
	}
	return m.s.ProtectionContexts, SourceBranchProtection, m.s.ProtectionKnown
}

// startRuns fills free testing slots: first the entries restarting in
// place (in line order), then PENDING entries by priority, then submit
// order, each tested on top of the whole line ahead of it.
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
	for _, line := range m.lanes() {
		for idx, e := range line {
			if inProgress >= m.concurrency() {
				return
			}
			if e.State == Pending && e.RunID == "" {
				m.startRun(e, line[:idx], required, source)
				inProgress++
			}
		}
		if q.State != QueueRunning || inProgress >= m.concurrency() {
			continue // draining: nothing joins the line; or no slot is free
		}
		var waiting []*Entry
		for i := range m.s.Entries {
			e := &m.s.Entries[i]
			if e.State == Pending && e.Position == 0 {
				waiting = append(waiting, e)
			}
		}
		slices.SortFunc(waiting, func(a, b *Entry) int {
			return cmp.Or(cmp.Compare(a.Priority, b.Priority), cmp.Compare(a.Seq, b.Seq))
		})
		for _, e := range waiting {
			if inProgress >= m.concurrency() {
				return
			}
			m.startRun(e, line, required, source)
			line = append(line, e)
			inProgress++
		}
	}
}

// startRun creates a run of e on top of the entries ahead and asks for its
// test branch.
func (m *machine) startRun(e *Entry, ahead []*Entry, required []string, source string) {
	id := m.newID()
	prs := make([]RunPR, 0, len(ahead)+1)
	for _, a := range ahead {
		prs = append(prs, RunPR{EntryID: a.ID, Episode: a.Episode, PRNumber: a.PRNumber, HeadSHA: a.PR.HeadSHA, Title: a.PR.Title})
	}
	prs = append(prs, RunPR{EntryID: e.ID, Episode: e.Episode, PRNumber: e.PRNumber, HeadSHA: e.PR.HeadSHA, Title: e.PR.Title, UnderTest: true})
	n := strconv.Itoa(e.PRNumber)
	r := m.addRun(Run{
		ID: id, EntryID: e.ID, PRNumber: e.PRNumber,
		TestBranch: "trunk-merge/pr-" + n + "/" + id,
		TempBranch: "trunk-temp/pr-" + n + "/" + id,
		PRs:        prs, BaseSHA: m.s.TargetHead, BaseEpoch: m.s.BaseEpoch,
		Status: RunInProgress, CreatedAt: m.now, BuildRequestedAt: m.now, BuildAttempts: 1,
		RequiredStatuses: required, RequiredStatusesSource: source,
	})
	e.RunID = id
	if e.Position == 0 {
		m.s.NextPosition++
		e.Position = m.s.NextPosition
	}
	m.transition(e, Testing, ReasonTestRunStarted)
	if len(required) == 0 {
		// Nothing could ever pass; no branch was built, so none to delete.
		r.Status, r.Reason, r.EndedAt = RunFailed, ReasonNoRequiredStatuses, m.now
		m.transition(e, PendingFailure, ReasonNoRequiredStatuses)
		return
	}
	m.emitBuild(r)
}

func (m *machine) emitBuild(r *Run) {
	m.out.Effects = append(m.out.Effects, Effect{
		Key:  "build/" + r.ID,
		Kind: EffectStartRun,
		StartRun: &StartRun{
			RunID: r.ID, TempBranch: r.TempBranch, TestBranch: r.TestBranch, BaseSHA: r.BaseSHA, Heads: r.PRs,
		},
	})
}

// retries asks again for builds and merges whose outcome has not come back
// within RetryInterval. Both are safe to repeat: a build recreates the same
// branches, and a merge is pinned to a head GitHub merges at most once. A
// merge is not repeated once the target branch changed under the queue
// (its base is no longer the tested one): if the PR is seen still open and
// unmerged, the intent is dropped and the entry restarts.
func (m *machine) retries(prObs map[int]*PRObservation) {
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
				if o := prObs[e.PRNumber]; o != nil && o.State == PROpen {
					e.Intent = nil
					m.restart(e, ReasonManualPush, false)
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
