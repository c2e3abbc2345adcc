package mergequeue

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
)

// The named priority levels of contract 3.2; 0 is the most urgent.
const (
	PriorityUrgent  = 0
	PriorityHigh    = 10
	PriorityMedium  = 100
	PriorityLow     = 200
	PriorityDefault = PriorityMedium
)

var priorityNames = map[string]int{"urgent": PriorityUrgent, "high": PriorityHigh, "medium": PriorityMedium, "low": PriorityLow}

const priorityRule = "priority must be an integer from 0 to 255 or one of low, medium, high, urgent"

// ParsePriority reads the submitPullRequest priority as decoded from JSON:
// nil (absent or null), a number 0..255, or a level name in any case (a
// string of digits is read as a number). given is false when no priority was
// sent, and then value is the default.
func ParsePriority(raw any) (value int, given bool, err error) {
	switch v := raw.(type) {
	case nil:
		return PriorityDefault, false, nil
	case float64:
		if v != math.Trunc(v) || v < 0 || v > 255 {
			return 0, false, errs.E(errs.Invalid, priorityRule)
		}
		return int(v), true, nil
	case int:
		if v < 0 || v > 255 {
			return 0, false, errs.E(errs.Invalid, priorityRule)
		}
		return v, true, nil
	case string:
		if p, ok := priorityNames[strings.ToLower(strings.TrimSpace(v))]; ok {
			return p, true, nil
		}
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 && n <= 255 {
			return n, true, nil
		}
	}
	return 0, false, errs.E(errs.Invalid, priorityRule)
}

// PriorityName is the priorityName of contract 3.2: the named level for
// 0, 10, 100 and 200; for other values the nearest level at or below the
// value in urgency, so a PR is never shown as more urgent than it is
// (5 → high, 50 → medium, 150 → low); beyond low, low.
func PriorityName(v int) string {
	switch {
	case v <= PriorityUrgent:
		return "urgent"
	case v <= PriorityHigh:
		return "high"
	case v <= PriorityMedium:
		return "medium"
	default:
		return "low"
	}
}

// SubmitRequest is a submitPullRequest call.
type SubmitRequest struct {
	PRNumber int
	Priority *int  // nil: not given (default on first submission, kept on resubmit)
	NoBatch  *bool // nil: not given
	// EntryID is the id the store already holds for this PR and queue, if
	// the entry was pruned from the snapshot; a new id is made otherwise.
	EntryID string
	Reason  string // submitted_reason; API_REQUESTED when empty
}

// Submit adds a PR to the queue as NOT_READY, updates the priority and
// noBatch of a PR already submitted, or starts a new episode (same id) for
// a PR that finished.
func Submit(s Snapshot, req SubmitRequest, now time.Time, newID func() string) (Snapshot, Output, error) {
	return submit(s, req, now, newID, newMachine)
}

// SubmitConsuming is Submit for a caller that keeps only the snapshot it
// returns (StepConsuming): s must not be used after the call.
func SubmitConsuming(s Snapshot, req SubmitRequest, now time.Time, newID func() string) (Snapshot, Output, error) {
	return submit(s, req, now, newID, consumingMachine)
}

func submit(s Snapshot, req SubmitRequest, now time.Time, newID func() string,
	machineFor func(Snapshot, time.Time, func() string) *machine) (Snapshot, Output, error) {
	if req.PRNumber <= 0 {
		return s, Output{}, errs.E(errs.Invalid, "pr.number must be a positive integer")
	}
	if req.Priority != nil && (*req.Priority < 0 || *req.Priority > 255) {
		return s, Output{}, errs.E(errs.Invalid, priorityRule)
	}
	m := machineFor(s, now, newID)
	reason := req.Reason
	if reason == "" {
		reason = ReasonAPIRequested
	}
	e, ok := m.entryFor(req.PRNumber)
	switch {
	case ok && e.Active():
		if req.Priority != nil {
			e.Priority, e.DefaultPriority = *req.Priority, false
		}
		if req.NoBatch != nil {
			e.NoBatch = *req.NoBatch
		}
		m.touchEntry(e)
		s2, out := m.finish()
		return s2, out, nil
	case ok && e.State == Merged:
		// GitHub cannot merge a PR twice; a new episode could only end in a
		// confusing MANUAL_MERGE.
		return s, Output{}, errs.E(errs.Invalid, "pull request %d is already merged", req.PRNumber)
	case !ok:
		id := req.EntryID
		if id == "" {
			id = newID()
		}
		e = m.addEntry(Entry{ID: id, PRNumber: req.PRNumber})
	}
	// A new entry or a new episode of a finished one. The head is forgotten:
	// the first observation sets it, and only a later change is a push.
	m.s.NextSeq++
	prev := e.PR
	*e = Entry{
		ID: e.ID, PRNumber: e.PRNumber, Episode: e.Episode + 1,
		Priority: PriorityDefault, DefaultPriority: true,
		Seq: m.s.NextSeq, SubmittedAt: m.now,
		PR: PRFacts{Title: prev.Title, Author: prev.Author, BaseBranch: prev.BaseBranch},
	}
	if req.Priority != nil {
		e.Priority, e.DefaultPriority = *req.Priority, false
	}
	if req.NoBatch != nil {
		e.NoBatch = *req.NoBatch
	}
	m.transition(e, NotReady, reason)
	m.apArrived()
	s2, out := m.finish()
	return s2, out, nil
}

