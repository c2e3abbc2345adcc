package mergequeue

import (
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/repository"
)

// Reasons carried by transitions and events. The public ones are the webhook
// reason values of contract 4; the last two are ours, for transitions that
// have no public reason.
const (
	ReasonAPIRequested = "API_REQUESTED"

	ReasonNowReady               = "MERGE_ITEM_NOW_READY"
	ReasonManualPush             = "MANUAL_PUSH_TO_TARGET_BRANCH"
	ReasonPrerequisiteCancelled  = "PREREQUISITE_MERGE_ITEM_CANCELLED"
	ReasonPrerequisiteFailed     = "PREREQUISITE_MERGE_ITEM_FAILED"
	ReasonPrerequisiteManualMerg = "PREREQUISITE_MERGE_ITEM_MANUALLY_MERGED"
	ReasonRestartedByUser        = "TESTS_RESTARTED_BY_USER"
	ReasonRestartedByAPI         = "TESTS_RESTARTED_BY_API_REQUEST"
	ReasonSkipTheLine            = "SKIP_THE_LINE_INTERRUPTED"

	ReasonMergeConflict      = "START_TEST_RUN_MERGE_CONFLICT"
	ReasonNoRequiredStatuses = "START_TEST_RUN_NO_REQUIRED_STATUSES"
	ReasonStatusFailed       = "TEST_RUN_REQUIRED_STATUS_FAILED"
	ReasonTimeout            = "TEST_RUN_TIMEOUT"
	ReasonMergeFailed        = "GITHUB_API_MERGE_PR_FAILED"

	ReasonUserRequested  = "USER_REQUESTED"
	ReasonPRClosed       = "PR_CLOSED"
	ReasonPRPushedTo     = "PR_PUSHED_TO"
	ReasonBaseChanged    = "PR_BASE_BRANCH_CHANGED"
	ReasonConvertedDraft = "PR_CONVERTED_TO_DRAFT"

	ReasonMergeGraphMerge = "MERGE_GRAPH_MERGE"
	ReasonManualMerge     = "MANUAL_MERGE"
	ReasonDirectMerge     = "MERGE_GRAPH_DIRECT_MERGE"

	ReasonTestRunStarted = "TEST_RUN_STARTED" // ours: PENDING → TESTING
	ReasonTestRunPassed  = "TEST_RUN_PASSED"  // ours: TESTING → TESTS_PASSED
	// ours: TESTING → TESTS_PASSED because a later PR's run that contained
	// it passed (optimistic merge); its own run is cancelled.
	ReasonLaterRunPassed = "LATER_TEST_RUN_PASSED"
	// ours: PENDING → TESTING → TESTS_PASSED of a direct merge, whose "run"
	// is the PR's own head, up to date with the target branch, with its
	// required statuses passed.
	ReasonDirectChecksPassed = "DIRECT_MERGE_CHECKS_PASSED"
	// ours: a bisection run cancelled because the search no longer needs
	// its result.
	ReasonBisectionSettled = "BISECTION_SETTLED"

	// ours: TESTING → PENDING, the failed run retried in place because
	// every test that failed was flaky or quarantined (or, with the
	// ANY_FAILURE policy, whatever failed).
	ReasonRetryKnownFlaky = "RETRY_KNOWN_FLAKY"
	ReasonRetryFailure    = "RETRY_FAILURE"
)

// Transition is one state change of an entry. From is empty for a first
// submission.
type Transition struct {
	Seq      int64
	EntryID  string
	PRNumber int
	Episode  int
	From     PRState
	To       PRState
	Reason   string
	RunID    string
	At       time.Time
	// Bisection says the entry's run was a bisection run: its verdict came
	// from the search for a failed batch's culprit.
	Bisection bool `json:",omitempty"`
}

// MaxKeptTransitions bounds Snapshot.Transitions; every transition is also
// returned in Output, for the driver to store.
const MaxKeptTransitions = 200

// Output is what a command or a step asks the driver to do and record.
type Output struct {
	// Effects are performed after the new snapshot is saved, in order;
	// events go to the outbox in the same write as the snapshot.
	Effects []Effect
	// Transitions made by this call, in order.
	Transitions []Transition
	// Entries and Runs changed by this call (their final state), for the
	// driver to keep as separate items (getSubmittedPullRequest, testing
	// details) beyond the snapshot's retention.
	Entries []Entry
	Runs    []Run
}

// EffectKind names what an effect does.
type EffectKind string

