package mergequeue

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// stepUntilIntent steps a one-PR queue until its merge intent is saved and
// returns the merge effect without performing it.
func stepUntilIntent(t *testing.T, s *sim) Effect {
	t.Helper()
	s.submit(1, nil)
	for range 10 {
		obs := s.w.observe(s.snap)
		snap, out := Step(s.snap, obs, s.now, s.newID)
		s.snap = snap
		s.record(out)
		for _, e := range out.Effects {
			if e.Kind == EffectMergePR {
				if in := s.snap.Entries[0].Intent; in == nil || in.Key != e.Key {
					t.Fatalf("merge effect %s not backed by the saved intent %+v", e.Key, in)
				}
				return e
			}
		}
		s.w.apply(out.Effects)
		s.now = s.now.Add(10 * time.Second)
	}
	t.Fatal("no merge asked for")
	return Effect{}
}

func TestMergeEffectLostIsRetried(t *testing.T) {
	s := newSim(t, 1)
	merge := stepUntilIntent(t, s) // saved, then crashed: never performed
	s.now = s.now.Add(RetryInterval - time.Second)
	if out := s.step(); len(out.Effects) != 0 {
		t.Errorf("effects before the retry interval: %+v", out.Effects)
	}
	s.now = s.now.Add(time.Second)
	out := s.step()
	out.Effects = slices.DeleteFunc(out.Effects, func(e Effect) bool { return e.Kind == EffectNotify }) // the PR comment, also owed
	if len(out.Effects) != 1 || out.Effects[0].Key != merge.Key || out.Effects[0].MergePR.Attempt != 2 {
		t.Fatalf("retry effects = %+v, want the same merge, attempt 2", out.Effects)
	}
	s.steps(2)
	if got := s.entry(1); got.State != Merged || got.Reason != ReasonMergeGraphMerge {
		t.Errorf("PR 1 = %s %s", got.State, got.Reason)
	}
}

func TestMergePerformedButUnrecorded(t *testing.T) {
	s := newSim(t, 1)
	merge := stepUntilIntent(t, s)
	s.w.apply([]Effect{merge})
	s.w.pendingMerges = nil // crashed before reporting the outcome
	s.now = s.now.Add(RetryInterval)
	out := s.step()
	for _, e := range out.Effects {
		if e.Kind == EffectMergePR {
			t.Errorf("merge asked again for a PR seen merged: %+v", e.MergePR)
		}
	}
	if got := s.entry(1); got.State != Merged || got.Reason != ReasonMergeGraphMerge || got.VerifiedByTestRun == "" {
		t.Errorf("PR 1 = %+v; want MERGED by the queue with its run", got)
	}
	if len(s.w.merges) != 1 || s.snap.BaseEpoch != 0 {
		t.Errorf("merges %v, epoch %d; want one merge and no foreign change", s.w.merges, s.snap.BaseEpoch)
	}
}

func TestRetriedMergeFailsButPRIsMerged(t *testing.T) {
	s := newSim(t, 1)
	merge := stepUntilIntent(t, s)
	s.w.apply([]Effect{merge, merge}) // the retry of a merge that went through fails
	s.step()
	if got := s.entry(1); got.State != Merged || got.Reason != ReasonMergeGraphMerge {
		t.Errorf("PR 1 = %s %s; a failed retry of a done merge is no failure", got.State, got.Reason)
	}
}

func TestCancelWaitsForMergeOutcome(t *testing.T) {
	for _, performed := range []bool{true, false} {
		t.Run(fmt.Sprint("performed=", performed), func(t *testing.T) {
			s := newSim(t, 1)
			merge := stepUntilIntent(t, s)
			s.cancel(1)
			if got := s.state(1); got != TestsPassed {
				t.Fatalf("PR 1 = %s right after cancel; the merge is in flight", got)
			}
			if performed {
				s.w.apply([]Effect{merge})
			} else {
				s.w.push(1) // the pinned merge can no longer succeed
				s.w.apply([]Effect{merge})
			}
			s.step()
			want := Cancelled
			if performed {
				want = Merged
			}
			if got := s.state(1); got != want {
				t.Errorf("PR 1 = %s, want %s", got, want)
			}
		})
	}
}

func TestStepIsPureAndDeterministic(t *testing.T) {
	s := newSim(t, 3)
	for pr := 1; pr <= 4; pr++ {
		s.submit(pr, nil)
	}
	s.steps(2)
	before := s.snap
	keep := fmt.Sprintf("%+v", before)
	obs := s.w.observe(s.snap)
	ids := func() func() string {
		n := 0
		return func() string { n++; return fmt.Sprintf("run-%d", n) }
	}
	a, outA := Step(before, obs, s.now, ids())
	b, outB := Step(before, obs, s.now, ids())
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two steps of one snapshot differ (-a +b):\n%s", diff)
	}
	if diff := cmp.Diff(outA, outB); diff != "" {
		t.Errorf("two outputs differ (-a +b):\n%s", diff)
	}
	if got := fmt.Sprintf("%+v", before); got != keep {
		t.Error("Step changed the snapshot passed in")
	}
	if a.Version != before.Version+1 {
		t.Errorf("version %d after %d", a.Version, before.Version)
	}
}
