package mergequeue

import (
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/repository"
)

// QueueState is the state of a queue (contract 3.6).
type QueueState string

// The queue states.
const (
	QueueRunning        QueueState = "RUNNING"
	QueuePaused         QueueState = "PAUSED"
	QueueDraining       QueueState = "DRAINING"
	QueueSwitchingModes QueueState = "SWITCHING_MODES"
)

// Mode is how a queue forms its lanes (contract 3.3).
type Mode string

// The modes. In PARALLEL mode a PR is tested on top of the earlier PRs its
// impacted targets depend on (see dependencies).
const (
	ModeSingle   Mode = "SINGLE"
	ModeParallel Mode = "PARALLEL"
)

// MergeMethod is how a pull request is merged through the GitHub API.
type MergeMethod string

// The merge methods.
const (
	MergeCommit MergeMethod = "MERGE_COMMIT"
	Squash      MergeMethod = "SQUASH"
	Rebase      MergeMethod = "REBASE"
)

// DirectMergeMode is the queue's direct-merge setting (contract 3.7).
type DirectMergeMode string

// The direct-merge settings (see DirectMergeCandidate).
const (
	DirectMergeOff    DirectMergeMode = "OFF"
	DirectMergeAlways DirectMergeMode = "ALWAYS"
)

// OptimizationMode is the queue's bisection optimisation setting.
type OptimizationMode string

// The optimisation settings.
const (
	OptimizationOff                OptimizationMode = "OFF"
	OptimizationBisectionSkipTests OptimizationMode = "BISECTION_SKIP_REDUNDANT_TESTS"
)

// DefaultEvidenceWaitSeconds is flakyEvidenceWaitSeconds until set: long
// enough for an upload that arrives a little after the failed status.
const DefaultEvidenceWaitSeconds = 120

// WithRetryDefaults fills the settings of a queue stored before they
// existed: the anti-flake ones (no policy: never set, so 0 can remain a
// chosen wait), the labels', and the autopilot's bounds.
func (q Queue) WithRetryDefaults() Queue {
	q.AutopilotSettings = q.AutopilotSettings.withDefaults()
	if q.FlakyRetryPolicy == "" {
		q.FlakyRetryPolicy, q.FlakyEvidenceWaitSeconds = RetryKnownFlaky, DefaultEvidenceWaitSeconds
	}
	if q.EnqueueingLabel == "" {
		q.EnqueueingLabel = DefaultEnqueueingLabel
	}
	if q.StateLabelPrefix == "" {
		q.StateLabelPrefix = DefaultStateLabelPrefix
	}
	return q
}

// DefaultEnqueueingLabel is the enqueueing label of a queue that names none.
const DefaultEnqueueingLabel = "mainguard-merge"

// DefaultStateLabelPrefix starts the state labels of a queue that names no
// prefix: "mainguard: testing", "mainguard: merged".
const DefaultStateLabelPrefix = "mainguard: "

// MaxStateLabelPrefix bounds stateLabelPrefix, so that every state label
// ("pending failure" is the longest state) fits GitHub's MaxLabelLength.
const MaxStateLabelPrefix = MaxLabelLength - len("pending failure")

// StateLabel is the state label of state under prefix: the state in lower
// case, words apart ("{prefix}not ready", "{prefix}tests passed").
func StateLabel(prefix string, state PRState) string {
	if prefix == "" {
		prefix = DefaultStateLabelPrefix
	}
	return prefix + strings.ToLower(strings.ReplaceAll(string(state), "_", " "))
}

// MaxLabelLength is GitHub's limit on a label's name.
const MaxLabelLength = 50

// TestBranchPrefix starts the name of every test branch the queue builds
// (repository.TestBranchPrefix).
const TestBranchPrefix = repository.TestBranchPrefix

// FlakyRetryPolicy says which failed runs a queue retries (ours, contract
// 3.7 anti-flake retries).
type FlakyRetryPolicy string

// The retry policies: retry only a run whose every failed test is flaky or
// quarantined, or retry any failure.
const (
	RetryKnownFlaky FlakyRetryPolicy = "KNOWN_FLAKY"
	RetryAnyFailure FlakyRetryPolicy = "ANY_FAILURE"
)

