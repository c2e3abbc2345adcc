package testhealth

import (
	"reflect"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/repository"
)

// TestCase is one test case of a repository with everything a read needs:
// its identity, its status, and its history summed into per-hour and
// per-day counters (keyed by HourKey and DayKey), so that a figure over a
// window is a sum over the buckets in it, exact to the bucket, however long
// the history. Prune drops the buckets that left every window. The
// dynamodbav names are package store's item attributes.
type TestCase struct {
	Org       string         `dynamodbav:"org"`
	Repo      repository.Ref `dynamodbav:"repo"` // spelling the repository was first seen with
	ID        string         `dynamodbav:"id"`
	Name      string         `dynamodbav:"name"`
	Variant   string         `dynamodbav:"variant"`
	FilePath  string         `dynamodbav:"file_path,omitempty"`
	Parent    string         `dynamodbav:"parent,omitempty"`
	Classname string         `dynamodbav:"classname,omitempty"`

	Status    TestStatus `dynamodbav:"status"`
	FirstSeen time.Time  `dynamodbav:"first_seen"`
	LastRun   time.Time  `dynamodbav:"last_run,omitempty"`
	// LastUpload is the upload of the latest run recorded and LastOutcome
	// the test's outcome in it (Passed, Failed, PassedOnRetry): what a
	// test's page shows of its latest run, passing runs being counted, not
	// kept. LastGuarded: the infrastructure guard set that upload aside.
	LastUpload  string `dynamodbav:"-"`
	LastOutcome string `dynamodbav:"-"`
	LastGuarded bool   `dynamodbav:"-"`

	// PassedByHour and FailedByHour count runs per unix hour (key: hour
	// number in decimal), for the failure rates.
	PassedByHour map[string]int `dynamodbav:"-"`
	FailedByHour map[string]int `dynamodbav:"-"`
	// MonitoredPassedByHour and MonitoredFailedByHour count the runs the
	// failure-rate monitor looks at: on its branches, outside uploads the
	// infrastructure guard set aside.
	MonitoredPassedByHour map[string]int `dynamodbav:"-"`
	MonitoredFailedByHour map[string]int `dynamodbav:"-"`
	// MonitoredPassedByDay and MonitoredFailedByDay hold the monitored
	// counts of whole days (keyed by DayKey) whose hours are not in the
	// maps above: a test as an ingest sees it (its small counter item),
	// where hours older than a day are folded into days. A test read whole
	// has every hour and no days.
	MonitoredPassedByDay map[string]int `dynamodbav:"-"`
	MonitoredFailedByDay map[string]int `dynamodbav:"-"`
	// Failures are the failure clusters, keyed by the normalised text's hash.
	Failures map[string]FailureCluster `dynamodbav:"-"`
	// FailedPRs maps a pull request number to the time of its latest failed
	// run of this test.
	FailedPRs map[string]time.Time `dynamodbav:"-"`

	// Streak counts consecutive commits of the monitored branches (outside
	// guarded uploads) on which every attempt of the test failed: a commit
	// counts once however often it is retried, and a pass on it sets the
	// streak to 0. StreakOpen: the streak's latest commit has had one
	// failed attempt only, which a retry may still pass (Tally).
	Streak     int  `dynamodbav:"streak,omitempty"`
	StreakOpen bool `dynamodbav:"-"`
	// Flake is the newest evidence of a failure and a pass on one commit.
	Flake *FlakeEvidence `dynamodbav:"flake,omitempty"`
	// EpisodeRuns and EpisodeFailures count the monitored runs of the
	// test's flaky episode: those of the failure-rate window when it became
	// flaky, and every one since (Decide). CleanRuns counts the monitored
	// runs since its last monitored failure, at LastFailure. Recovery reads
	// them (RecoveryRuns).
	EpisodeRuns     int       `dynamodbav:"-"`
	EpisodeFailures int       `dynamodbav:"-"`
	CleanRuns       int       `dynamodbav:"-"`
	LastFailure     time.Time `dynamodbav:"-"`
	// BrokenUntil is when the test was last broken: the failure-rate
	// monitor judges the runs after it only, as the runs of a broken
	// spell say it was broken, not flaky (a fixed regression is healthy).
	BrokenUntil time.Time `dynamodbav:"-"`

	Codeowners         []string `dynamodbav:"codeowners,omitempty"`
	QuarantineOverride string   `dynamodbav:"quarantine_override,omitempty"` // ALWAYS_QUARANTINE, NEVER_QUARANTINE, "" = UNSPECIFIED
	// QuarantineUntil is when the override ends (zero: never); from then
	// on the repository's rule applies again (Expire).
	QuarantineUntil time.Time `dynamodbav:"quarantine_until,omitempty"`
	// ExpiredOverride is an override that has ended but is still stored:
	// Expire moved it here, so that a reader sees the repository's rule
	// and the next health write removes it, with its event, once.
	ExpiredOverride string    `dynamodbav:"-"`
	QuarantineSince time.Time `dynamodbav:"quarantine_since,omitempty"` // when it last became a quarantine candidate
	Ticket          *Ticket   `dynamodbav:"ticket,omitempty"`

	// Rev counts health writes (status, override): each carries the
	// condition that Rev is what the writer read.
	Rev int `dynamodbav:"rev"`

	// Quarantined is not stored: it depends on the repository's settings
	// too, and is decided when the test is read (Quarantined).
	Quarantined bool `dynamodbav:"-"`
}

