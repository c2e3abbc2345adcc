package testhealth

import (
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
)

// Test status values (lowercase on the wire, contract 2.1).
const (
	Healthy = "healthy"
	Flaky   = "flaky"
	Broken  = "broken"
)

// Settings are a repository's monitor and quarantine settings with every
// default of contract 2.3 and 2.4 applied.
type Settings struct {
	QuarantineEnabled bool
	AutoQuarantine    bool
	DefaultBranch     string

	PassOnRetry  bool
	RecoveryDays int

	FailureRate      bool
	WindowHours      int
	Branches         []string // globs; empty: the default branch
	MinRuns          int
	FlakyThreshold   float64
	BrokenThreshold  float64
	FlakyResolution  float64
	BrokenResolution float64
	StaleHours       int

	InfraGuard bool

	BrokenStreak bool
	Streak       int
}

// DefaultStreak is the broken-streak monitor's default: three commits whose
// every attempt failed. A regression is called broken on its third commit
// (on the retry that settles it, where CI retries a failed job), where five
// runs had called it broken on the third commit of a CI that retries once;
// a flaky test cannot get there while its retries pass (Classify).
const DefaultStreak = 3

// InfraGuardShare is the share of failed test cases above which an upload
// is set aside from flaky and broken detection (contract 2.3).
const InfraGuardShare = 0.8

// SettingsOf applies the defaults to a repository's stored settings; the
// monitors watch defaultBranch unless told other branches.
func SettingsOf(h HealthSettings, defaultBranch string) Settings {
	b := func(p *bool, d bool) bool {
		if p == nil {
			return d
		}
		return *p
	}
	i := func(p *int, d int) int {
		if p == nil {
			return d
		}
		return *p
	}
	f := func(p *float64, d float64) float64 {
		if p == nil {
			return d
		}
		return *p
	}
	s := Settings{
		QuarantineEnabled: b(h.QuarantineEnabled, false),
		AutoQuarantine:    b(h.AutoQuarantine, true),
		DefaultBranch:     defaultBranch,
		PassOnRetry:       b(h.PassOnRetry, true),
		RecoveryDays:      i(h.RecoveryDays, 7),
		FailureRate:       b(h.FailureRate, true),
		WindowHours:       i(h.WindowHours, 168),
		Branches:          h.Branches,
		MinRuns:           i(h.MinRuns, 20),
		FlakyThreshold:    f(h.FlakyThreshold, 0.1),
		BrokenThreshold:   f(h.BrokenThreshold, 0.9),
		StaleHours:        i(h.StaleHours, 168),
		InfraGuard:        b(h.InfraGuard, true),
		BrokenStreak:      b(h.BrokenStreak, true),
		Streak:            i(h.Streak, DefaultStreak),
	}
	if len(s.Branches) == 0 {
		s.Branches = []string{s.DefaultBranch}
	}
	s.FlakyResolution = f(h.FlakyResolution, s.FlakyThreshold)
	s.BrokenResolution = f(h.BrokenResolution, s.BrokenThreshold)
	return s
}

// Validate checks settings as the administration program sets them, with
// one sentence naming the setting and its range.
func (s Settings) Validate() error {
	switch {
	case s.RecoveryDays < 1 || s.RecoveryDays > 15:
		return errs.E(errs.Invalid, "recovery_days must be between 1 and 15, got %d", s.RecoveryDays)
	case s.WindowHours < 1 || s.WindowHours > 168:
		// Counters are kept for 7 days: a longer window could not be summed.
		return errs.E(errs.Invalid, "window_hours must be between 1 and 168, got %d", s.WindowHours)
	case s.MinRuns < 1:
		return errs.E(errs.Invalid, "min_runs must be at least 1, got %d", s.MinRuns)
	case s.FlakyThreshold <= 0 || s.FlakyThreshold > 1:
		return errs.E(errs.Invalid, "flaky_threshold must be above 0 and at most 1, got %g", s.FlakyThreshold)
	case s.BrokenThreshold <= s.FlakyThreshold || s.BrokenThreshold > 1:
		return errs.E(errs.Invalid, "broken_threshold must be above flaky_threshold (%g) and at most 1, got %g", s.FlakyThreshold, s.BrokenThreshold)
	case s.FlakyResolution <= 0 || s.FlakyResolution > s.FlakyThreshold:
		return errs.E(errs.Invalid, "flaky_resolution must be above 0 and at most flaky_threshold (%g), got %g", s.FlakyThreshold, s.FlakyResolution)
	case s.BrokenResolution <= s.FlakyThreshold || s.BrokenResolution > s.BrokenThreshold:
		return errs.E(errs.Invalid, "broken_resolution must be above flaky_threshold and at most broken_threshold (%g), got %g", s.BrokenThreshold, s.BrokenResolution)
	case s.StaleHours < 1:
		return errs.E(errs.Invalid, "stale_hours must be at least 1, got %d", s.StaleHours)
	case s.Streak < 1 || s.Streak > 1000:
		return errs.E(errs.Invalid, "streak must be between 1 and 1000, got %d", s.Streak)
	}
	for _, g := range s.Branches {
		if _, err := path.Match(strings.ReplaceAll(g, "/", "\x00"), ""); err != nil || g == "" {
			return errs.E(errs.Invalid, "branches: %q is not a valid glob", g)
		}
	}
	return nil
}