// PRState is the state of a queue entry (contract 3.2, 3.5).
type PRState string

// The entry states.
const (
	NotReady       PRState = "NOT_READY"
	Pending        PRState = "PENDING"
	Testing        PRState = "TESTING"
	TestsPassed    PRState = "TESTS_PASSED"
	PendingFailure PRState = "PENDING_FAILURE"
	Merged         PRState = "MERGED"
	Failed         PRState = "FAILED"
	Cancelled      PRState = "CANCELLED"
)

// Terminal reports whether no transition leaves s.
func (s PRState) Terminal() bool { return s == Merged || s == Failed || s == Cancelled }

// inFlight reports whether an entry in state s holds a place in a lane's
// testing line: it has been tested (or is being tested) on top of the PRs
// ahead of it, and the PRs behind it are tested on top of it.
func (s PRState) inFlight() bool { return s == Testing || s == TestsPassed || s == PendingFailure }

// Mergeability is GitHub's view of whether a pull request can merge.
type Mergeability string

// The mergeability values of readiness.gitHubMergeability.
const (
	Mergeable        Mergeability = "MERGEABLE"
	NotMergeable     Mergeability = "NOT_MERGEABLE"
	MergeabilityBusy Mergeability = "IN_PROGRESS"
	MergeabilityNone Mergeability = "UNSPECIFIED"
)

// RunStatus is the status of a test run (contract 3.4, testing details).
type RunStatus string

// The run statuses.
const (
	RunInProgress RunStatus = "IN_PROGRESS"
	RunFailed     RunStatus = "FAILED"
	RunCancelled  RunStatus = "CANCELLED"
	RunSucceeded  RunStatus = "SUCCEEDED"
)

// The sources of a run's required statuses (testing details
// requiredStatusesSource).
const (
	SourceMergeInstance    = "MERGE_INSTANCE"
	SourceBranchProtection = "REPO_PROVIDER_BRANCH_PROTECTION"
)

// Queue is the queue record of contract 3.3, without its entries.
type Queue struct {
	Repo   repository.Ref
	Branch string
	State  QueueState
	Mode   Mode
	// NextMode is the mode a SWITCHING_MODES queue becomes RUNNING in.
	NextMode Mode
	Settings
	// AutopilotSettings (ours): the autopilot and its bounds
	// (autopilot.go). While it is on, Concurrency, Batch, BatchingMinSize
	// and BisectionConcurrency wait for it to be turned off.
	AutopilotSettings
}

// Snapshot is everything the engine knows about one queue. The driver loads
// it, hands it to a command or to Step, and saves the result only if Version
// is still what it loaded (see doc.go).
type Snapshot struct {
	Queue Queue
	// Entries holds one entry per pull request ever submitted and not yet
	// pruned, in no particular order.
	Entries []Entry
	// Runs holds the runs that are in progress or belong to an active entry.
	Runs []Run
	// Transitions keeps the latest MaxKeptTransitions transitions, oldest
	// first.
	Transitions []Transition
	// TargetHead is the target branch head the queue accounts for: the last
	// observed head, moved forward by the queue's own merges.
	TargetHead string
	// BaseEpoch counts changes of the target branch that the queue did not
	// make; a run built in an older epoch was built on a stale base.
	BaseEpoch int
	// ProtectionContexts are the required status contexts of the target
	// branch protection, valid when ProtectionKnown.
	ProtectionContexts []string
	ProtectionKnown    bool
	// Autopilot is the autopilot's state while it is on (autopilot.go).
	Autopilot *AutopilotState `json:",omitempty"`
	// Version increases with every change; the driver saves conditionally on
	// it.
	Version        int64
	NextSeq        int64 // submit order
	NextPosition   int64 // testing line order
	NextTransition int64
}

// NewSnapshot is the snapshot of a newly created queue.
func NewSnapshot(q Queue) Snapshot { return Snapshot{Queue: q} }

