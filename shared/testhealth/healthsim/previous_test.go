package healthsim

import (
	"strconv"
	"time"

	"github.com/mainguard/mainguard/shared/testhealth"
)

// The classifier before issue 32 (commit 321f839), kept only to compare
// with the current one on the same history (TestDefaultHistory): its
// decision (healthsvc's decide then: prune, flake evidence, Classify) and
// its counting (the store's recordTest then). This is a frozen copy of
// that code, the status values only (reasons left out); it is not used
// anywhere else and is not to be changed.

// previousStreak was the broken-streak monitor's default: 5 runs.
const previousStreak = 5

// previous is the classifier before issue 32 under the repository settings
// h (with the defaults of then).
func previous(h testhealth.HealthSettings) Classifier {
	s := testhealth.SettingsOf(h, "main")
	if h.Streak == nil {
		s.Streak = previousStreak
	}
	return Classifier{
		Name:     "before (321f839)",
		Settings: s,
		Count: func(tc *testhealth.TestCase, up testhealth.UploadRuns, runs []testhealth.Run, _ testhealth.CommitSoFar) {
			previousCount(tc, up, runs, s)
		},
		Decide: func(tc testhealth.TestCase, commit *testhealth.CommitResult, now time.Time) testhealth.TestCase {
			after, _ := testhealth.Prune(tc, now)
			if commit != nil && s.PassOnRetry {
				if at, ok := commit.Flaky(); ok && (tc.Flake == nil || at.After(tc.Flake.At)) {
					after.Flake = &testhealth.FlakeEvidence{At: at, SHA: commit.SHA, Branch: commit.Branch}
				}
			}
			after.Status = testhealth.TestStatus{Value: previousClassify(after, s, now)}
			return after
		},
	}
}

// previousCount is what the store's recordTest counted: the hour's runs,
// and the streak over runs on the default branch outside guarded uploads,
// run by run (a pass sets it to 0, a failure adds one).
func previousCount(tc *testhealth.TestCase, up testhealth.UploadRuns, runs []testhealth.Run, s testhealth.Settings) {
	h := testhealth.HourKey(up.At)
	add := func(m *map[string]int, n int) {
		if n == 0 {
			return
		}
		if *m == nil {
			*m = map[string]int{}
		}
		(*m)[h] += n
	}
	streak, reset := 0, false
	for _, r := range runs {
		switch {
		case r.Status == "passed":
			streak, reset = 0, true
			add(&tc.PassedByHour, 1)
			if up.Monitored {
				add(&tc.MonitoredPassedByHour, 1)
			}
		case r.Failed():
			streak++
			add(&tc.FailedByHour, 1)
			if up.Monitored {
				add(&tc.MonitoredFailedByHour, 1)
			}
		}
	}
	if !up.Guarded && up.Branch == s.DefaultBranch {
		if reset {
			tc.Streak = streak
		} else {
			tc.Streak += streak
		}
	}
	tc.LastRun = up.At
}

// previousClassify is the value of Classify then: the worst active monitor.
func previousClassify(tc testhealth.TestCase, s testhealth.Settings, now time.Time) string {
	prev := tc.Status.Value
	value := testhealth.Healthy
	rank := map[string]int{testhealth.Healthy: 0, testhealth.Flaky: 1, testhealth.Broken: 2}
	flag := func(v string) {
		if rank[v] > rank[value] {
			value = v
		}
	}
	if s.BrokenStreak && tc.Streak >= s.Streak {
		flag(testhealth.Broken)
	}
	if s.FailureRate {
		w := time.Duration(s.WindowHours) * time.Hour
		passed, failed := previousMonitored(tc, w, now)
		fresh := !tc.LastRun.IsZero() && now.Sub(tc.LastRun) < time.Duration(s.StaleHours)*time.Hour
		if runs := passed + failed; fresh && runs >= s.MinRuns {
			rate := float64(failed) / float64(runs)
			brokenAt, flakyAt := s.BrokenThreshold, s.FlakyThreshold
			if prev == testhealth.Broken {
				brokenAt = s.BrokenResolution
			}
			if prev == testhealth.Flaky || prev == testhealth.Broken {
				flakyAt = s.FlakyResolution
			}
			switch {
			case rate >= brokenAt:
				flag(testhealth.Broken)
			case rate >= flakyAt:
				flag(testhealth.Flaky)
			}
		}
	}
	if s.PassOnRetry && tc.Flake != nil && now.Sub(tc.Flake.At) < time.Duration(s.RecoveryDays)*testhealth.Day {
		flag(testhealth.Flaky)
	}
	return value
}

func previousMonitored(tc testhealth.TestCase, w time.Duration, now time.Time) (passed, failed int) {
	passed, failed = previousSum(tc.MonitoredPassedByHour, w, now), previousSum(tc.MonitoredFailedByHour, w, now)
	for _, d := range []struct {
		m   map[string]int
		sum *int
	}{{tc.MonitoredPassedByDay, &passed}, {tc.MonitoredFailedByDay, &failed}} {
		for k, n := range d.m {
			day, err := strconv.ParseInt(k, 10, 64)
			if err == nil && previousInWindow(day*24+23, w, now) {
				*d.sum += n
			}
		}
	}
	return passed, failed
}

func previousSum(m map[string]int, w time.Duration, now time.Time) int {
	n := 0
	for k, c := range m {
		if h, err := strconv.ParseInt(k, 10, 64); err == nil && previousInWindow(h, w, now) {
			n += c
		}
	}
	return n
}

func previousInWindow(hour int64, w time.Duration, now time.Time) bool {
	cur := now.Unix() / 3600
	return hour > cur-int64(w/time.Hour) && hour <= cur
}
