package mergequeue

import "time"

// Anti-flake retries (ours, contract 3.7). A single PR's run that failed a
// required status, whose PR has retries left in this episode, does not
// send the PR to PENDING_FAILURE at once: the PR stays TESTING while the
// driver looks up the test results uploaded for the run's head sha
// (EvidenceWanted, Observations.Evidence). With the KNOWN_FLAKY policy the
// run is retried in place when every failed test is flaky or quarantined;
// a healthy or broken failure, or no upload before
// flakyEvidenceWaitSeconds, fails the PR as before. ANY_FAILURE retries any
// failure without reading results. A retry restarts the PR in place (TESTING →
// PENDING, RETRY_KNOWN_FLAKY or RETRY_FAILURE), so the PRs behind, built
// on the same head of it, keep their runs.
//
// A retry is decided only once every PR the run was built on has passed:
// until then the failure may be theirs, and a retry on top of a PR that
// then fails would be spent for nothing (the line restarts the PR anyway).
// While a failed run waits for its evidence, no PR joins the line: it would
// be tested on top of a PR that may be about to fail. The driver looks the
// evidence up at once, so this holds the line only when CI's upload is
// late. A PR known flaky that waits for the PRs ahead does not hold it.

// mayRetry reports whether a failure of e's run can be retried.
func (m *machine) mayRetry(e *Entry, reason string) bool {
	return m.s.Queue.FlakyRetries > 0 && e.Retries < m.s.Queue.FlakyRetries && reason == ReasonStatusFailed
}

// EvidenceWanted is the runs whose PR waits for test health's evidence:
// their ids, head shas and start times (evidence is what was uploaded for
// the head since), for the driver to look up.
func EvidenceWanted(s Snapshot) []Run {
	var out []Run
	for i := range s.Runs {
		if r := &s.Runs[i]; !r.EvidenceDue.IsZero() && r.Evidence == nil && r.Status == RunFailed {
			out = append(out, Run{ID: r.ID, HeadSHA: r.HeadSHA, PRNumber: r.PRNumber, CreatedAt: r.CreatedAt})
		}
	}
	return out
}

// retry decides each failed run that awaits evidence: retry, fail, or
// wait on.
func (m *machine) retry() {
	for i := range m.s.Runs {
		r := &m.s.Runs[i]
		e := m.awaiting(r)
		if e == nil {
			continue
		}
		if ev := m.evidence[r.ID]; ev != nil && r.Evidence == nil {
			r.Evidence = ev
			m.touchRun(r)
		}
		ahead := m.aheadPassed(r)
		switch {
		case !m.mayRetry(e, r.Reason):
			// flakyRetries was lowered while it waited.
			m.failAwaiting(e, r)
		case m.s.Queue.FlakyRetryPolicy == RetryAnyFailure:
			if ahead {
				m.retryRun(e, r, ReasonRetryFailure)
			}
		case r.Evidence.knownFlaky():
			if ahead {
				m.retryRun(e, r, ReasonRetryKnownFlaky)
			}
		case r.Evidence != nil || m.now.After(r.EvidenceDue):
			// A real failure, or none explained in time: as without
			// retries. Strictly after: the step that failed the run has
			// not looked yet, so even a wait of 0 looks once.
			m.failAwaiting(e, r)
		}
	}
}

// failAwaiting ends e's wait on its failed run r without a retry.
func (m *machine) failAwaiting(e *Entry, r *Run) {
	r.EvidenceDue = time.Time{}
	m.touchRun(r)
	m.transition(e, PendingFailure, r.Reason)
}

// awaiting is the entry that still waits on r, a failed run, for a retry
// decision; nil when none does.
func (m *machine) awaiting(r *Run) *Entry {
	if r.EvidenceDue.IsZero() || r.Status != RunFailed {
		return nil
	}
	if e := m.entryOf(r.EntryID, r.PRNumber); e != nil && e.RunID == r.ID && e.State == Testing {
		return e
	}
	return nil
}

// awaitingEvidence reports whether a failed run waits for its evidence
// (KNOWN_FLAKY) to decide on a retry.
func (m *machine) awaitingEvidence() bool {
	if m.s.Queue.FlakyRetries == 0 || m.s.Queue.FlakyRetryPolicy == RetryAnyFailure {
		return false
	}
	for i := range m.s.Runs {
		if r := &m.s.Runs[i]; r.Evidence == nil && m.awaiting(r) != nil {
			return true
		}
	}
	return false
}

// retryRun restarts e in place after its run r failed; its next run
// repeats r.
func (m *machine) retryRun(e *Entry, r *Run, reason string) {
	r.EvidenceDue = time.Time{}
	m.touchRun(r)
	e.Retries++
	m.restart(e, reason, true)
	e.RetryOf = r.ID
}

// repeat makes r the retry of the failed run old: on the same head when r
// tests the same PRs on the same base.
func (m *machine) repeat(r, old *Run) {
	if old == nil {
		return
	}
	r.RetryOf = old.ID
	if old.HeadSHA == "" || old.Direct || old.BaseSHA != r.BaseSHA || len(old.PRs) != len(r.PRs) {
		return
	}
	for i, p := range old.PRs {
		if q := r.PRs[i]; p.EntryID != q.EntryID || p.HeadSHA != q.HeadSHA || p.UnderTest != q.UnderTest {
			return
		}
	}
	r.ReuseSHA, r.Stale = old.HeadSHA, old.FailedChecks
}