// Entry is one pull request in the queue: the record of contract 3.2 plus
// what the engine needs to drive it. Its ID is kept across episodes (cancel
// or finish, then resubmit).
type Entry struct {
	ID       string
	PRNumber int
	// Episode counts submissions: a resubmitted finished PR starts a new one.
	Episode         int
	State           PRState
	StateChangedAt  time.Time
	Reason          string // the reason of the last transition
	Priority        int
	DefaultPriority bool // no priority was given (usedDefaultPriorityName)
	NoBatch         bool
	Seq             int64 // submit order within equal priority
	SubmittedAt     time.Time
	PR              PRFacts
	// Position orders the entries that hold a place in the testing line;
	// zero when the entry has none. A PENDING entry with a position is being
	// restarted in place.
	Position          int64
	RunID             string // the current (or last) run of this episode
	VerifiedByTestRun string
	MergeSHA          string
	// Intent is an outstanding merge: recorded before the merge effect is
	// performed, cleared when its outcome is observed.
	Intent *MergeIntent
	// CancelRequested holds a cancellation reason that waits for an
	// outstanding merge's outcome.
	CancelRequested string
	// Targets are the impacted targets set for the PR's head TargetsSHA;
	// PARALLEL mode needs them at the current head to leave NOT_READY.
	Targets    *Targets `json:",omitempty"`
	TargetsSHA string   `json:",omitempty"`
	// Retries counts the flaky retries taken in this episode; RetryOf is
	// the failed run the entry's next run repeats (cleared when it starts).
	Retries int    `json:",omitempty"`
	RetryOf string `json:",omitempty"`
	// Notice is the Notify owed for the entry's last transition (its PR
	// comment and state label), until the driver reports it done.
	Notice *Notice `json:",omitempty"`
}

// Notice is an outstanding Notify: asked at RequestedAt, Attempts times.
// Notify is what it shows, as of the transition: repeated as it was,
// since the run it names may be pruned before GitHub answers.
type Notice struct {
	Key         string
	RequestedAt time.Time
	Attempts    int
	Notify      *Notify
}

// targetsKnown reports whether e's impacted targets belong to its head.
func (e *Entry) targetsKnown() bool {
	return e.Targets != nil && e.PR.HeadSHA != "" && e.TargetsSHA == e.PR.HeadSHA
}

// Active reports whether the entry is currently submitted.
func (e *Entry) Active() bool { return e.State != "" && !e.State.Terminal() }

// PRFacts are the pull request's facts as last observed on GitHub.
type PRFacts struct {
	Title        string
	Author       string
	HeadSHA      string // empty until first observed
	BaseBranch   string
	Mergeability Mergeability
	Draft        bool
}

// MergeIntent records a merge the engine asked for.
type MergeIntent struct {
	Key         string
	RunID       string
	SHA         string // the PR head the run tested; GitHub refuses any other
	Method      MergeMethod
	RequestedAt time.Time
	Attempts    int
	BaseEpoch   int // the epoch the merge was asked in; not repeated in another
}