// TestStatus is a test's health and why.
type TestStatus struct {
	Value     string    `dynamodbav:"value"` // healthy, flaky, broken
	Reason    string    `dynamodbav:"reason"`
	Timestamp time.Time `dynamodbav:"at"`
}

// FlakeEvidence is a commit on which the test both failed and passed.
type FlakeEvidence struct {
	At     time.Time `dynamodbav:"at"`
	SHA    string    `dynamodbav:"sha"`
	Branch string    `dynamodbav:"branch"`
}

// FailureCluster is one group of similar failures.
type FailureCluster struct {
	Summary string         `dynamodbav:"summary"` // most recent original text, ≤256 chars
	Last    time.Time      `dynamodbav:"last"`
	ByDay   map[string]int `dynamodbav:"by_day"` // occurrences per unix day
}

// Ticket is the issue-tracker ticket linked to a test.
type Ticket struct {
	ID      string `dynamodbav:"id"`
	HTMLURL string `dynamodbav:"html_url"`
}

// Quarantine overrides of one test (contract 2.4); "" is UNSPECIFIED.
const (
	AlwaysQuarantine = "ALWAYS_QUARANTINE"
	NeverQuarantine  = "NEVER_QUARANTINE"
	AutoQuarantine   = "AUTO_QUARANTINE"
)

// QuarantineCandidate says why tc would be quarantined in a repository
// that quarantines: AlwaysQuarantine (its override), AutoQuarantine (it is
// unhealthy and not overridden; applies only when the repository
// quarantines automatically), or "" (never). It does not depend on the
// repository's settings, so it can be indexed; Quarantined adds
// the settings.
func (tc TestCase) QuarantineCandidate() string {
	switch {
	case tc.QuarantineOverride == AlwaysQuarantine:
		return AlwaysQuarantine
	case tc.QuarantineOverride == NeverQuarantine:
		return ""
	case tc.Status.Value == Flaky || tc.Status.Value == Broken:
		return AutoQuarantine
	}
	return ""
}

// MaxClusters bounds the failure clusters an aggregate keeps: a test that
// fails with ever-new texts must not grow its item towards DynamoDB's
// 400 KB. The most recent clusters are kept.
const MaxClusters = 50

// MaxFailedPRs bounds the pull requests an aggregate keeps failures of:
// the most recent, enough to count those impacted in a week of a busy
// repository; a test failing on more reads as impacting that many.
const MaxFailedPRs = 200

// HealthSettings are a repository's quarantine and monitor settings
// (contract 2.3 and 2.4). A nil field takes the default (SettingsOf).
type HealthSettings struct {
	QuarantineEnabled *bool `dynamodbav:"quarantine_enabled,omitempty"`
	AutoQuarantine    *bool `dynamodbav:"auto_quarantine,omitempty"`

	PassOnRetry  *bool `dynamodbav:"mon_pass_on_retry,omitempty"`
	RecoveryDays *int  `dynamodbav:"mon_recovery_days,omitempty"`

	FailureRate      *bool    `dynamodbav:"mon_failure_rate,omitempty"`
	WindowHours      *int     `dynamodbav:"mon_window_hours,omitempty"`
	Branches         []string `dynamodbav:"mon_branches,omitempty"`
	MinRuns          *int     `dynamodbav:"mon_min_runs,omitempty"`
	FlakyThreshold   *float64 `dynamodbav:"mon_flaky_threshold,omitempty"`
	BrokenThreshold  *float64 `dynamodbav:"mon_broken_threshold,omitempty"`
	FlakyResolution  *float64 `dynamodbav:"mon_flaky_resolution,omitempty"`
	BrokenResolution *float64 `dynamodbav:"mon_broken_resolution,omitempty"`
	StaleHours       *int     `dynamodbav:"mon_stale_hours,omitempty"`

	InfraGuard *bool `dynamodbav:"mon_infra_guard,omitempty"`

	BrokenStreak *bool `dynamodbav:"mon_broken_streak,omitempty"`
	Streak       *int  `dynamodbav:"mon_streak,omitempty"`
}

