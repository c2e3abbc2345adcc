package testhealth

import (
	"sort"
	"strconv"
	"time"
)

// The windows of the contract's figures.
const (
	Day  = 24 * time.Hour
	Week = 7 * Day
)

// HourKey and DayKey name the counters of the hour and day holding t: unix
// hours and unix days in decimal, the keys of TestCase's counter maps.
func HourKey(t time.Time) string { return strconv.FormatInt(hourOf(t), 10) }

// DayKey is the unix day of t in decimal.
func DayKey(t time.Time) string { return strconv.FormatInt(dayOf(t), 10) }

func hourOf(t time.Time) int64 { return t.Unix() / 3600 }
func dayOf(t time.Time) int64  { return t.Unix() / 86400 }

// keyNum reads a counter key, a non-negative decimal number: as
// strconv.ParseInt does, without its error value, as every figure reads
// every key of a test's maps (a few hundred) on every decision.
func keyNum(k string) (int64, bool) {
	if k == "" || len(k) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// inWindow reports whether counter key k (a unix hour or day, of the given
// size) falls in the window of length w ending at now. Counters are whole
// hours or days, so a window starts at the boundary of the bucket holding
// now-w: figures are exact to the bucket.
func inWindow(k string, size, w time.Duration, now time.Time) bool {
	n, ok := keyNum(k)
	return ok && inWindowNum(n, size, w, now)
}

// inWindowNum is inWindow of the bucket numbered n.
func inWindowNum(n int64, size, w time.Duration, now time.Time) bool {
	step := int64(size / time.Second)
	cur := now.Unix() / step
	span := int64(w / size)
	return n > cur-span && n <= cur
}

// FailureRate is failed / (passed + failed) over the window w ending at now,
// 0 when there were no runs. Skipped runs are not counted at all.
func FailureRate(tc TestCase, w time.Duration, now time.Time) float64 {
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
func MostCommonFailures(tc TestCase, n int, now time.Time) []Failure {
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
func PullRequestsImpacted(tc TestCase, now time.Time) int {
	n := 0
	for _, at := range tc.FailedPRs {
		if !at.After(now) && now.Sub(at) < Week {
			n++
		}
	}
	return n
}

// PruneBatch is how many entries that left every window (Prune's count)
// make a write to remove them worth its cost: about half a day of an hourly
// test's counters.
const PruneBatch = 48

// Keep is how long counters stay on a test: the longest window (7 days)
// and one bucket more.
const Keep = Week + Day

// Prune returns tc without what has left every window at now (hour
// counters, cluster days and pull-request failures older than Keep; a
// cluster with no day left) and without the clusters beyond the
// MaxClusters most recent and the pull requests beyond the MaxFailedPRs
// most recent, so that a test's record stays small however long
// it lives. It reports how many entries it dropped (hour counters, cluster
// days, clusters, pull requests); tc is not changed.
func Prune(tc TestCase, now time.Time) (TestCase, int) {
	cut := now.Add(-Keep)
	hour, day := hourOf(cut), dayOf(cut)
	older := func(k string, than int64) bool {
		n, ok := keyNum(k)
		return ok && n < than
	}
	if prunable(tc, cut, older) == 0 {
		return tc, 0 // the common case: nothing to copy
	}
	dropped := 0
	counters := func(m map[string]int) map[string]int {
		out := make(map[string]int, len(m))
		for k, n := range m {
			if older(k, hour) {
				dropped++
				continue
			}
			out[k] = n
		}
		return out
	}
	tc.PassedByHour, tc.FailedByHour = counters(tc.PassedByHour), counters(tc.FailedByHour)
	tc.MonitoredPassedByHour, tc.MonitoredFailedByHour = counters(tc.MonitoredPassedByHour), counters(tc.MonitoredFailedByHour)

	clusters := make(map[string]FailureCluster, len(tc.Failures))
	for k, c := range tc.Failures {
		days := make(map[string]int, len(c.ByDay))
		for d, n := range c.ByDay {
			if older(d, day) {
				dropped++
				continue
			}
			days[d] = n
		}
		if len(days) == 0 {
			dropped++
			continue
		}
		c.ByDay = days
		clusters[k] = c
	}
	if len(clusters) > MaxClusters {
		keys := make([]string, 0, len(clusters))
		for k := range clusters {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			a, b := clusters[keys[i]], clusters[keys[j]]
			if !a.Last.Equal(b.Last) {
				return a.Last.After(b.Last)
			}
			return keys[i] < keys[j]
		})
		for _, k := range keys[MaxClusters:] {
			dropped += 1 + len(clusters[k].ByDay)
			delete(clusters, k)
		}
	}
	tc.Failures = clusters

	prs := make(map[string]time.Time, len(tc.FailedPRs))
	for pr, at := range tc.FailedPRs {
		if at.Before(cut) {
			dropped++
			continue
		}
		prs[pr] = at
	}
	if len(prs) > MaxFailedPRs {
		keys := make([]string, 0, len(prs))
		for pr := range prs {
			keys = append(keys, pr)
		}
		sort.Slice(keys, func(i, j int) bool {
			if a, b := prs[keys[i]], prs[keys[j]]; !a.Equal(b) {
				return a.After(b)
			}
			return keys[i] < keys[j]
		})
		for _, pr := range keys[MaxFailedPRs:] {
			delete(prs, pr)
		}
		dropped += len(keys) - MaxFailedPRs
	}
	tc.FailedPRs = prs
	return tc, dropped
}

// prunable counts what Prune would drop of tc at cut, without copying
// anything: hours, cluster days and pull requests older than cut, and the
// clusters and pull requests beyond the bounds (an upper bound of what goes
// with them).
func prunable(tc TestCase, cut time.Time, older func(string, int64) bool) int {
	hour, day := hourOf(cut), dayOf(cut)
	n := max(len(tc.Failures)-MaxClusters, 0) + max(len(tc.FailedPRs)-MaxFailedPRs, 0)
	for _, m := range []map[string]int{tc.PassedByHour, tc.FailedByHour, tc.MonitoredPassedByHour, tc.MonitoredFailedByHour} {
		for k := range m {
			if older(k, hour) {
				n++
			}
		}
	}
	for _, c := range tc.Failures {
		if len(c.ByDay) == 0 {
			n++
		}
		for d := range c.ByDay {
			if older(d, day) {
				n++
			}
		}
	}
	for _, at := range tc.FailedPRs {
		if at.Before(cut) {
			n++
		}
	}
	return n
}

// PruneDue is Prune when what it would drop makes a write worth it
// (PruneBatch entries, or a bound passed); otherwise tc as it is, with how
// many entries Prune would drop. Every figure ignores what left its
// window, so deciding on tc unpruned decides the same.
func PruneDue(tc TestCase, now time.Time) (TestCase, int) {
	n := prunable(tc, now.Add(-Keep), func(k string, than int64) bool {
		v, ok := keyNum(k)
		return ok && v < than
	})
	if n < PruneBatch && len(tc.Failures) <= MaxClusters && len(tc.FailedPRs) <= MaxFailedPRs {
		return tc, n
	}
	return Prune(tc, now)
}
