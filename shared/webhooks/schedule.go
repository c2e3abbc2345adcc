package webhooks

import "time"

// Backoff is the wait before each retry, after the failure before it
// (contract 4). The first attempt goes at once.
var Backoff = [...]time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute,
	2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
}

// MaxAttempts is how many attempts a delivery gets before it is given up.
const MaxAttempts = len(Backoff) + 1

// NextAttempt returns when the attempt after attempt n (1-based), which
// failed at failedAt, is due; false when n was the last one.
func NextAttempt(n int, failedAt time.Time) (time.Time, bool) {
	if n < 1 || n > len(Backoff) {
		return time.Time{}, false
	}
	return failedAt.Add(Backoff[n-1]), true
}
