package queueapi

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
)

// TimeFormat is the contract's timestamp: RFC 3339, UTC, milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z"

func ts(t time.Time) string { return t.UTC().Format(TimeFormat) }

// enums spells merge-queue enum values on output: UPPERCASE, or lowercase
// snake_case for clients of the later API revision (ENUM_CASE=lower).
type enums struct{ lower bool }

func (e enums) of(v string) string {
	if e.lower {
		return strings.ToLower(v)
	}
	return v
}

// QueueView is the queue record of contract 3.3: its state, branch and
// mode, then its settings as the engine declares them (their enums
// spelled as enums spells them).
type QueueView struct {
	State  string `json:"state"`
	Branch string `json:"branch"`
	Mode   string `json:"mode"`
	mergequeue.Settings
	// Ours: the autopilot, its bounds, and (read only) what it chose and
	// why; null while it is off.
	mergequeue.AutopilotSettings
	AutopilotStatus      *AutopilotStatusView `json:"autopilotStatus"`
	EnqueuedPullRequests *[]EnqueuedPRView    `json:"enqueuedPullRequests,omitempty"`
}

// AutopilotStatusView is what the autopilot chose and why (ours).
type AutopilotStatusView struct {
	Concurrency int `json:"concurrency"`
	BatchSize   int `json:"batchSize"`
	// The estimates, over the last pullRequestsObserved concluded PRs
	// (bad-PR rate) and runsObserved completed runs (flake rate), and the
	// median run duration, which spaces the changes.
	BadPRRate            float64 `json:"badPrRate"`
	FlakeRate            float64 `json:"flakeRate"`
	RunDurationSeconds   float64 `json:"runDurationSeconds"`
	PullRequestsObserved int     `json:"pullRequestsObserved"`
	RunsObserved         int     `json:"runsObserved"`
	// CIRunsPerMerge is measured since the last change (null before a
	// merge).
	CIRunsPerMerge *float64              `json:"ciRunsPerMerge"`
	ChangedAt      string                `json:"changedAt"`
	Changes        []AutopilotChangeView `json:"changes"`
}

// AutopilotChangeView is one change of the autopilot, newest first in
// autopilotStatus.changes.
type AutopilotChangeView struct {
	At          string   `json:"at"`
	Kind        string   `json:"kind"`
	Concurrency FromTo   `json:"concurrency"`
	BatchSize   FromTo   `json:"batchSize"`
	Reason      string   `json:"reason"`
	BadPRRate   *float64 `json:"badPrRate"`
	FlakeRate   *float64 `json:"flakeRate"`
}

// FromTo is a setting before and after a change.
type FromTo struct {
	From int `json:"from"`
	To   int `json:"to"`
}

// AutopilotStatusOf is the autopilotStatus of snapshot s: nil while the
// autopilot is off.
func AutopilotStatusOf(s mergequeue.Snapshot) *AutopilotStatusView {
	a := s.Autopilot
	if !s.Queue.Autopilot || a == nil {
		return nil
	}
	l, est := s.Limits(), a.Estimates()
	v := &AutopilotStatusView{
		Concurrency: l.Concurrency, BatchSize: l.Batch, BadPRRate: est.BadRate, FlakeRate: est.FlakeRate,
		RunDurationSeconds: est.RunTime.Seconds(), PullRequestsObserved: est.PRs, RunsObserved: est.Runs,
		ChangedAt: ts(a.ChangedAt), Changes: []AutopilotChangeView{},
	}
	if a.MergesSince > 0 {
		r := float64(a.RunsSince) / float64(a.MergesSince)
		v.CIRunsPerMerge = &r
	}
	for _, c := range slices.Backward(a.Changes) {
		cv := AutopilotChangeView{
			At: ts(c.At), Kind: c.Kind, Reason: c.Line,
			Concurrency: FromTo{c.FromConcurrency, c.ToConcurrency}, BatchSize: FromTo{c.FromBatch, c.ToBatch},
		}
		if c.Kind == mergequeue.ChangeModel {
			cv.BadPRRate, cv.FlakeRate = &c.BadRate, &c.FlakeRate
		}
		v.Changes = append(v.Changes, cv)
	}
	return v
}

func (e enums) queue(s mergequeue.Snapshot) QueueView {
	q := s.Queue.WithRetryDefaults()
	return QueueView{
		State: e.of(string(q.State)), Branch: q.Branch, Mode: e.of(string(q.Mode)),
		Settings: e.settings(q.Settings), AutopilotSettings: q.AutopilotSettings, AutopilotStatus: AutopilotStatusOf(s),
	}
}

// settings spells the enum settings of s (those of a named string type,
// such as MergeMethod) as e spells enums.
func (e enums) settings(s mergequeue.Settings) mergequeue.Settings {
	v := reflect.ValueOf(&s).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.String && f.Type() != reflect.TypeFor[string]() {
			f.SetString(e.of(f.String()))
		}
	}
	return s
}