// CancelRequest is a cancelPullRequest call.
type CancelRequest struct {
	PRNumber int
	Reason   string // cancellation_reason; USER_REQUESTED when empty
}

// Cancel cancels an active PR. A PR whose merge is in flight is cancelled
// only if that merge fails (it may already have happened).
func Cancel(s Snapshot, req CancelRequest, now time.Time) (Snapshot, Output, error) {
	m := newMachine(s, now, nil)
	e, err := m.submitted(req.PRNumber)
	if err != nil {
		return s, Output{}, err
	}
	switch e.State {
	case Merged:
		return s, Output{}, errs.E(errs.Invalid, "pull request %d is already merged", req.PRNumber)
	case Failed:
		return s, Output{}, errs.E(errs.Invalid, "pull request %d has already failed", req.PRNumber)
	}
	reason := req.Reason
	if reason == "" {
		reason = ReasonUserRequested
	}
	m.cancel(e, reason)
	s2, out := m.finish()
	return s2, out, nil
}

// RestartRequest is a restartTestsOnPullRequest call.
type RestartRequest struct {
	PRNumber int
	Reason   string // queued_reason; TESTS_RESTARTED_BY_API_REQUEST when empty
}

// Restart retests a PR in place: it goes back to PENDING keeping its place
// in the testing line, and the next step starts a new run on top of the
// same PRs ahead. PRs behind it keep their runs: those were built with this
// PR at the same head, so their prediction still holds.
func Restart(s Snapshot, req RestartRequest, now time.Time) (Snapshot, Output, error) {
	m := newMachine(s, now, nil)
	e, err := m.submitted(req.PRNumber)
	if err != nil {
		return s, Output{}, err
	}
	if !e.State.inFlight() {
		return s, Output{}, errs.E(errs.Invalid,
			"pull request %d is %s; only a pull request in TESTING, TESTS_PASSED or PENDING_FAILURE can be restarted",
			req.PRNumber, e.State)
	}
	if e.Intent != nil {
		return s, Output{}, errs.E(errs.Invalid, "pull request %d is being merged and cannot be restarted", req.PRNumber)
	}
	reason := req.Reason
	if reason == "" {
		reason = ReasonRestartedByAPI
	}
	m.restart(e, reason, true)
	s2, out := m.finish()
	return s2, out, nil
}

// submitted finds the entry of pr for cancel and restart: absent, or
// cancelled (no longer submitted), is not found.
func (m *machine) submitted(pr int) (*Entry, error) {
	e, ok := m.entryFor(pr)
	if !ok || e.State == Cancelled {
		return nil, errs.E(errs.NotFound, "pull request %d is not submitted to this queue", pr)
	}
	return e, nil
}

// cancel cancels an active entry, or defers the cancellation while a merge
// is in flight.
func (m *machine) cancel(e *Entry, reason string) {
	if !e.Active() {
		return
	}
	if e.Intent != nil {
		if e.CancelRequested == "" {
			e.CancelRequested = reason
			m.touchEntry(e)
		}
		return
	}
	if r := m.run(e.RunID); r != nil {
		m.endRun(r, RunCancelled, reason)
	}
	e.Position = 0
	m.transition(e, Cancelled, reason)
}

// restart sends an in-flight entry back to PENDING, cancelling its run. In
// place, it keeps its position in the line.
func (m *machine) restart(e *Entry, reason string, inPlace bool) {
	if r := m.run(e.RunID); r != nil {
		m.endRun(r, RunCancelled, reason)
	}
	if !inPlace {
		e.Position = 0
	}
	e.RetryOf = "" // a restart is not a flaky retry (retryRun sets it after)
	if e.State == Pending {
		m.touchEntry(e)
	} else {
		m.transition(e, Pending, reason)
	}
	e.RunID = ""
}

// Deletable refuses to delete a queue that holds a submitted pull request
// (contract 3.4, deleteQueue).
func Deletable(s Snapshot) error {
	for _, e := range s.Entries {
		if e.Active() {
			return errs.E(errs.Invalid, "queue is not empty: pull request %d is submitted", e.PRNumber)
		}
	}
	return nil
}