// The effect kinds.
const (
	EffectStartRun       EffectKind = "START_RUN"
	EffectMergePR        EffectKind = "MERGE_PR"
	EffectSetStatus      EffectKind = "SET_STATUS"
	EffectDeleteBranches EffectKind = "DELETE_BRANCHES"
	EffectEvent          EffectKind = "EVENT"
	EffectNotify         EffectKind = "NOTIFY"
)

// Effect is one action for the driver. Key is deterministic (the same
// snapshot stepped twice gives the same keys), so the driver can retry it
// and deduplicate by it. Exactly one of the pointers is set, per Kind.
type Effect struct {
	Key            string
	Kind           EffectKind
	StartRun       *StartRun
	MergePR        *MergePR
	SetStatus      *SetStatus
	DeleteBranches *DeleteBranches
	Event          *Event
	Notify         *Notify
}

// StartRun builds a test branch: TempBranch from BaseSHA with each head
// merged in order, then published as TestBranch. The outcome comes back as a
// BuildResult. Building again under the same names must be harmless.
type StartRun struct {
	RunID      string
	TempBranch string
	TestBranch string
	BaseSHA    string
	Heads      []RunPR
	// ReuseSHA, when set, is the head of the same PRs on the same base
	// that a failed run built: point TestBranch at it instead of building
	// (and build as usual if that commit is gone).
	ReuseSHA string
	// OpenTestPR (createPrsForTestingBranches) asks for a draft pull
	// request from TestBranch into the target branch, for CI that runs only
	// on pull requests: part of the build, so a build whose pull request
	// GitHub did not open is repeated.
	OpenTestPR bool `json:",omitempty"`
}

// MergePR merges a pull request pinned to SHA (GitHub's merge "sha"
// parameter), so a PR pushed to since it was tested cannot merge. The
// outcome comes back as a MergeResult (or as the PR observed merged).
type MergePR struct {
	EntryID  string
	PRNumber int
	SHA      string
	Method   MergeMethod
	RunID    string
	Attempt  int
}

// SetStatus sets a commit status on a PR head.
type SetStatus struct {
	PRNumber    int
	SHA         string
	Context     string // "Trunk Merge Queue ({branch})"
	State       string // pending, success, failure, error (GitHub's values)
	Description string
}

// DeleteBranches deletes a run's branches; a branch already gone is fine.
type DeleteBranches struct {
	RunID    string
	Branches []string
	// CloseTestPR closes the run's test pull request first (the queue
	// opens them, createPrsForTestingBranches), best effort: GitHub closes
	// a pull request whose head branch is deleted anyway.
	CloseTestPR bool `json:",omitempty"`
}

// Notify brings what GitHub shows of an entry in step with its state: its
// one PR comment (Comment) and its state label (StateLabel). It is keyed
// by the entry's transition ("notice/{entry}/{seq}") and repeated after
// RetryInterval until the driver reports it done (Observations.Notified):
// both are idempotent (the comment is found by its marker and edited in
// place; a label set is a set).
type Notify struct {
	EntryID  string
	PRNumber int
	State    PRState
	Reason   string
	// Position is the entry's place in queue order (QueueOrder), from 1; 0
	// when it has none (NOT_READY or finished).
	Position int
	Priority int
	// RunID and TestBranch are the entry's current (or last) run; Batch
	// the PRs under test in it when there are several, Lane its lane.
	RunID      string
	TestBranch string
	Batch      []int
	Lane       int
	// FailedChecks are the required statuses that failed the run, Flaky
	// test health's evidence on the tests that failed in it.
	FailedChecks []string
	Evidence     []FailedTest
	Comment      bool
	// StateLabel is the label to keep on the PR, and LabelPrefix what
	// starts every state label (the others are removed); empty when state
	// labels are off.
	StateLabel  string
	LabelPrefix string
}

