package testhealth

import (
	"sort"
	"strconv"
	"time"

	"github.com/mainguard/mainguard/shared/store"
)

// The windows of the contract's figures.
const (
	Day  = 24 * time.Hour
	Week = 7 * Day
)

// HourKey and DayKey name the counters of the hour and day holding t: unix
// hours and unix days in decimal, the keys of TestCase's counter maps.
func HourKey(t time.Time) string { return strconv.FormatInt(t.Unix()/3600, 10) }

// DayKey is the unix day of t in decimal.
func DayKey(t time.Time) string { return strconv.FormatInt(t.Unix()/86400, 10) }

// inWindow reports whether counter key k (a unix hour or day, of the given
// size) falls in the window of length w ending at now. Counters are whole
// hours or days, so a window starts at the boundary of the bucket holding
// now-w: figures are exact to the bucket.
func inWindow(k string, size, w time.Duration, now time.Time) bool {
	n, err := strconv.ParseInt(k, 10, 64)
	if err != nil {
		return false
	}
	step := int64(size / time.Second)
	cur := now.Unix() / step
	span := int64(w / size)
	return n > cur-span && n <= cur
}

// FailureRate is failed / (passed + failed) over the window w ending at now,
// 0 when there were no runs. Skipped runs are not counted at all.
func FailureRate(tc store.TestCase, w time.Duration, now time.Time) float64 {
	passed, failed := 0, 0
	for k, n := range tc.PassedByHour {
		if inWindow(k, time.Hour, w, now) {
			passed += n
		}
	}
	for k, n := range tc.FailedByHour {
		if inWindow(k, time.Hour, w, now) {
			failed += n
		}
	}
	if passed+failed == 0 {
		return 0
	}
	return float64(failed) / float64(passed+failed)
}

// Failure is one cluster as the API shows it.
type Failure struct {
	Summary string
	Count   int
	Last    time.Time
}

// MostCommonFailures returns up to n clusters with occurrences in the last
// 7 days, most frequent first (then most recent, then by text, so the order
// is stable).
func MostCommonFailures(tc store.TestCase, n int, now time.Time) []Failure {
	out := []Failure{}
	for _, c := range tc.Failures {
		count := 0
		for d, k := range c.ByDay {
			if inWindow(d, Day, Week, now) {
				count += k
			}
		}
		if count > 0 {
			out = append(out, Failure{Summary: c.Summary, Count: count, Last: c.Last})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if !a.Last.Equal(b.Last) {
			return a.Last.After(b.Last)
		}
		return a.Summary < b.Summary
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// PullRequestsImpacted counts distinct pull requests with a failed run of
// the test in the 7 days before now.
func PullRequestsImpacted(tc store.TestCase, now time.Time) int {
	n := 0
	for _, at := range tc.FailedPRs {
		if !at.After(now) && now.Sub(at) < Week {
			n++
		}
	}
	return n
}
