package mergequeue

import (
	"slices"
	"strconv"
	"time"
)

// machine applies one command or one step to a private copy of a snapshot,
// recording transitions and effects as it goes.
type machine struct {
	s     Snapshot
	now   time.Time
	newID func() string
	out   Output

	// entryByPR indexes s.Entries; an entry is found by id through its
	// PR (entryOf): an index by id would hash every entry's long id on
	// every step, the larger part of a step on a queue that keeps a day
	// of finished entries.
	entryByPR prIndex
	runByID   map[string]int

	changedEntries []int // indexes into s.Entries, in first-change order
	entrySeen      map[int]bool
	changedRuns    []int
	runSeen        map[int]bool
	lastSeq        map[string]int64 // entry id → its last transition in this call
	direct         *DirectObservation
	evidence       map[string]*RunEvidence // by run id
	// walked holds, during one evaluateLines in SINGLE mode, where walks
	// of runs' PRs ahead of their batch ended (walkAhead).
	// Keyed by the run's place in s.Runs, not its long id, which every
	// entry of the line would hash.
	walked map[*Run][2]int
}

func newMachine(s Snapshot, now time.Time, newID func() string) *machine {
	return index(&machine{s: clone(s), now: now.UTC(), newID: newID})
}

// index makes m's indexes of its snapshot and its empty records.
func index(m *machine) *machine {
	m.entryByPR = newPRIndex(m.s.Entries)
	m.runByID = make(map[string]int, len(m.s.Runs))
	for i := range m.s.Runs {
		m.runByID[m.s.Runs[i].ID] = i
	}
	m.entrySeen = map[int]bool{}
	m.runSeen = map[int]bool{}
	m.lastSeq = map[string]int64{}
	return m
}

// clone copies every slice the machine may write into, so the caller's
// snapshot is never changed. Transitions are only appended to and cut from
// the front, so clipping them is enough: the first append copies. Maps and
// slices inside runs and entries are replaced, never written, so they may
// be shared.
func clone(s Snapshot) Snapshot {
	c := cloneRuns(s)
	c.Entries = slices.Clone(s.Entries)
	c.Transitions = slices.Clip(s.Transitions)
	return c
}

// cloneRuns is clone less the entries and transitions: for a machine
// whose caller gives up its snapshot (consumingMachine), which writes the
// entries in place and appends the transitions in place.
func cloneRuns(s Snapshot) Snapshot {
	c := s
	c.Runs = slices.Clone(s.Runs)
	if s.Autopilot != nil {
		a := *s.Autopilot
		a.Changes = slices.Clip(a.Changes)
		c.Autopilot = &a
	}
	return c
}

// consumingMachine is newMachine for a caller that keeps only the snapshot
// the call returns, as the simulator does (StepConsuming,
// SubmitConsuming): a queue keeps a day of finished entries and
// MaxKeptTransitions transitions, and copying them was most of a
// simulated step.
func consumingMachine(s Snapshot, now time.Time, newID func() string) *machine {
	return index(&machine{s: cloneRuns(s), now: now.UTC(), newID: newID})
}

func (m *machine) entryFor(pr int) (*Entry, bool) {
	i, ok := m.entryByPR.get(pr)
	if !ok {
		return nil, false
	}
	return &m.s.Entries[i], true
}

// entryOf is the entry with id, nil when there is none; pr is the PR the
// entry belongs to (an entry id is one PR's for good: a resubmit keeps it),
// as the run or run PR that names the id records it.
func (m *machine) entryOf(id string, pr int) *Entry {
	e, ok := m.entryFor(pr)
	if !ok || e.ID != id {
		return nil
	}
	return e
}

func (m *machine) run(id string) *Run {
	i, ok := m.runByID[id]
	if !ok || id == "" {
		return nil
	}
	return &m.s.Runs[i]
}

func (m *machine) touchEntry(e *Entry) {
	i, _ := m.entryByPR.get(e.PRNumber)
	if !m.entrySeen[i] {
		m.entrySeen[i] = true
		m.changedEntries = append(m.changedEntries, i)
	}
}

func (m *machine) touchRun(r *Run) {
	i := m.runByID[r.ID]
	if !m.runSeen[i] {
		m.runSeen[i] = true
		m.changedRuns = append(m.changedRuns, i)
	}
}

func (m *machine) addEntry(e Entry) *Entry {
	m.s.Entries = append(m.s.Entries, e)
	i := len(m.s.Entries) - 1
	m.entryByPR.set(e.PRNumber, i)
	return &m.s.Entries[i]
}

