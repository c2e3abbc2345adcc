package mergequeue

import (
	"slices"
	"strings"
)

// reasonWords says each reason the engine gives (the Reason constants) in
// words for people: the web app shows these, with the code beside them for
// whoever searches the API's events. ReasonStatusFailed is said by
// ReasonWords, which names the statuses.
var reasonWords = map[string]string{
	ReasonAPIRequested: "submitted on request (the API, a comment command or the web app)",

	ReasonNowReady:               "now ready to be tested",
	ReasonManualPush:             "someone pushed to the target branch: tested again on its new head",
	ReasonPrerequisiteCancelled:  "a pull request ahead of it was cancelled: tested again without it",
	ReasonPrerequisiteFailed:     "a pull request ahead of it failed: tested again without it",
	ReasonPrerequisiteManualMerg: "a pull request ahead of it was merged by hand: tested again",
	ReasonRestartedByUser:        "its tests were restarted by a person",
	ReasonRestartedByAPI:         "its tests were restarted on request",
	ReasonSkipTheLine:            "a pull request of higher priority went ahead of it: tested again behind it",

	ReasonMergeConflict:      "merge conflict: the test branch could not be built",
	ReasonNoRequiredStatuses: "no required status to wait for (set requiredStatuses, or required checks in branch protection)",
	ReasonStatusFailed:       "a required status failed on the test run",
	ReasonTimeout:            "the test run took longer than the testing timeout",
	ReasonMergeFailed:        "GitHub refused to merge it",

	ReasonUserRequested:  "cancelled on request",
	ReasonPRClosed:       "the pull request was closed",
	ReasonPRPushedTo:     "new commits were pushed to the pull request",
	ReasonBaseChanged:    "the pull request's base branch changed",
	ReasonConvertedDraft: "the pull request was converted to a draft",

	ReasonMergeGraphMerge: "merged by the queue once its tests passed",
	ReasonManualMerge:     "merged by hand, outside the queue",
	ReasonDirectMerge:     "merged directly: up to date with the target branch, its own checks passed",

	ReasonTestRunStarted:     "its test run started",
	ReasonTestRunPassed:      "its test run passed",
	ReasonLaterRunPassed:     "a later pull request's test run, which included it, passed",
	ReasonDirectChecksPassed: "its own checks passed on a head up to date with the target branch",
	ReasonBisectionSettled:   "not needed: the bisection found the culprit without it",

	ReasonRetryKnownFlaky: "retried: every test that failed is known to be flaky or is quarantined",
	ReasonRetryFailure:    "retried after a failure: the queue retries any failure (its flaky retry policy)",
}

// ReasonWords says reason in words for people. For a failed required
// status it names the statuses that failed, when failed gives them; a
// reason it does not know (none today) is its code in lower case, words
// apart, so a person never meets a bare code.
func ReasonWords(reason string, failed ...string) string {
	if reason == ReasonStatusFailed && len(failed) > 0 {
		names := slices.Sorted(slices.Values(failed))
		noun := "status"
		if len(names) > 1 {
			noun = "statuses"
		}
		return "required " + noun + " " + strings.Join(names, ", ") + " failed on the test run"
	}
	if w, ok := reasonWords[reason]; ok {
		return w
	}
	return strings.ToLower(strings.ReplaceAll(reason, "_", " "))
}

// FailedStatuses are the required statuses that failed on r, by name.
func (r Run) FailedStatuses() []string {
	var out []string
	for _, name := range r.RequiredStatuses {
		if r.Checks[name] == CheckFailure {
			out = append(out, name)
		}
	}
	return out
}
