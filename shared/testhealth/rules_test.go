package testhealth

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var defaults = SettingsOf(HealthSettings{}, "main")

// attempt counts one upload of one test on commit sha of main into tc, as
// the store does, and returns the commit's record of it for the next
// attempt.
func attempt(tc *TestCase, at time.Time, statuses string, onCommit CommitSoFar) CommitSoFar {
	var runs []Run
	for _, c := range statuses {
		st := "passed"
		if c == 'f' {
			st = "failed"
		}
		runs = append(runs, Run{Status: st})
	}
	t := TallyRuns(UploadRuns{Upload: "u", At: at, Branch: "main", Monitored: true}, runs, onCommit)
	t.Apply(tc, "u", at)
	return CommitSoFar{Failed: onCommit.Failed || t.Failed > 0, Passed: onCommit.Passed || t.Passed > 0}
}

// TestStreakCountsCommitsNotAttempts: a commit counts once towards the
// broken streak however often it is retried, a pass on it ends the
// streak, and its one failed attempt leaves it open until a retry fails
// too or another commit comes.
func TestStreakCountsCommitsNotAttempts(t *testing.T) {
	var tc TestCase
	at := now.Add(-10 * time.Hour)
	step := func(statuses string, c CommitSoFar) CommitSoFar {
		at = at.Add(time.Hour)
		return attempt(&tc, at, statuses, c)
	}
	type state struct {
		Streak int
		Open   bool
	}
	check := func(what string, want state) {
		t.Helper()
		if diff := cmp.Diff(state{tc.Streak, tc.StreakOpen}, want); diff != "" {
			t.Errorf("%s (-got +want):\n%s", what, diff)
		}
	}
	a := step("f", CommitSoFar{})
	check("commit A failed once", state{1, true})
	step("f", a)
	check("A's retry failed too", state{1, false})
	b := step("f", CommitSoFar{})
	check("commit B failed once", state{2, true})
	step("p", b)
	check("B passed on retry", state{0, false})
	step("f", b)
	check("B failed once more after its pass", state{0, false})
	step("ff", CommitSoFar{})
	check("commit C failed twice in one upload (Surefire's rerunFailure)", state{1, false})
	step("fp", CommitSoFar{})
	check("commit D failed and passed in one upload", state{0, false})
	// Three settled commits are broken; the third one open is not yet.
	for range 2 {
		step("f", CommitSoFar{})
	}
	c := step("f", CommitSoFar{})
	if tc.Streak != 3 || !tc.StreakOpen || Classify(tc, defaults, at).Value != Healthy {
		t.Errorf("3 commits, the third not retried: streak %d open %v, %v; want healthy", tc.Streak, tc.StreakOpen, Classify(tc, defaults, at))
	}
	step("f", c)
	if st := Classify(tc, defaults, at); st.Value != Broken || st.Reason != "broken-streak: every attempt failed on the last 3 commits on main" {
		t.Errorf("3 settled commits: %+v", st)
	}
}

// TestBrokenNeverOverridesPassOnRetry: a test that fails every attempt of
// three commits is broken, unless it passed on retry within its window:
// then it is flaky, with its failure rate in the reason.
func TestBrokenNeverOverridesPassOnRetry(t *testing.T) {
	h := HourKey(now.Add(-time.Hour))
	tc := TestCase{
		Streak: 3, LastRun: now.Add(-time.Hour),
		PassedByHour: map[string]int{h: 4}, FailedByHour: map[string]int{h: 8},
		MonitoredPassedByHour: map[string]int{h: 4}, MonitoredFailedByHour: map[string]int{h: 8},
		Flake: &FlakeEvidence{At: now.Add(-6 * Day), SHA: "1a2b3c4d5e", Branch: "main"},
	}
	st := Classify(tc, defaults, now)
	if st.Value != Flaky || !strings.HasPrefix(st.Reason, "pass-on-retry: failed and passed on commit 1a2b3c4 (main), so flaky, not broken, although every attempt failed on the last 3 commits on main; failure rate 67% over 12 runs in 7 days on main; recovery: ") {
		t.Errorf("broken with pass-on-retry evidence in its window: %+v", st)
	}
	tc.Flake.At = now.Add(-8 * Day)
	if st := Classify(tc, defaults, now); st.Value != Broken {
		t.Errorf("broken with evidence out of its window: %+v, want broken", st)
	}
}

