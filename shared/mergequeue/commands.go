package mergequeue

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/repository"
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
	if req.PRNumber <= 0 {
		return s, Output{}, errs.E(errs.Invalid, "pr.number must be a positive integer")
	}
	if req.Priority != nil && (*req.Priority < 0 || *req.Priority > 255) {
		return s, Output{}, errs.E(errs.Invalid, priorityRule)
	}
	m := newMachine(s, now, newID)
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

// QueuePatch is an updateQueue call: nil fields are left alone. Enum values
// are accepted in any case.
type QueuePatch struct {
	State                       *string
	Mode                        *string
	Concurrency                 *int
	TestingTimeoutMinutes       *int
	CanOptimisticallyMerge      *bool
	PendingFailureDepth         *int
	Batch                       *bool
	BatchingMaxWaitTimeMinutes  *int
	BatchingMinSize             *int
	BisectionConcurrency        *int
	RequiredStatuses            []string // nil: left alone; empty: none required
	DeleteRequiredStatuses      bool     // back to branch protection
	MergeMethod                 *string
	DirectMergeMode             *string
	OptimizationMode            *string
	CreatePrsForTestingBranches *bool
	CommentsEnabled             *bool
	CommandsEnabled             *bool
	StatusCheckEnabled          *bool
	EnqueueingLabel             *string
	LabelCommandsEnabled        *bool
	StateLabelsEnabled          *bool
	ExtensionEnabled            *bool
	StateLabelPrefix            *string
	FlakyRetries                *int
	FlakyRetryPolicy            *string
	FlakyEvidenceWaitSeconds    *int
	AutopilotPatch
}

