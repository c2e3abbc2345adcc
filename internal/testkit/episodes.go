package testkit

import (
	"cmp"
	"slices"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// QueueHistory is the transition records the engine would have kept of a
// queue's whole history ts (in any order): each entry's transitions in
// time order, its episodes numbered from 1 and a new one after each
// conclusion, folded through mergequeue.FoldEpisodes with every entry
// active until it concludes. Tests of the metrics read a window from it
// to compare with what a store's last hour of records gives.
func QueueHistory(ts []mergequeue.Transition) []mergequeue.TransitionRecord {
	ts = slices.Clone(ts)
	slices.SortStableFunc(ts, func(a, b mergequeue.Transition) int {
		return cmp.Or(cmp.Compare(a.EntryID, b.EntryID), a.At.Compare(b.At))
	})
	episode := map[string]int{}
	concluded := map[string]bool{}
	var snap mergequeue.Snapshot
	for i := range ts {
		id := ts[i].EntryID
		if episode[id] == 0 {
			snap.Entries = append(snap.Entries, mergequeue.Entry{ID: id, State: mergequeue.Pending})
		}
		if episode[id] == 0 || concluded[id] {
			episode[id]++
		}
		concluded[id] = ts[i].To.Terminal()
		ts[i].Episode = episode[id]
	}
	slices.SortStableFunc(ts, func(a, b mergequeue.Transition) int { return a.At.Compare(b.At) })
	_, recs := mergequeue.FoldEpisodes(nil, snap, ts)
	return recs
}