// With is h after change: each field change sets (a non-nil pointer or
// list) replaces h's, as store.UpdateRepo writes it; the others stay.
func (h HealthSettings) With(change HealthSettings) HealthSettings {
	dst, src := reflect.ValueOf(&h).Elem(), reflect.ValueOf(change)
	for i := range src.NumField() {
		if !src.Field(i).IsNil() {
			dst.Field(i).Set(src.Field(i))
		}
	}
	return h
}

// UploadRuns is what every run of one upload shares.
type UploadRuns struct {
	Org    string
	Repo   repository.Ref
	Upload string    // the bundle upload id: runs are recorded once per upload and batch
	Batch  int       // which batch of the upload's runs (store.RunBatch) these are
	At     time.Time // when the runs happened (the upload's time)
	SHA    string
	Branch string
	PR     int // 0 when not a pull request
	// Monitored: the runs count for the failure-rate and broken-streak
	// monitors and the flaky episode (a branch the monitors watch, and not
	// an upload the infrastructure guard set aside).
	Monitored bool
	// Guarded: the infrastructure guard set the upload aside, so it leaves
	// no pass-on-retry evidence either (no commit item update).
	Guarded bool
}

// TestRuns are the runs of one test case in one upload, in report order.
type TestRuns struct {
	Test       TestCase // identity fields only: Org, Repo, ID, Name, Variant, FilePath, Parent, Classname
	Codeowners []string // nil leaves the stored owners as they are
	Runs       []Run
	// OnCommit is what the commit's earlier uploads showed of the test
	// (known for a test that failed here; zero otherwise): the broken
	// streak counts a commit once.
	OnCommit CommitSoFar
}

// CommitSoFar is what the earlier uploads of a commit showed of a test.
type CommitSoFar struct {
	Failed, Passed bool
}

// Run is one execution of a test case.
type Run struct {
	Seq      int    // position in the upload, unique per upload
	Status   string // passed, failed, errored, skipped
	Attempt  int
	Duration time.Duration
	Message  string // failure text, "" unless failed or errored
	Cluster  string // key of the failure's cluster
	Summary  string // the failure text as shown, ≤256 characters
}

// Failed reports whether the run counts as a failure (an error does).
func (r Run) Failed() bool { return r.Status == "failed" || r.Status == "errored" }

// RunRecord is a stored run, as history lists it.
type RunRecord struct {
	Status   string    `dynamodbav:"status"`
	At       time.Time `dynamodbav:"at"`
	Upload   string    `dynamodbav:"upload"`
	SHA      string    `dynamodbav:"sha"`
	Branch   string    `dynamodbav:"branch"`
	PR       int       `dynamodbav:"pr,omitempty"`
	Attempt  int       `dynamodbav:"attempt,omitempty"`
	Duration int64     `dynamodbav:"duration_ms"`
	Message  string    `dynamodbav:"message,omitempty"`
	TestID   string    `dynamodbav:"test_id"`
}

// CommitResult says whether a test has passed and failed on one commit.
type CommitResult struct {
	SHA      string    `dynamodbav:"sha"`
	Branch   string    `dynamodbav:"branch"`
	PassedAt time.Time `dynamodbav:"passed_at,omitempty"` // first pass seen
	FailedAt time.Time `dynamodbav:"failed_at,omitempty"` // first failure seen
}

// Flaky reports whether the test both failed and passed on the commit,
// and since when.
func (c CommitResult) Flaky() (time.Time, bool) {
	if c.PassedAt.IsZero() || c.FailedAt.IsZero() {
		return time.Time{}, false
	}
	if c.PassedAt.After(c.FailedAt) {
		return c.PassedAt, true
	}
	return c.FailedAt, true
}

// A test's outcome in one upload (TestCase.LastOutcome).
const (
	Passed        = "passed"
	Failed        = "failed"
	PassedOnRetry = "passed on retry"
)

// ParseUntil reads the end of a quarantine override as a person gives it:
// a date, 2027-01-31, through which the override applies (it ends at the
// start of the next day, UTC), or an RFC 3339 time at which it ends.
func ParseUntil(s string) (time.Time, error) {
	if d, err := time.Parse(time.DateOnly, s); err == nil {
		return d.AddDate(0, 0, 1), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, errs.E(errs.Invalid, "until must be a date (2027-01-31: the override applies through that day, UTC) or an RFC 3339 time, got %q", s)
	}
	return t.UTC(), nil
}