// EnqueuedPRView is an entry of getQueue.enqueuedPullRequests: the record
// of contract 3.2 without readiness, isCurrentlySubmittedToQueue and
// forceEnqueued.
type EnqueuedPRView struct {
	ID                      string  `json:"id"`
	State                   string  `json:"state"`
	StateChangedAt          string  `json:"stateChangedAt"`
	PriorityValue           int     `json:"priorityValue"`
	PriorityName            string  `json:"priorityName"`
	UsedDefaultPriorityName string  `json:"usedDefaultPriorityName,omitempty"`
	SkipTheLine             bool    `json:"skipTheLine"`
	NoBatch                 bool    `json:"noBatch"`
	VerifiedByTestRun       *string `json:"verifiedByTestRun"`
	PRNumber                int     `json:"prNumber"`
	PRTitle                 string  `json:"prTitle"`
	PRSha                   string  `json:"prSha"`
	PRBaseBranch            string  `json:"prBaseBranch"`
	PRAuthor                string  `json:"prAuthor"`
}

// SubmittedPRView is the submitted pull request record of contract 3.2.
type SubmittedPRView struct {
	ID                          string        `json:"id"`
	State                       string        `json:"state"`
	StateChangedAt              string        `json:"stateChangedAt"`
	PriorityValue               int           `json:"priorityValue"`
	PriorityName                string        `json:"priorityName"`
	UsedDefaultPriorityName     string        `json:"usedDefaultPriorityName,omitempty"`
	SkipTheLine                 bool          `json:"skipTheLine"`
	NoBatch                     bool          `json:"noBatch"`
	ForceEnqueued               bool          `json:"forceEnqueued"`
	IsCurrentlySubmittedToQueue bool          `json:"isCurrentlySubmittedToQueue"`
	Readiness                   ReadinessView `json:"readiness"`
	VerifiedByTestRun           *string       `json:"verifiedByTestRun"`
	PRNumber                    int           `json:"prNumber"`
	PRTitle                     string        `json:"prTitle"`
	PRSha                       string        `json:"prSha"`
	PRBaseBranch                string        `json:"prBaseBranch"`
	PRAuthor                    string        `json:"prAuthor"`
	// FlakyRetriesUsed (ours) counts the anti-flake retries of this
	// submission.
	FlakyRetriesUsed int `json:"flakyRetriesUsed"`
}

// ReadinessView is the readiness object of contract 3.2.
type ReadinessView struct {
	HasImpactedTargets      bool   `json:"hasImpactedTargets"`
	RequiresImpactedTargets bool   `json:"requiresImpactedTargets"`
	DoesBaseBranchMatch     bool   `json:"doesBaseBranchMatch"`
	GitHubMergeability      string `json:"gitHubMergeability"`
}

func (e enums) enqueued(en mergequeue.Entry) EnqueuedPRView {
	v := EnqueuedPRView{
		ID: en.ID, State: e.of(string(en.State)), StateChangedAt: ts(en.StateChangedAt),
		PriorityValue: en.Priority, PriorityName: mergequeue.PriorityName(en.Priority),
		SkipTheLine: en.Priority == mergequeue.PriorityUrgent, NoBatch: en.NoBatch,
		PRNumber: en.PRNumber, PRTitle: en.PR.Title, PRSha: en.PR.HeadSHA, PRBaseBranch: en.PR.BaseBranch, PRAuthor: en.PR.Author,
	}
	if en.DefaultPriority {
		v.UsedDefaultPriorityName = "medium"
	}
	if en.VerifiedByTestRun != "" {
		run := en.VerifiedByTestRun
		v.VerifiedByTestRun = &run
	}
	return v
}

func (e enums) submitted(en mergequeue.Entry, q mergequeue.Queue, hasTargets bool) SubmittedPRView {
	b := e.enqueued(en)
	r := mergequeue.ReadinessOf(en, q)
	return SubmittedPRView{
		ID: b.ID, State: b.State, StateChangedAt: b.StateChangedAt, PriorityValue: b.PriorityValue,
		PriorityName: b.PriorityName, UsedDefaultPriorityName: b.UsedDefaultPriorityName,
		SkipTheLine: b.SkipTheLine, NoBatch: b.NoBatch, ForceEnqueued: false,
		IsCurrentlySubmittedToQueue: en.Active(),
		Readiness: ReadinessView{
			HasImpactedTargets: hasTargets, RequiresImpactedTargets: r.RequiresImpactedTargets,
			DoesBaseBranchMatch: r.DoesBaseBranchMatch, GitHubMergeability: e.of(string(r.GitHubMergeability)),
		},
		VerifiedByTestRun: b.VerifiedByTestRun, PRNumber: b.PRNumber, PRTitle: b.PRTitle, PRSha: b.PRSha,
		PRBaseBranch: b.PRBaseBranch, PRAuthor: b.PRAuthor, FlakyRetriesUsed: en.Retries,
	}
}

