package mergequeue

import (
	"slices"
	"strconv"
)

// What GitHub shows of a PR in the queue beside its commit status: one PR
// comment (commentsEnabled) and a state label (stateLabelsEnabled). Each
// transition owes a Notify, recorded on the entry (Notice) so that it
// outlives a driver that crashes or a GitHub that does not answer: the
// effect is repeated after RetryInterval, up to MaxNoticeAttempts times,
// until the driver reports it done. A queue owing one stays active, so a
// merged PR's last word reaches GitHub too.

// MaxNoticeAttempts bounds the repeats of one Notify: an hour of GitHub
// not answering, at RetryInterval.
const MaxNoticeAttempts = 30

// notices owes a Notify for every entry that moved in this call, when the
// queue shows anything on GitHub.
func (m *machine) notices() {
	q := m.s.Queue
	if !q.CommentsEnabled && !q.StateLabelsEnabled {
		return
	}
	var order []Entry
	for _, i := range m.changedEntries {
		e := &m.s.Entries[i]
		seq, moved := m.lastSeq[e.ID]
		if !moved {
			continue
		}
		if order == nil {
			order = QueueOrder(m.s)
		}
		key := "notice/" + e.ID + "/" + strconv.FormatInt(seq, 10)
		e.Notice = &Notice{Key: key, RequestedAt: m.now, Attempts: 1, Notify: m.notify(e, order)}
		m.out.Effects = append(m.out.Effects, Effect{Key: key, Kind: EffectNotify, Notify: e.Notice.Notify})
	}
}

// observeNotified settles the notices the driver performed.
func (m *machine) observeNotified(keys []string) {
	for i := range m.s.Entries {
		e := &m.s.Entries[i]
		if e.Notice != nil && slices.Contains(keys, e.Notice.Key) {
			e.Notice = nil
			m.touchEntry(e)
		}
	}
}

// retryNotices repeats the notices unanswered for RetryInterval, and drops
// those asked MaxNoticeAttempts times.
func (m *machine) retryNotices() {
	for i := range m.s.Entries {
		e := &m.s.Entries[i]
		if e.Notice == nil || m.now.Sub(e.Notice.RequestedAt) < RetryInterval {
			continue
		}
		m.touchEntry(e)
		if e.Notice.Attempts >= MaxNoticeAttempts {
			e.Notice = nil
			continue
		}
		n := *e.Notice
		n.Attempts++
		n.RequestedAt = m.now
		e.Notice = &n
		m.out.Effects = append(m.out.Effects, Effect{Key: n.Key, Kind: EffectNotify, Notify: n.Notify})
	}
}

// notify is what e's notice shows, as e is now.
func (m *machine) notify(e *Entry, order []Entry) *Notify {
	q := m.s.Queue.WithRetryDefaults()
	n := &Notify{
		EntryID: e.ID, PRNumber: e.PRNumber, State: e.State, Reason: e.Reason, Priority: e.Priority,
		RunID: e.RunID, Comment: q.CommentsEnabled,
	}
	if i := slices.IndexFunc(order, func(o Entry) bool { return o.ID == e.ID }); i >= 0 {
		n.Position = i + 1
	}
	if q.StateLabelsEnabled {
		n.StateLabel, n.LabelPrefix = StateLabel(q.StateLabelPrefix, e.State), q.StateLabelPrefix
	}
	if r := m.run(e.RunID); r != nil {
		n.TestBranch, n.Lane = r.TestBranch, r.Lane
		if countUnderTest(r) > 1 {
			for _, p := range r.PRs {
				if p.UnderTest {
					n.Batch = append(n.Batch, p.PRNumber)
				}
			}
		}
		for name, st := range r.Checks {
			if st == CheckFailure {
				n.FailedChecks = append(n.FailedChecks, name)
			}
		}
		slices.Sort(n.FailedChecks)
		if r.Evidence != nil {
			n.Evidence = slices.Clone(r.Evidence.Failed)
		}
	}
	return n
}
