package mergequeue

import "time"

// EpisodeClock is what the metrics must remember of an entry's current
// episode that its last hour of transitions may no longer show: when it
// first became PENDING and TESTING, and how long it has spent in TESTING.
type EpisodeClock struct {
	Episode      int           `json:"ep"`
	FirstPending time.Time     `json:"p,omitzero"`
	FirstTesting time.Time     `json:"t,omitzero"`
	TestingSince time.Time     `json:"s,omitzero"` // zero when not in TESTING
	Tested       time.Duration `json:"d,omitempty"`
}

// TransitionRecord is a stored transition. On a conclusion (to MERGED,
// FAILED or CANCELLED) it also carries its episode's clock: FirstPending
// and FirstTesting (zero when never reached) and Tested, the time spent in
// TESTING.
type TransitionRecord struct {
	Transition   Transition    `json:"tr"`
	FirstPending time.Time     `json:"p,omitzero"`
	FirstTesting time.Time     `json:"t,omitzero"`
	Tested       time.Duration `json:"d,omitempty"`
}

// FoldEpisodes folds the transitions ts (in the order they happened) into
// clocks, the episode clocks of the active entries by entry id, and returns
// the clocks after them (clocks is left as it was) and the records of ts. A
// submit or a new episode starts a clock, a conclusion ends it, and clocks
// of entries no longer active in s are dropped, so the clocks stay as few as
// the active entries.
func FoldEpisodes(clocks map[string]EpisodeClock, s Snapshot, ts []Transition) (map[string]EpisodeClock, []TransitionRecord) {
	next := make(map[string]EpisodeClock, len(clocks))
	for id, c := range clocks {
		next[id] = c
	}
	recs := make([]TransitionRecord, 0, len(ts))
	for _, t := range ts {
		c, ok := next[t.EntryID]
		if !ok || t.From == "" || c.Episode != t.Episode {
			c = EpisodeClock{Episode: t.Episode}
		}
		if t.From == Testing && !c.TestingSince.IsZero() {
			c.Tested += t.At.Sub(c.TestingSince)
			c.TestingSince = time.Time{}
		}
		switch t.To {
		case Pending:
			if c.FirstPending.IsZero() {
				c.FirstPending = t.At
			}
		case Testing:
			if c.FirstTesting.IsZero() {
				c.FirstTesting = t.At
			}
			c.TestingSince = t.At
		}
		rec := TransitionRecord{Transition: t}
		if t.To.Terminal() {
			rec.FirstPending, rec.FirstTesting, rec.Tested = c.FirstPending, c.FirstTesting, c.Tested
			delete(next, t.EntryID)
		} else {
			next[t.EntryID] = c
		}
		recs = append(recs, rec)
	}
	active := map[string]bool{}
	for i := range s.Entries {
		if s.Entries[i].Active() {
			active[s.Entries[i].ID] = true
		}
	}
	for id := range next {
		if !active[id] {
			delete(next, id)
		}
	}
	return next, recs
}
