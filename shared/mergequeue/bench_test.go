package mergequeue

import (
	"fmt"
	"testing"
)

// benchQueue is a queue of n submitted PRs, the first 25 testing (their
// checks pending), the rest PENDING; obs is what a driver would observe
// next: every PR, the head, and the pending checks.
func benchQueue(b *testing.B, n int) (Snapshot, Observations, *sim) {
	b.Helper()
	s := newSim(b, 25)
	for pr := 1; pr <= n; pr++ {
		s.w.openPR(pr)
		s.w.hold[pr] = true
		s.submit(pr, nil)
	}
	s.steps(3)
	return s.snap, s.w.observe(s.snap), s
}

// BenchmarkStep measures one Step at three queue sizes; the clone
// sub-benchmark is the floor (copying the snapshot) to read them against.
func BenchmarkStep(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		snap, obs, s := benchQueue(b, n)
		b.Run(fmt.Sprintf("prs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Step(snap, obs, s.now, s.newID)
			}
		})
		if n == 1000 {
			b.Run("clone-baseline/prs=1000", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					_ = clone(snap)
				}
			})
		}
	}
}