func TestRecoveryRuns(t *testing.T) {
	for _, tt := range []struct {
		name                   string
		runs, failures, clean  int
		wantN                  int
		wantRateLo, wantRateHi float64
	}{
		{"one failure in its first 4 runs", 4, 1, 0, 191, 0.0156, 0.0157},
		{"half of 100 runs", 100, 50, 0, 8, 0.312, 0.313},
		{"clean runs since leave the rate alone", 130, 50, 30, 8, 0.312, 0.313},
		{"once in a long history: the ceiling", 10000, 1, 0, MaxRecoveryRuns, 0.0000993, 0.0000995},
		{"evidence from another branch: at least one failure", 20, 0, 20, 239, 0.0124, 0.0126},
		{"fails every run", 10, 70, 0, 1, 1, 1},
	} {
		tc := TestCase{EpisodeRuns: tt.runs, EpisodeFailures: tt.failures, CleanRuns: tt.clean}
		n, r := RecoveryRuns(tc, defaults)
		if n != tt.wantN || r < tt.wantRateLo || r > tt.wantRateHi {
			t.Errorf("%s: n %d, r %v; want %d, r in [%v, %v]", tt.name, n, r, tt.wantN, tt.wantRateLo, tt.wantRateHi)
		}
	}
}

// TestFlakyUntilRecovered: a flaky test whose monitors all resolved stays
// flaky until it has had its clean runs and its recovery days; the reason
// says how many it has and needs. A test that stopped running is let go.
func TestFlakyUntilRecovered(t *testing.T) {
	last := now.Add(-3 * Day)
	tc := TestCase{
		Status:      TestStatus{Value: Flaky, Reason: "pass-on-retry: …", Timestamp: last},
		Flake:       &FlakeEvidence{At: last.Add(-2 * Day), SHA: "abc", Branch: "main"},
		LastFailure: last, LastRun: now.Add(-time.Hour),
		EpisodeRuns: 104, EpisodeFailures: 1, CleanRuns: 100,
	}
	// 1 failure in 4 runs (+60): 191 clean runs asked.
	st := Classify(tc, defaults, now.Add(5*Day))
	if st.Value != Flaky || st.Reason != "recovering: 100 of the 191 clean runs it needs (failure rate 1.6% over its flaky episode)" {
		t.Errorf("100 clean runs of 191: %+v", st)
	}
	tc.EpisodeRuns, tc.CleanRuns = 195, 191
	st = Classify(tc, defaults, now.Add(2*Day))
	if st.Value != Flaky || st.Reason != "recovering: 191 of the 191 clean runs it needs (failure rate 1.6% over its flaky episode), and no sign of flaking until 12:30 UTC, 27 Jul 2026" {
		t.Errorf("enough clean runs within the recovery days: %+v", st)
	}
	if st := Classify(tc, defaults, now.Add(4*Day)); st.Value != Healthy || !strings.HasPrefix(st.Reason, "recovered (was flaky): ") {
		t.Errorf("enough clean runs, recovery days over: %+v", st)
	}
	tc.CleanRuns, tc.LastRun = 5, now.Add(-3*Day)
	if st := Classify(tc, defaults, now.Add(5*Day)); st.Value != Healthy {
		t.Errorf("no run in 8 days: %+v, want healthy", st)
	}
}