// Event is a merge-queue webhook event of contract 4. The driver adds
// http_details_url (it knows the public address) and writes it to the
// outbox with ID as its webhook-id.
type Event struct {
	ID                 string         `json:"-"`
	Type               string         `json:"type"`
	Action             string         `json:"action"`
	Status             string         `json:"status"`
	Timestamp          time.Time      `json:"timestamp"`
	Repository         repository.Ref `json:"repository"`
	TargetBranch       string         `json:"target_branch"`
	PRNumber           int            `json:"pr_number"`
	Author             string         `json:"author"`
	HTTPDetailsURL     string         `json:"http_details_url,omitempty"`
	TestBranch         string         `json:"test_branch,omitempty"`
	TestBranchSHA      string         `json:"test_branch_sha,omitempty"`
	Batched            *bool          `json:"batched,omitempty"`
	IsBisection        *bool          `json:"is_bisection,omitempty"`
	SubmittedReason    string         `json:"submitted_reason,omitempty"`
	QueuedReason       string         `json:"queued_reason,omitempty"`
	FailureReason      string         `json:"failure_reason,omitempty"`
	CancellationReason string         `json:"cancellation_reason,omitempty"`
	MergedReason       string         `json:"merged_reason,omitempty"`
	// FlakyTests (ours) names, on a flaky retry's pull_request.queued, the
	// tests that failed the retried run.
	FlakyTests []string `json:"flaky_tests,omitempty"`
	// PRNumbers and PRNumbersInBatch are set on pull_request_batch.*
	// events only, which have no pr_number or author (the driver's wire
	// form leaves those out).
	PRNumbers        []int `json:"pr_numbers,omitempty"`
	PRNumbersInBatch []int `json:"pr_numbers_in_batch,omitempty"`
	// Autopilot is the change of a merge_queue.autopilot_changed event
	// (ours), which concerns no pull request; the driver writes its wire
	// form.
	Autopilot *AutopilotChange `json:"-"`
}

// Observations are the facts the driver gathered since the last step. They
// must be gathered after the previous step's effects were performed, so a
// head that moved because of the queue's own merge comes with that merge's
// result or with the PR seen merged. Zero values mean "not observed".
type Observations struct {
	TargetHeadSHA    string
	BranchProtection *BranchProtection
	PRs              []PRObservation
	Builds           []BuildResult
	Checks           []RunChecks
	Merges           []MergeResult
	// Targets are the impacted targets of the PRs NeedsTargets names that
	// were set (setImpactedTargets); a PR with none set is left out.
	Targets []TargetsObservation
	// Direct is what GitHub says of the DirectMergeCandidate, nil when
	// there is none or GitHub did not answer.
	Direct *DirectObservation
	// Evidence is what test health holds for the runs EvidenceWanted
	// names; a run with no upload of its head yet is left out.
	Evidence []RunEvidence
	// Notified are the keys of the Notify effects the driver performed
	// (or gave up on: GitHub refused them for good).
	Notified []string
}

// DirectObservation is a pull request seen as direct merge needs it: whether
// its head contains the target head TargetSHA, and the statuses and checks
// on its head (collapsed to one state per name).
type DirectObservation struct {
	PRNumber  int
	HeadSHA   string
	TargetSHA string
	UpToDate  bool
	Checks    map[string]string
}

// TargetsObservation is the impacted targets set for a PR's head.
type TargetsObservation struct {
	PRNumber int
	HeadSHA  string
	Targets  *Targets
}

// BranchProtection holds the required status contexts of the target branch.
type BranchProtection struct {
	Contexts []string
}

// PRState values of a PRObservation.
const (
	PROpen   = "OPEN"
	PRClosed = "CLOSED"
	PRMerged = "MERGED"
)

// PRObservation is a pull request as GitHub shows it now.
type PRObservation struct {
	Number       int
	State        string // PROpen, PRClosed, PRMerged
	MergeSHA     string // the merge commit when merged
	HeadSHA      string
	BaseBranch   string
	Draft        bool
	Mergeability Mergeability
	Title        string
	Author       string
}

// BuildResult is the outcome of a StartRun. Exactly one of HeadSHA,
// ConflictPR or Error is set; an Error (GitHub unavailable) is retried.
type BuildResult struct {
	RunID      string
	HeadSHA    string
	ConflictPR int
	Error      string
}

// RunChecks are the statuses and check runs seen on a run's test branch
// head: context (or check name) → GitHub state or conclusion, any case.
type RunChecks struct {
	RunID  string
	SHA    string
	Checks map[string]string
	// IDs identify the result behind each state (GitHub's status or check
	// run id), so a retry on the same head can tell a new result from the
	// one that failed the run it repeats. Optional.
	IDs map[string]string
}

// MergeResult is the outcome of a MergePR, matched by Key.
type MergeResult struct {
	Key      string
	PRNumber int
	Merged   bool
	SHA      string // the merge commit
	Message  string
}

// NormalizeCheck maps a GitHub commit status state or check run
// status/conclusion to a CheckState. Neutral and skipped count as success,
// as branch protection counts them.
func NormalizeCheck(s string) CheckState {
	switch strings.ToLower(s) {
	case "success", "neutral", "skipped":
		return CheckSuccess
	case "failure", "error", "timed_out", "cancelled", "canceled", "action_required", "stale", "startup_failure":
		return CheckFailure
	default:
		return CheckPending
	}
}