// MatchBranch reports whether branch matches one of the globs; `*` also
// matches `/` (contract 2.3), so `release/*` and `*` cover nested names.
func MatchBranch(globs []string, branch string) bool {
	for _, g := range globs {
		// path.Match's * stops at '/': hide the slashes from it.
		if ok, err := path.Match(strings.ReplaceAll(g, "/", "\x00"), strings.ReplaceAll(branch, "/", "\x00")); err == nil && ok {
			return true
		}
	}
	return false
}

// Guarded reports whether an upload with the given counts is set aside by
// the infrastructure guard: more than 80% of its test cases failed.
func (s Settings) Guarded(cases, failedCases int) bool {
	return s.InfraGuard && cases > 0 && float64(failedCases) > InfraGuardShare*float64(cases)
}

// Classify decides the status of tc at now from its aggregate (contract
// 2.3, as issue 32 changed it): the worst active monitor wins, except that
// broken never overrides pass-on-retry evidence still in its window (such a
// test is flaky, with its failure rate in the reason), and a flaky test
// stays flaky until it has recovered by evidence (RecoveryRuns). The reason
// names the monitor and its evidence; the timestamp is now when the value
// changes, else kept.
func Classify(tc TestCase, s Settings, now time.Time) TestStatus {
	return judge(tc, s, now).status(tc, s, now)
}

// verdict is what the monitors found of a test, before any of it is put
// in words: deciding is on every test of every upload, a reason only
// where a status changes or is shown.
type verdict struct {
	value string
	// The broken-streak monitor: the settled commits of the streak.
	settled      int
	streakBroken bool
	// The failure-rate monitor, when it judges: the rate over runs.
	rate                  float64
	runs                  int
	rateBroken, rateFlaky bool
	retried               bool // pass-on-retry evidence in its window
	recovering            bool // flaky only until it recovers
	prev                  string
}

func judge(tc TestCase, s Settings, now time.Time) verdict {
	v := verdict{prev: Previous(tc)}
	// The streak's latest commit counts once it is settled: failed twice,
	// or followed by another commit. A retry may still pass it, and a
	// status called on it would then go back on the same commit.
	v.settled = tc.Streak
	if tc.StreakOpen {
		v.settled--
	}
	v.streakBroken = s.BrokenStreak && v.settled >= s.Streak
	if s.FailureRate {
		passed, failed := monitoredSince(tc, time.Duration(s.WindowHours)*time.Hour, now, tc.BrokenUntil)
		fresh := !tc.LastRun.IsZero() && now.Sub(tc.LastRun) < time.Duration(s.StaleHours)*time.Hour
		if runs := passed + failed; fresh && runs >= s.MinRuns {
			v.runs, v.rate = runs, float64(failed)/float64(runs)
			brokenAt, flakyAt := s.BrokenThreshold, s.FlakyThreshold
			if v.prev == Broken { // hysteresis: resolves below the resolution threshold
				brokenAt = s.BrokenResolution
			}
			if v.prev == Flaky || v.prev == Broken {
				flakyAt = s.FlakyResolution
			}
			v.rateBroken = v.rate >= brokenAt
			// A broken test's failures say it is broken: leaving broken,
			// it is flaky only on other evidence (BrokenUntil). Failures not
			// passed since (a broken streak running) may be a regression,
			// the broken-streak monitor's to judge: a healthy test is not
			// called flaky on them until it passes again.
			v.rateFlaky = !v.rateBroken && v.rate >= flakyAt && v.prev != Broken && (tc.Streak == 0 || v.prev == Flaky)
		}
	}
	v.retried = s.PassOnRetry && tc.Flake != nil && now.Sub(tc.Flake.At) < time.Duration(s.RecoveryDays)*Day
	switch {
	case (v.streakBroken || v.rateBroken) && !v.retried:
		v.value = Broken
	case v.streakBroken || v.rateBroken || v.retried || v.rateFlaky:
		v.value = Flaky
	case v.prev == Flaky && !recovered(tc, s, now):
		v.value, v.recovering = Flaky, true
	default:
		v.value = Healthy
	}
	return v
}

