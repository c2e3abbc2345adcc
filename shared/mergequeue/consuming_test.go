package mergequeue

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestConsumingIsStepAndSubmit holds StepConsuming and SubmitConsuming,
// which the simulator uses, to Step and Submit: step after step of a queue
// whose PRs merge and fail (finished entries kept beside active ones,
// pruned after a day), each gives the same snapshot and output from a
// copy of the snapshot.
func TestConsumingIsStepAndSubmit(t *testing.T) {
	s := newSim(t, 4)
	ids := func() func() string {
		n := 0
		return func() string { n++; return fmt.Sprintf("%08x-0000-4000-8000-000000000000", n) }
	}
	most := 0 // finished entries in the snapshot at once
	for pr := 1; pr <= 60; pr++ {
		s.w.openPR(pr)
		if pr%7 == 0 {
			s.w.bad[pr] = true
		}
		req := SubmitRequest{PRNumber: pr}
		want, wantOut, err := Submit(s.snap, req, s.now, ids())
		if err != nil {
			t.Fatal(err)
		}
		got, gotOut, err := SubmitConsuming(clone(s.snap), req, s.now, ids())
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(got, want); d != "" {
			t.Fatalf("submit %d: snapshot differs (-consuming +submit):\n%s", pr, d)
		}
		if d := cmp.Diff(gotOut, wantOut); d != "" {
			t.Fatalf("submit %d: output differs (-consuming +submit):\n%s", pr, d)
		}
		s.submit(pr, nil)
		for range 6 {
			obs := s.w.observe(s.snap)
			want, wantOut := Step(s.snap, obs, s.now, ids())
			got, gotOut := StepConsuming(clone(s.snap), obs, s.now, ids())
			if d := cmp.Diff(got, want); d != "" {
				t.Fatalf("after PR %d: snapshot differs (-consuming +step):\n%s", pr, d)
			}
			if d := cmp.Diff(gotOut, wantOut); d != "" {
				t.Fatalf("after PR %d: output differs (-consuming +step):\n%s", pr, d)
			}
			s.step()
			s.now = s.now.Add(20 * time.Minute)
			finished := 0
			for _, e := range s.snap.Entries {
				if e.State.Terminal() {
					finished++
				}
			}
			most = max(most, finished)
		}
	}
	if most < 3 || len(s.snap.Entries) == 60 {
		t.Errorf("at most %d finished entries at once, %d of 60 kept: the comparison saw too few finished or pruned entries", most, len(s.snap.Entries))
	}
}