func parseEnum[T ~string](field string, v *string, allowed ...T) (T, error) {
	for _, a := range allowed {
		if strings.EqualFold(*v, string(a)) {
			return a, nil
		}
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	last := len(names) - 1
	return "", errs.E(errs.Invalid, "%s must be %s or %s", field, strings.Join(names[:last], ", "), names[last])
}

func atLeast(field string, v *int, min int) error {
	if v != nil && *v < min {
		if min == 0 {
			return errs.E(errs.Invalid, "%s must be 0 or more", field)
		}
		return errs.E(errs.Invalid, "%s must be at least %d", field, min)
	}
	return nil
}

// CreateQueue is the snapshot of a new queue for repo and branch: the
// defaults (DefaultQueue) with the createQueue call's fields (p's mode,
// concurrency and autopilot settings; the others are not createQueue's),
// validated as updateQueue validates them, and bisection running as many
// test runs at once as the queue does.
func CreateQueue(repo repository.Ref, branch string, p QueuePatch, now time.Time) (Snapshot, error) {
	s, _, err := UpdateQueue(NewSnapshot(DefaultQueue(repo, branch)),
		QueuePatch{Mode: p.Mode, Concurrency: p.Concurrency, AutopilotPatch: p.AutopilotPatch}, now)
	if err != nil {
		return Snapshot{}, err
	}
	s.Queue.BisectionConcurrency = s.Queue.Concurrency
	return s, nil
}

// UpdateQueue applies an updateQueue call. A mode change while PRs are in
// the testing line puts the queue in SWITCHING_MODES, which Step ends when
// the line is empty; with an empty line the switch is immediate. While it
// switches, every field but state may change, and setting mode back to
// the current one calls the switch off.
func UpdateQueue(s Snapshot, p QueuePatch, now time.Time) (Snapshot, Output, error) {
	q := s.Queue.WithRetryDefaults()
	if q.State == QueueSwitchingModes && p.State != nil {
		return s, Output{}, errs.E(errs.Invalid, "state cannot change while the queue is switching modes to %s: set mode to %s to cancel the switch, or wait for the pull requests testing to finish", q.NextMode, q.Mode)
	}
	for _, c := range []struct {
		field string
		v     *int
		min   int
	}{
		{"concurrency", p.Concurrency, 1},
		{"testingTimeoutMinutes", p.TestingTimeoutMinutes, 1},
		{"pendingFailureDepth", p.PendingFailureDepth, 0},
		{"batchingMaxWaitTimeMinutes", p.BatchingMaxWaitTimeMinutes, 0},
		{"batchingMinSize", p.BatchingMinSize, 1},
		{"bisectionConcurrency", p.BisectionConcurrency, 1},
	} {
		if err := atLeast(c.field, c.v, c.min); err != nil {
			return s, Output{}, err
		}
	}
	var err error
	var mode Mode
	if p.State != nil {
		if q.State, err = parseEnum("state", p.State, QueueRunning, QueuePaused, QueueDraining); err != nil {
			return s, Output{}, err
		}
	}
	if p.Mode != nil {
		if mode, err = parseEnum("mode", p.Mode, ModeSingle, ModeParallel); err != nil {
			return s, Output{}, err
		}
	}
	if p.MergeMethod != nil {
		if q.MergeMethod, err = parseEnum("mergeMethod", p.MergeMethod, MergeCommit, Squash, Rebase); err != nil {
			return s, Output{}, err
		}
	}
	if p.DirectMergeMode != nil {
		if q.DirectMergeMode, err = parseEnum("directMergeMode", p.DirectMergeMode, DirectMergeOff, DirectMergeAlways); err != nil {
			return s, Output{}, err
		}
	}
	if p.OptimizationMode != nil {
		if q.OptimizationMode, err = parseEnum("optimizationMode", p.OptimizationMode, OptimizationOff, OptimizationBisectionSkipTests); err != nil {
			return s, Output{}, err
		}
	}
	if v := p.FlakyRetries; v != nil && (*v < 0 || *v > 3) {
		return s, Output{}, errs.E(errs.Invalid, "flakyRetries must be 0 to 3")
	}
	if v := p.FlakyEvidenceWaitSeconds; v != nil && (*v < 0 || *v > 3600) {
		return s, Output{}, errs.E(errs.Invalid, "flakyEvidenceWaitSeconds must be 0 to 3600")
	}
	if p.FlakyRetryPolicy != nil {
		if q.FlakyRetryPolicy, err = parseEnum("flakyRetryPolicy", p.FlakyRetryPolicy, RetryKnownFlaky, RetryAnyFailure); err != nil {
			return s, Output{}, err
		}
	}
	if v := p.EnqueueingLabel; v != nil {
		if l := utf8.RuneCountInString(*v); strings.TrimSpace(*v) == "" || l > MaxLabelLength || strings.ContainsFunc(*v, unicode.IsControl) {
			return s, Output{}, errs.E(errs.Invalid, "enqueueingLabel must be a GitHub label name: 1 to %d characters, no control characters", MaxLabelLength)
		}
		q.EnqueueingLabel = *v
	}
	if v := p.StateLabelPrefix; v != nil {
		if l := utf8.RuneCountInString(*v); strings.TrimSpace(*v) == "" || l > MaxStateLabelPrefix || strings.ContainsFunc(*v, unicode.IsControl) {
			return s, Output{}, errs.E(errs.Invalid, "stateLabelPrefix must be 1 to %d characters, no control characters", MaxStateLabelPrefix)
		}
		q.StateLabelPrefix = *v
	}
	if slices.Contains(p.RequiredStatuses, "") {
		return s, Output{}, errs.E(errs.Invalid, "requiredStatuses must not hold empty strings")
	}
	wasOn := q.Autopilot
	if q.AutopilotSettings, err = q.AutopilotSettings.apply(p.AutopilotPatch); err != nil {
		return s, Output{}, err
	}
	setInt := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	setBool := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	setInt(&q.Concurrency, p.Concurrency)
	setInt(&q.TestingTimeoutMinutes, p.TestingTimeoutMinutes)
	setInt(&q.PendingFailureDepth, p.PendingFailureDepth)
	setInt(&q.BatchingMaxWaitTimeMinutes, p.BatchingMaxWaitTimeMinutes)
	setInt(&q.BatchingMinSize, p.BatchingMinSize)
	setInt(&q.BisectionConcurrency, p.BisectionConcurrency)
	setBool(&q.CanOptimisticallyMerge, p.CanOptimisticallyMerge)
	setBool(&q.Batch, p.Batch)
	setBool(&q.CreatePrsForTestingBranches, p.CreatePrsForTestingBranches)
	setBool(&q.CommentsEnabled, p.CommentsEnabled)
	setBool(&q.CommandsEnabled, p.CommandsEnabled)
	setBool(&q.StatusCheckEnabled, p.StatusCheckEnabled)
	setBool(&q.LabelCommandsEnabled, p.LabelCommandsEnabled)
	setBool(&q.StateLabelsEnabled, p.StateLabelsEnabled)
	setBool(&q.ExtensionEnabled, p.ExtensionEnabled)
	setInt(&q.FlakyRetries, p.FlakyRetries)
	setInt(&q.FlakyEvidenceWaitSeconds, p.FlakyEvidenceWaitSeconds)
	if p.DeleteRequiredStatuses {
		q.RequiredStatuses = nil
	}
	if p.RequiredStatuses != nil {
		// An empty list is kept, not dropped: it requires no status (the
		// commercial Terraform provider's [] means so).
		q.RequiredStatuses = append([]string{}, p.RequiredStatuses...)
	}
	switch {
	case p.Mode == nil:
	case q.State == QueueSwitchingModes:
		if mode == q.Mode { // set back: the switch is called off
			q.State, q.NextMode = QueueRunning, ""
		}
	case mode != q.Mode:
		if lineBusy(s) {
			q.State, q.NextMode = QueueSwitchingModes, mode
		} else {
			q.Mode = mode
		}
	}
	m := newMachine(s, now, nil)
	m.s.Queue = q
	switch {
	case q.Autopilot && !wasOn:
		m.s.Autopilot = newAutopilot(q, m.now)
	case !q.Autopilot:
		m.s.Autopilot = nil // the team's settings apply again
	}
	s2, out := m.finish()
	return s2, out, nil
}

// lineBusy reports whether any entry holds a place in a testing line.
func lineBusy(s Snapshot) bool {
	for i := range s.Entries {
		e := &s.Entries[i]
		if e.Active() && (e.State.inFlight() || e.Position > 0) {
			return true
		}
	}
	return false
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