func (m *machine) addRun(r Run) *Run {
	m.s.Runs = append(m.s.Runs, r)
	i := len(m.s.Runs) - 1
	m.runByID[r.ID] = i
	m.touchRun(&m.s.Runs[i])
	if !r.Direct {
		m.apRunStarted()
	}
	return &m.s.Runs[i]
}

// transition moves e to state to, records it, and emits its webhook event.
func (m *machine) transition(e *Entry, to PRState, reason string) {
	from := e.State
	e.State = to
	e.StateChangedAt = m.now
	e.Reason = reason
	m.s.NextTransition++
	t := Transition{
		Seq: m.s.NextTransition, EntryID: e.ID, PRNumber: e.PRNumber, Episode: e.Episode,
		From: from, To: to, Reason: reason, RunID: e.RunID, At: m.now,
	}
	if r := m.run(e.RunID); r != nil && r.Bisection {
		t.Bisection = true
	}
	m.out.Transitions = append(m.out.Transitions, t)
	m.s.Transitions = append(m.s.Transitions, t)
	m.touchEntry(e)
	m.lastSeq[e.ID] = t.Seq
	m.apConcluded(from, to, reason)
	if ev := m.event(e, t); ev != nil {
		m.out.Effects = append(m.out.Effects, Effect{Key: ev.ID, Kind: EffectEvent, Event: ev})
		if bev := m.batchEvent(e, ev); bev != nil {
			m.out.Effects = append(m.out.Effects, Effect{Key: bev.ID, Kind: EffectEvent, Event: bev})
		}
	}
}

// batchEvent is the pull_request_batch.* twin of ev (contract 4), nil
// unless e's run tests several PRs and e is the last of them: a batch
// event fires when the last PR of the batch reaches the state.
func (m *machine) batchEvent(e *Entry, ev *Event) *Event {
	r := m.run(e.RunID)
	if r == nil || ev.Action == "submitted" || ev.Action == "queued" {
		return nil
	}
	var prs []int
	last := ""
	for _, p := range r.PRs {
		if p.UnderTest {
			prs, last = append(prs, p.PRNumber), p.EntryID
		}
	}
	if len(prs) < 2 || last != e.ID {
		return nil
	}
	b := *ev
	b.ID = "event/batch/" + r.ID + "/" + ev.Action + "/" + strconv.FormatInt(m.s.NextTransition, 10)
	b.Type = "pull_request_batch." + ev.Action
	b.PRNumbers, b.PRNumbersInBatch = prs, prs
	b.TestBranch, b.TestBranchSHA = r.TestBranch, r.HeadSHA
	b.Batched = nil
	b.IsBisection = nil
	if ev.Action == "testing" || ev.Action == "failed" || ev.Action == "canceled" {
		bis := r.Bisection
		b.IsBisection = &bis
	}
	return &b
}

// event is the contract-4 event of transition t, nil for TESTS_PASSED (the
// public service has no such event).
func (m *machine) event(e *Entry, t Transition) *Event {
	q := m.s.Queue
	ev := &Event{
		ID:           "event/" + e.ID + "/" + strconv.FormatInt(t.Seq, 10),
		Timestamp:    t.At,
		Repository:   q.Repo,
		TargetBranch: q.Branch,
		PRNumber:     e.PRNumber,
		Author:       e.PR.Author,
	}
	no := false
	runFields := func() {
		if r := m.run(e.RunID); r != nil {
			ev.TestBranch, ev.TestBranchSHA = r.TestBranch, r.HeadSHA
			batched := countUnderTest(r) > 1
			bis := r.Bisection
			ev.Batched, ev.IsBisection = &batched, &bis
		} else {
			ev.Batched, ev.IsBisection = &no, &no
		}
	}
	switch t.To {
	case NotReady:
		ev.Action, ev.SubmittedReason = "submitted", t.Reason
	case Pending:
		ev.Action, ev.QueuedReason = "queued", t.Reason
		if r := m.run(e.RunID); r != nil && r.Evidence != nil && (t.Reason == ReasonRetryKnownFlaky || t.Reason == ReasonRetryFailure) {
			ev.FlakyTests = r.Evidence.names()
		}
	case Testing:
		ev.Action = "testing"
		runFields()
	case PendingFailure:
		ev.Action, ev.FailureReason = "pending_failure", t.Reason
		runFields()
	case Failed:
		ev.Action, ev.FailureReason = "failed", t.Reason
		runFields()
	case Cancelled:
		ev.Action, ev.CancellationReason = "canceled", t.Reason
		runFields()
	case Merged:
		ev.Action, ev.MergedReason = "merged", t.Reason
	default:
		return nil
	}
	ev.Type, ev.Status = "pull_request."+ev.Action, ev.Action
	return ev
}