// Run is one test run: a test branch built from BaseSHA and the PRs in
// order, and the checks observed on its head.
type Run struct {
	ID         string
	EntryID    string // the entry whose run this is (the last PR under test)
	PRNumber   int
	TestBranch string
	TempBranch string
	// PRs are merged onto BaseSHA in this order: the PRs ahead (dependent
	// PRs) first, then those under test, the target PR last.
	PRs       []RunPR
	BaseSHA   string
	BaseEpoch int
	HeadSHA   string // the built test branch head; empty until built
	Status    RunStatus
	Reason    string // failure or cancellation reason
	// ConflictPR is the PR whose merge conflicted while building.
	ConflictPR       int
	CreatedAt        time.Time
	EndedAt          time.Time
	BuildRequestedAt time.Time
	BuildAttempts    int
	RequiredStatuses []string
	// RequiredStatusesSource is SourceMergeInstance or
	// SourceBranchProtection.
	RequiredStatusesSource string
	Checks                 map[string]CheckState
	// Lane and Bisection leave room for PARALLEL lanes and bisection runs.
	Lane      int
	Bisection bool
	// Direct marks a direct merge's run: no test branch, the PR's own head
	// (HeadSHA), up to date with BaseSHA, passed when it was made.
	Direct bool `json:",omitempty"`
	// Bisect is the search for the culprit of a failed batch run (several
	// PRs under test), nil otherwise.
	Bisect *Bisection `json:",omitempty"`
	// BisectOf and Prefix mark a bisection run (Bisection): it tests the
	// first Prefix PRs under test of the failed batch run BisectOf, on the
	// same PRs ahead.
	BisectOf string `json:",omitempty"`
	Prefix   int    `json:",omitempty"`
	// EvidenceDue is set on a failed run that may be retried: until then
	// its PR waits for the test results uploaded for the run's head.
	// Evidence is what they showed, once seen.
	EvidenceDue time.Time    `json:",omitzero"`
	Evidence    *RunEvidence `json:",omitempty"`
	// FailedChecks identify the results that failed the run (context →
	// RunChecks.IDs).
	FailedChecks map[string]string `json:",omitempty"`
	// RetryOf is the failed run a flaky retry repeats. When it tests the
	// same PRs on the same base, the retry reuses that run's head
	// (ReuseSHA): its test branch points at the very commit that failed, so
	// test health sees a failure and a pass on one sha (pass-on-retry).
	// Stale are the results that failed RetryOf: still shown on the reused
	// head until CI reports again, they are not this run's.
	RetryOf  string            `json:",omitempty"`
	ReuseSHA string            `json:",omitempty"`
	Stale    map[string]string `json:",omitempty"`
	// RetriesTaken is how many flaky retries its PR had taken when the run
	// started (single runs).
	RetriesTaken int `json:",omitempty"`
}

// RunEvidence is what test health knew of the tests that failed in a run
// (the uploads for its head sha): each failed test with its status and
// quarantine at that moment.
type RunEvidence struct {
	RunID  string
	Failed []FailedTest
}

// FailedTest is one test that failed in a run.
type FailedTest struct {
	Name        string
	Status      string // "flaky", "broken" or "healthy"
	Quarantined bool
}

// names lists the failed tests' names.
func (ev *RunEvidence) names() []string {
	out := make([]string, len(ev.Failed))
	for i, t := range ev.Failed {
		out[i] = t.Name
	}
	return out
}

// knownFlaky reports whether every failed test is flaky or quarantined
// (and at least one failed: a red run with no failed test is unexplained).
func (ev *RunEvidence) knownFlaky() bool {
	if ev == nil || len(ev.Failed) == 0 {
		return false
	}
	for _, t := range ev.Failed {
		if t.Status != "flaky" && !t.Quarantined {
			return false
		}
	}
	return true
}

// Bisection is what is known of a failed batch of n PRs: its first Lo PRs
// passed together (on PassRun, "" while Lo is 0), its first Hi failed (on
// FailRun; the batch run itself while Hi is n). The culprit is PR Hi once
// Hi = Lo+1. Runs counts the bisection runs started, which number their
// test branches.
type Bisection struct {
	Lo, Hi   int
	PassRun  string `json:",omitempty"`
	FailRun  string `json:",omitempty"`
	Runs     int    `json:",omitempty"`
	Retested bool   `json:",omitempty"` // OFF mode: the full batch was run again
}

// RunPR is one pull request merged into a test branch.
type RunPR struct {
	EntryID   string
	Episode   int
	PRNumber  int
	HeadSHA   string
	Title     string
	UnderTest bool // false: a dependent PR, merged in as the predicted base
}

// CheckState is a required status as the engine sees it.
type CheckState string

// The check states.
const (
	CheckPending CheckState = "PENDING"
	CheckSuccess CheckState = "SUCCESS"
	CheckFailure CheckState = "FAILURE"
)

// Active reports whether the queue has work for the scheduler: a PR is
// submitted, a run is in progress, a mode switch waits, or a PR's comment
// or state label is owed (Notice).
func (s Snapshot) Active() bool {
	if s.Queue.State == QueueSwitchingModes {
		return true
	}
	for i := range s.Entries {
		if s.Entries[i].Active() || s.Entries[i].Notice != nil {
			return true // a finished PR's last comment may still be owed
		}
	}
	for i := range s.Runs {
		if s.Runs[i].Status == RunInProgress {
			return true
		}
	}
	return false
}