// status puts v in words: the reason names the monitor and its evidence.
func (v verdict) status(tc TestCase, s Settings, now time.Time) TestStatus {
	branches := strings.Join(s.Branches, ", ")
	broken := ""
	switch {
	case v.streakBroken:
		broken = fmt.Sprintf("broken-streak: every attempt failed on %s on %s", lastCommits(v.settled), branches)
	case v.rateBroken:
		broken = "failure-rate: " + v.rateEvidence(s)
	}
	retried := ""
	if v.retried {
		retried = fmt.Sprintf("pass-on-retry: failed and passed on commit %s (%s)", short(tc.Flake.SHA), tc.Flake.Branch)
	}
	reason := ""
	switch {
	case v.value == Broken:
		reason = broken
	case broken != "":
		_, why, _ := strings.Cut(broken, ": ")
		reason = fmt.Sprintf("%s, so flaky, not broken, although %s; %s", retried, why, rateClause(tc, s, now))
	case v.retried:
		reason = retried
	case v.rateFlaky:
		reason = "failure-rate: " + v.rateEvidence(s)
	case v.recovering:
		reason = "recovering: " + recoveryClause(tc, s, now)
	}
	if v.value == Flaky && !v.recovering {
		reason += "; recovery: " + recoveryClause(tc, s, now)
	}
	if v.value == Healthy {
		reason = HealthyReason(tc, s, now)
		if v.prev != Healthy {
			reason = "recovered (was " + v.prev + "): " + reason
		}
	} else {
		reason += guardNote(tc)
	}
	at := tc.Status.Timestamp
	switch {
	case tc.Status.Value == "" && v.value == Healthy:
		at = tc.FirstSeen // never changed: the first-seen time
	case v.value != v.prev:
		at = now
	}
	if at.IsZero() {
		at = now
	}
	return TestStatus{Value: v.value, Reason: reason, Timestamp: at}
}

func (v verdict) rateEvidence(s Settings) string {
	return fmt.Sprintf("failure rate %s over %d runs in %s on %s", percent(v.rate), v.runs, window(s.WindowHours), strings.Join(s.Branches, ", "))
}

// rateClause is a test's failure rate in the failure-rate window: over the
// monitored runs, or over all of them when none was monitored.
func rateClause(tc TestCase, s Settings, now time.Time) string {
	w := time.Duration(s.WindowHours) * time.Hour
	passed, failed := monitored(tc, w, now)
	where := " on " + strings.Join(s.Branches, ", ")
	if passed+failed == 0 {
		passed, failed = sumWindow(tc.PassedByHour, w, now), sumWindow(tc.FailedByHour, w, now)
		where = ""
	}
	rate := 0.0
	if passed+failed > 0 {
		rate = float64(failed) / float64(passed+failed)
	}
	return fmt.Sprintf("failure rate %s over %s in %s%s", percent(rate), count(passed+failed, "run"), window(s.WindowHours), where)
}

// guardNote says that the test's latest upload was set aside by the
// infrastructure guard, when the test failed in it: its failure there
// counts in the rates, not for flaky or broken.
func guardNote(tc TestCase) string {
	if !tc.LastGuarded || tc.LastOutcome == Passed || tc.LastOutcome == "" {
		return ""
	}
	return fmt.Sprintf("; its latest upload, %s, was set aside by the infrastructure guard (more than %d%% of its test cases failed), so its failure there counts in the rates but not for flaky or broken",
		tc.LastUpload, int(InfraGuardShare*100))
}

// HealthyReason states the evidence on which a healthy test is healthy: its
// runs and failures in the monitor's window, and which threshold each
// monitor has not reached. It is computed whenever a healthy test is shown,
// because a healthy test is not rewritten on every run.
func HealthyReason(tc TestCase, s Settings, now time.Time) string {
	w := time.Duration(s.WindowHours) * time.Hour
	passed, failed := sumWindow(tc.PassedByHour, w, now), sumWindow(tc.FailedByHour, w, now)
	parts := []string{fmt.Sprintf("%s in %s in %s", count(failed, "failure"), count(passed+failed, "run"), window(s.WindowHours))}
	branches := strings.Join(s.Branches, ", ")
	mp, mf := monitoredSince(tc, w, now, tc.BrokenUntil)
	switch runs := mp + mf; {
	case !s.FailureRate:
		parts = append(parts, "the failure-rate monitor is off")
	case runs < s.MinRuns:
		clause := fmt.Sprintf("below the failure-rate monitor's %s", count(s.MinRuns, "run"))
		if runs != passed+failed {
			clause += fmt.Sprintf(" (%s on %s)", count(runs, "run"), branches)
		}
		parts = append(parts, clause)
	case tc.LastRun.IsZero() || now.Sub(tc.LastRun) >= time.Duration(s.StaleHours)*time.Hour:
		parts = append(parts, fmt.Sprintf("no run in %s, so the failure-rate monitor does not judge it", window(s.StaleHours)))
	default:
		parts = append(parts, fmt.Sprintf("failure rate %s on %s, below the flaky threshold of %s", percent(float64(mf)/float64(runs)), branches, percent(s.FlakyThreshold)))
	}
	if tc.Flake != nil {
		switch {
		case !s.PassOnRetry:
			parts = append(parts, "the pass-on-retry monitor is off")
		default:
			parts = append(parts, fmt.Sprintf("last passed on retry %s, over %s ago", tc.Flake.At.UTC().Format("2006-01-02"), count(s.RecoveryDays, "day")))
		}
	}
	if tc.Streak > 0 && s.BrokenStreak {
		last := fmt.Sprintf("every attempt failed on %s on %s", lastCommits(tc.Streak), branches)
		if tc.StreakOpen {
			last += " (the last one not retried yet)"
		}
		parts = append(parts, fmt.Sprintf("%s, below the broken-streak monitor's %s", last, count(s.Streak, "commit")))
	}
	return strings.Join(parts, "; ") + guardNote(tc)
}