// TestingDetailsView is the answer of getMergeQueueTestingDetails.
type TestingDetailsView struct {
	TestRunID                   string            `json:"testRunId"`
	TestBranch                  string            `json:"testBranch"`
	TestBranchSha               string            `json:"testBranchSha"`
	CreatedAt                   string            `json:"createdAt"`
	Status                      string            `json:"status"`
	RequiredStatuses            []string          `json:"requiredStatuses"`
	RequiredStatusesSource      string            `json:"requiredStatusesSource"`
	CheckSuites                 []CheckSuiteView  `json:"checkSuites"`
	StatusChecks                []StatusCheckView `json:"statusChecks"`
	TestedPullRequests          []TestedPRView    `json:"testedPullRequests"`
	DependentPrs                []TestedPRView    `json:"dependentPrs"`
	ImpactedTargets             any               `json:"impactedTargets"`
	ImpactedTargetsForTestedPrs []PRTargetsView   `json:"impactedTargetsForTestedPrs"`
	// Ours (anti-flake retries): the run this one retries, how many
	// retries its PR had taken when it started, and the failed tests test
	// health reported for it, with their health (null when none was read).
	RetryOf      *string          `json:"retryOf"`
	RetriesTaken int              `json:"retriesTaken"`
	FailedTests  []FailedTestView `json:"failedTests"`
}

// FailedTestView is one failed test of a run, as test health knew it.
type FailedTestView struct {
	Name        string `json:"name"`
	Status      string `json:"status"`
	Quarantined bool   `json:"quarantined"`
}

// CheckSuiteView groups check runs.
type CheckSuiteView struct {
	CheckRuns []CheckRunView `json:"checkRuns"`
}

// CheckRunView is one check run on a test branch head.
type CheckRunView struct {
	Name       string  `json:"name"`
	URL        string  `json:"url"`
	Status     string  `json:"status"`
	Conclusion *string `json:"conclusion"`
}

// StatusCheckView is one commit status on a test branch head.
type StatusCheckView struct {
	Context string `json:"context"`
	URL     string `json:"url"`
	State   string `json:"state"`
}

// TestedPRView names a PR in a test run.
type TestedPRView struct {
	PRNumber int    `json:"prNumber"`
	PRURL    string `json:"prUrl"`
	Title    string `json:"title"`
}

// PRTargetsView is the impacted targets of one tested PR: "ALL", a list,
// or null when none were set.
type PRTargetsView struct {
	PRNumber        int `json:"prNumber"`
	ImpactedTargets any `json:"impactedTargets"`
}

func prURL(r repository.Ref, n int) string {
	return fmt.Sprintf("https://%s/%s/%s/pull/%d", r.Host, r.Owner, r.Name, n)
}

func (e enums) details(rec store.RunRecordMQ) TestingDetailsView {
	r := rec.Run
	v := TestingDetailsView{
		TestRunID: r.ID, TestBranch: r.TestBranch, TestBranchSha: r.HeadSHA, CreatedAt: ts(r.CreatedAt),
		Status: e.of(string(r.Status)), RequiredStatuses: r.RequiredStatuses,
		RequiredStatusesSource: e.of(r.RequiredStatusesSource),
		CheckSuites:            []CheckSuiteView{}, StatusChecks: []StatusCheckView{},
		TestedPullRequests: []TestedPRView{}, DependentPrs: []TestedPRView{},
		ImpactedTargetsForTestedPrs: []PRTargetsView{},
	}
	if v.RequiredStatuses == nil {
		v.RequiredStatuses = []string{}
	}
	if r.RetryOf != "" {
		v.RetryOf = &r.RetryOf
	}
	v.RetriesTaken = r.RetriesTaken
	if r.Evidence != nil {
		v.FailedTests = make([]FailedTestView, len(r.Evidence.Failed))
		for i, t := range r.Evidence.Failed {
			v.FailedTests[i] = FailedTestView{Name: t.Name, Status: t.Status, Quarantined: t.Quarantined}
		}
	}
	var runs []CheckRunView
	for _, c := range rec.Checks {
		if c.Kind == "check_run" {
			cv := CheckRunView{Name: c.Name, URL: c.URL, Status: c.Status}
			if c.Conclusion != "" {
				concl := c.Conclusion
				cv.Conclusion = &concl
			}
			runs = append(runs, cv)
		} else {
			v.StatusChecks = append(v.StatusChecks, StatusCheckView{Context: c.Name, URL: c.URL, State: c.State})
		}
	}
	if len(runs) > 0 {
		v.CheckSuites = append(v.CheckSuites, CheckSuiteView{CheckRuns: runs})
	}
	for _, p := range r.PRs {
		t := TestedPRView{PRNumber: p.PRNumber, PRURL: prURL(rec.Key.Repo, p.PRNumber), Title: p.Title}
		if p.UnderTest {
			v.TestedPullRequests = append(v.TestedPullRequests, t)
		} else {
			v.DependentPrs = append(v.DependentPrs, t)
		}
	}
	return v
}