func countUnderTest(r *Run) int {
	n := 0
	for _, p := range r.PRs {
		if p.UnderTest {
			n++
		}
	}
	return n
}

// endRun ends an in-progress run and asks for its branches to go.
func (m *machine) endRun(r *Run, status RunStatus, reason string) {
	if r.Status != RunInProgress {
		return
	}
	r.Status, r.Reason, r.EndedAt = status, reason, m.now
	m.touchRun(r)
	m.apRunEnded(r, status)
	m.out.Effects = append(m.out.Effects, Effect{
		Key:  "delete/" + r.ID,
		Kind: EffectDeleteBranches,
		DeleteBranches: &DeleteBranches{
			RunID: r.ID, Branches: []string{r.TestBranch, r.TempBranch},
			CloseTestPR: m.s.Queue.CreatePrsForTestingBranches && !r.Direct,
		},
	})
}

// statusLine is the commit status shown on a PR head for an entry state.
func statusLine(e *Entry) (state, desc string) {
	switch e.State {
	case NotReady:
		return "pending", "Submitted: waiting for the pull request to be ready"
	case Pending:
		return "pending", "Queued"
	case Testing:
		return "pending", "Testing"
	case TestsPassed:
		return "pending", "Tests passed: waiting to merge"
	case PendingFailure:
		return "pending", "Tests failed: waiting for the pull requests ahead"
	case Merged:
		return "success", "Merged"
	case Failed:
		return "failure", "Failed: " + e.Reason
	default:
		return "error", "Cancelled: " + e.Reason
	}
}

// finish completes the call: one commit status per changed entry, pruning,
// and the new version.
func (m *machine) finish() (Snapshot, Output) {
	s := &m.s
	if s.Queue.StatusCheckEnabled {
		ctx := "Trunk Merge Queue (" + s.Queue.Branch + ")"
		for _, i := range m.changedEntries {
			e := &s.Entries[i]
			seq, moved := m.lastSeq[e.ID]
			if e.PR.HeadSHA == "" || !moved {
				continue
			}
			state, desc := statusLine(e)
			m.out.Effects = append(m.out.Effects, Effect{
				Key:  "status/" + e.ID + "/" + strconv.FormatInt(seq, 10),
				Kind: EffectSetStatus,
				SetStatus: &SetStatus{
					PRNumber: e.PRNumber, SHA: e.PR.HeadSHA, Context: ctx, State: state, Description: desc,
				},
			})
		}
	}
	m.notices()
	for _, i := range m.changedEntries {
		m.out.Entries = append(m.out.Entries, s.Entries[i])
	}
	for _, i := range m.changedRuns {
		m.out.Runs = append(m.out.Runs, s.Runs[i])
	}
	if n := len(s.Transitions) - MaxKeptTransitions; n > 0 {
		s.Transitions = s.Transitions[n:] // never written in place: shared
	}
	m.prune()
	s.Version++
	return m.s, m.out
}

// FinishedRetention is how long a finished entry stays in the snapshot. The
// driver keeps entries as their own items (Output.Entries), so a resubmit
// after that passes the stored id in SubmitRequest.EntryID.
const FinishedRetention = 24 * time.Hour

// prune drops runs that have ended and are no entry's current run (nor
// the passing or failing prefix run of a batch being searched), and
// entries finished longer than FinishedRetention ago.
func (m *machine) prune() {
	s := &m.s
	current := make(map[string]bool, 2*len(s.Runs))
	for i := range s.Entries {
		e := &s.Entries[i]
		if e.Active() && e.RunID != "" {
			current[e.RunID] = true
		}
		if e.Active() && e.RetryOf != "" {
			current[e.RetryOf] = true // its head may be reused
		}
	}
	for i := range s.Runs {
		// A batch's search names the runs of the prefixes that passed and
		// failed; its PRs move onto them when the search ends, perhaps
		// rounds later, and a PR whose run is gone restarts.
		if b := s.Runs[i].Bisect; b != nil && current[s.Runs[i].ID] {
			current[b.PassRun], current[b.FailRun] = true, true
		}
	}
	s.Runs = slices.DeleteFunc(s.Runs, func(r Run) bool {
		return r.Status != RunInProgress && !current[r.ID]
	})
	cut := m.now.Add(-FinishedRetention)
	// slices.DeleteFunc, by index: its func would copy every entry.
	n := 0
	for i := range s.Entries {
		if e := &s.Entries[i]; !e.State.Terminal() || !e.StateChangedAt.Before(cut) {
			if n != i {
				s.Entries[n] = *e
			}
			n++
		}
	}
	clear(s.Entries[n:])
	s.Entries = s.Entries[:n]
}
