package store

import (
	"fmt"
	"testing"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// BenchmarkSnapshotRoundTrip is a queue write's and read's snapshot work:
// a queue of 50 entries with their transitions gzipped as JSON and read
// back, as SaveQueue and readQueue do. Compare B/op between commits with
// benchstat.
func BenchmarkSnapshotRoundTrip(b *testing.B) {
	s := mergequeue.Snapshot{TargetHead: fmt.Sprintf("%040d", 1), Version: 7}
	for i := range 50 {
		s.Entries = append(s.Entries, mergequeue.Entry{ID: fmt.Sprintf("entry-%036d", i), PRNumber: i + 1, State: mergequeue.Pending})
		s.Transitions = append(s.Transitions, mergequeue.Transition{PRNumber: i + 1, To: mergequeue.Pending})
	}
	b.ReportAllocs()
	for b.Loop() {
		raw, err := encodeSnapshot(s)
		if err != nil {
			b.Fatal(err)
		}
		var back mergequeue.Snapshot
		if err := decodeSnapshot(raw, &back); err != nil {
			b.Fatal(err)
		}
		if len(back.Entries) != len(s.Entries) {
			b.Fatalf("%d entries back, want %d", len(back.Entries), len(s.Entries))
		}
	}
}