// TestDecideStartsAnEpisode: a test made flaky starts its episode with the
// failure-rate window's runs, so its first reason asks clean runs by them.
func TestDecideStartsAnEpisode(t *testing.T) {
	h := HourKey(now.Add(-2 * time.Hour))
	tc := TestCase{
		LastRun: now, FirstSeen: now.Add(-5 * Day),
		PassedByHour: map[string]int{h: 39}, FailedByHour: map[string]int{h: 1},
		MonitoredPassedByHour: map[string]int{h: 39}, MonitoredFailedByHour: map[string]int{h: 1},
		EpisodeRuns: 900, EpisodeFailures: 3, // the lifetime counts a healthy test accumulates
	}
	commit := &CommitResult{SHA: "deadbeef", Branch: "main", FailedAt: now.Add(-time.Minute), PassedAt: now}
	after, _ := Decide(tc, commit, defaults, now)
	if after.Status.Value != Flaky || after.EpisodeRuns != 40 || after.EpisodeFailures != 1 || !EpisodeStarted(tc, after) {
		t.Fatalf("Decide: %+v, episode %d/%d", after.Status, after.EpisodeFailures, after.EpisodeRuns)
	}
	if want := "pass-on-retry: failed and passed on commit deadbee (main); recovery: 0 of the 299 clean runs it needs (failure rate 1.0% over its flaky episode), and no sign of flaking until 12:30 UTC, 30 Jul 2026"; after.Status.Reason != want {
		t.Errorf("reason\n got %q\nwant %q", after.Status.Reason, want)
	}
	// Decided again, still flaky: the episode goes on.
	again, _ := Decide(after, nil, defaults, now.Add(time.Hour))
	if again.EpisodeRuns != 40 || EpisodeStarted(after, again) {
		t.Errorf("a flaky test's episode restarted: %d", again.EpisodeRuns)
	}
}

// TestFixedRegressionIsNotFlaky: a regression fails every run until it is
// fixed; its failures in the window say it was broken, not flaky, and a
// pass leaves it healthy. Failures not passed since do not make a healthy
// test flaky by their rate either: they may be a regression.
func TestFixedRegressionIsNotFlaky(t *testing.T) {
	tc := TestCase{Status: TestStatus{Value: Broken}, LastRun: now, FirstSeen: now.Add(-6 * Day),
		MonitoredPassedByHour: map[string]int{}, MonitoredFailedByHour: map[string]int{}}
	for i := range 30 {
		k := HourKey(now.Add(-time.Duration(40-i) * time.Hour))
		if i < 20 {
			tc.MonitoredPassedByHour[k] = 1
		} else {
			tc.MonitoredFailedByHour[k] = 1
		}
	}
	tc.PassedByHour, tc.FailedByHour = tc.MonitoredPassedByHour, tc.MonitoredFailedByHour
	// The fix passes: the streak ends; a third of the window failed.
	after, _ := Decide(tc, nil, defaults, now)
	if after.Status.Value != Healthy || !after.BrokenUntil.Equal(now) {
		t.Fatalf("fixed regression: %+v, broken until %v", after.Status, after.BrokenUntil)
	}
	later := after
	later.MonitoredPassedByHour[HourKey(now.Add(time.Hour))] = 20
	if st := Classify(later, defaults, now.Add(2*time.Hour)); st.Value != Healthy || !strings.Contains(st.Reason, "failure rate 0% on main") {
		t.Errorf("after the fix, the window's runs since: %+v", st)
	}
	// A healthy test failing two commits in a row, a third of its window:
	// not flaky by its rate while the streak runs.
	tc = TestCase{LastRun: now, MonitoredPassedByHour: map[string]int{HourKey(now.Add(-3 * time.Hour)): 20},
		MonitoredFailedByHour: map[string]int{HourKey(now): 10}, Streak: 2}
	if st := Classify(tc, defaults, now); st.Value != Healthy {
		t.Errorf("failing streak of 2: %+v, want healthy", st)
	}
	tc.Streak = 0
	if st := Classify(tc, defaults, now); st.Value != Flaky || !strings.HasPrefix(st.Reason, "failure-rate: failure rate 33% over 30 runs") {
		t.Errorf("the same rate with passes since: %+v, want flaky", st)
	}
}