// Status is tc's status as shown at now: the stored value, with the
// evidence as it stands now (a health write stores a reason only when the
// value changes). A test never classified is healthy since it was first
// seen. An unhealthy test whose evidence now points elsewhere, not decided
// yet, keeps the reason it was decided on.
func Status(tc TestCase, s Settings, now time.Time) TestStatus {
	st := tc.Status
	if st.Value == "" {
		st = TestStatus{Value: Healthy, Timestamp: tc.FirstSeen}
	}
	if st.Value == Healthy {
		st.Reason = HealthyReason(tc, s, now)
	} else if cur := Classify(tc, s, now); cur.Value == st.Value {
		st.Reason = cur.Reason
	}
	return st
}

// Previous is the status value tc had: healthy for a test never classified.
func Previous(tc TestCase) string {
	if tc.Status.Value == "" {
		return Healthy
	}
	return tc.Status.Value
}

// Quarantined applies contract 2.4: a test is quarantined when the
// repository quarantines and either its override says always, or automatic
// quarantine is on and the test is unhealthy and not overridden to never.
func Quarantined(tc TestCase, s Settings) bool {
	if !s.QuarantineEnabled {
		return false
	}
	switch tc.QuarantineCandidate() {
	case AlwaysQuarantine:
		return true
	case AutoQuarantine:
		return s.AutoQuarantine
	}
	return false
}

// monitoredSince is monitored without the runs of the hours up to from
// (zero: none left out), and of the folded days that began before it.
func monitoredSince(tc TestCase, w time.Duration, now, from time.Time) (passed, failed int) {
	after := int64(math.MinInt64)
	if !from.IsZero() {
		after = hourOf(from)
	}
	sum := func(m map[string]int) int {
		n := 0
		for k, c := range m {
			if h, ok := keyNum(k); ok && h > after && inWindowNum(h, time.Hour, w, now) {
				n += c
			}
		}
		return n
	}
	passed, failed = sum(tc.MonitoredPassedByHour), sum(tc.MonitoredFailedByHour)
	for _, d := range []struct {
		m   map[string]int
		sum *int
	}{{tc.MonitoredPassedByDay, &passed}, {tc.MonitoredFailedByDay, &failed}} {
		for k, n := range d.m {
			day, ok := keyNum(k)
			if ok && day*24 > after && inWindowNum(day*24+23, time.Hour, w, now) {
				*d.sum += n
			}
		}
	}
	return passed, failed
}

// monitored sums the monitored runs in the window w ending at now: the
// hours in it, and the folded days whose last hour is in it (a day only
// partly in the window counts whole or not at all, so the failure-rate
// monitor of an ingest may see up to a day more or less at the window's
// far end than a read of the whole test does).
func monitored(tc TestCase, w time.Duration, now time.Time) (passed, failed int) {
	return monitoredSince(tc, w, now, time.Time{})
}

func sumWindow(m map[string]int, w time.Duration, now time.Time) int {
	n := 0
	for k, c := range m {
		if inWindow(k, time.Hour, w, now) {
			n += c
		}
	}
	return n
}

func percent(r float64) string { return strconv.Itoa(int(r*100+0.5)) + "%" }

func window(hours int) string {
	if hours%24 == 0 {
		if hours == 24 {
			return "1 day"
		}
		return strconv.Itoa(hours/24) + " days"
	}
	return strconv.Itoa(hours) + " hours"
}

// lastCommits spells the last n commits: "the last commit", "the last 3
// commits".
func lastCommits(n int) string {
	if n == 1 {
		return "the last commit"
	}
	return fmt.Sprintf("the last %d commits", n)
}

// count spells n with its noun, singular for one: "1 run", "3 runs".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