// TestQuarantineOverrideEnds: an override with an end applies up to it;
// from then on the repository's rule, and Decide keeps what ended for the
// write that removes it.
func TestQuarantineOverrideEnds(t *testing.T) {
	until, err := ParseUntil("2027-01-31")
	if err != nil || !until.Equal(time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("ParseUntil: %v %v", until, err)
	}
	if at, err := ParseUntil("2027-01-31T10:00:00+02:00"); err != nil || !at.Equal(time.Date(2027, 1, 31, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("ParseUntil of a time: %v %v", at, err)
	}
	if _, err := ParseUntil("next week"); err == nil || !strings.Contains(err.Error(), "2027-01-31") {
		t.Errorf("ParseUntil of nonsense: %v", err)
	}
	tc := TestCase{QuarantineOverride: AlwaysQuarantine, QuarantineUntil: until, LastRun: now}
	s := defaults
	s.QuarantineEnabled = true
	if got := Expire(tc, until.Add(-time.Second)); !Quarantined(got, s) || got.ExpiredOverride != "" {
		t.Errorf("before its end: %+v", got)
	}
	got := Expire(tc, until)
	if Quarantined(got, s) || got.ExpiredOverride != AlwaysQuarantine || got.QuarantineCandidate() != "" {
		t.Errorf("at its end: %+v", got)
	}
	after, _ := Decide(tc, nil, s, until.Add(time.Hour))
	if after.ExpiredOverride != AlwaysQuarantine || after.QuarantineOverride != "" {
		t.Errorf("Decide after the end: %+v", after)
	}
	// A flaky test is quarantined by the rule once its override ends.
	tc.Status.Value = Flaky
	if got := Expire(tc, until); !Quarantined(got, s) || got.QuarantineCandidate() != AutoQuarantine {
		t.Errorf("a flaky test after its override's end: %+v", got)
	}
}

// TestGuardCountsPassOnRetryAsPassed: a test case that failed and passed
// on a retry inside the upload did not fail, whatever how many failed
// attempts came before its pass.
func TestGuardCountsPassOnRetryAsPassed(t *testing.T) {
	g := NewGuardCount(10)
	g.Add("flaky", 0, false, true) // Surefire flakyFailure, flakyFailure, then the pass
	g.Add("flaky", 1, false, true)
	g.Add("flaky", 2, true, false)
	g.Add("broken", 0, false, true)
	g.Add("broken", 1, false, true) // rerunFailure
	g.Add("fine", 0, true, false)
	g.Add("skipped", 0, false, false)
	if cases, failed := g.Counts(); cases != 3 || failed != 1 {
		t.Errorf("counts %d cases, %d failed; want 3 and 1", cases, failed)
	}
	if s := defaults; s.Guarded(g.Counts()) {
		t.Error("1 failed of 3 is guarded")
	}
	// Past the bound, a failed case counts as failed.
	g = NewGuardCount(1)
	g.Add("a", 0, false, true)
	g.Add("b", 0, false, true)
	g.Add("b", 1, true, false)
	if cases, failed := g.Counts(); cases != 2 || failed != 2 {
		t.Errorf("past the bound: %d cases, %d failed; want 2 and 2", cases, failed)
	}
}

// TestGuardNote: a test that failed in an upload the guard set aside says
// so in its reason.
func TestGuardNote(t *testing.T) {
	tc := TestCase{LastUpload: "u-1", LastOutcome: Failed, LastGuarded: true, LastRun: now,
		FailedByHour: map[string]int{HourKey(now): 1}}
	want := "1 failure in 1 run in 7 days; below the failure-rate monitor's 20 runs (0 runs on main); its latest upload, u-1, was set aside by the infrastructure guard (more than 80% of its test cases failed), so its failure there counts in the rates but not for flaky or broken"
	if got := Status(tc, defaults, now).Reason; got != want {
		t.Errorf("reason\n got %q\nwant %q", got, want)
	}
	tc.LastOutcome = Passed
	if got := Status(tc, defaults, now).Reason; strings.Contains(got, "guard") {
		t.Errorf("a test that passed in a guarded upload: %q", got)
	}
}
