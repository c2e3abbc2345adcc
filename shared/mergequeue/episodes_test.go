package mergequeue

import (
	"testing"
	"time"
)

// TestFoldEpisodesCarriesAnEpisodeToItsConclusion folds an entry's
// episode in two steps, as two saves would, and checks that its conclusion
// carries when it first waited and was first tested and its whole time in
// TESTING, although the first step's transitions are gone by then.
func TestFoldEpisodesCarriesAnEpisodeToItsConclusion(t *testing.T) {
	at := time.Date(2026, 7, 23, 1, 0, 0, 0, time.UTC)
	tr := func(from, to PRState, min int) Transition {
		return Transition{EntryID: "e1", Episode: 1, From: from, To: to, At: at.Add(time.Duration(min) * time.Minute)}
	}
	active := Snapshot{Entries: []Entry{{ID: "e1", State: Testing}}}
	clocks, recs := FoldEpisodes(nil, active, []Transition{tr("", Pending, 0), tr(Pending, Testing, 2), tr(Testing, Pending, 12)})
	if len(recs) != 3 || !recs[0].FirstPending.IsZero() {
		t.Fatalf("records before the conclusion: %+v", recs)
	}
	if c := clocks["e1"]; !c.FirstPending.Equal(at) || c.Tested != 10*time.Minute || !c.TestingSince.IsZero() {
		t.Fatalf("clock after the first save: %+v", c)
	}
	before := clocks["e1"]
	done := Snapshot{Entries: []Entry{{ID: "e1", State: Merged}}}
	after, recs := FoldEpisodes(clocks, done, []Transition{tr(Pending, Testing, 20), tr(Testing, Merged, 25)})
	last := recs[len(recs)-1]
	if !last.FirstPending.Equal(at) || !last.FirstTesting.Equal(at.Add(2*time.Minute)) || last.Tested != 15*time.Minute {
		t.Errorf("conclusion: %+v, want first pending %v, first testing 2 min later, 15 min tested", last, at)
	}
	if len(after) != 0 {
		t.Errorf("a concluded entry keeps a clock: %+v", after)
	}
	if clocks["e1"] != before {
		t.Error("FoldEpisodes changed the clocks it was given")
	}
	if next, _ := FoldEpisodes(map[string]EpisodeClock{"gone": {Episode: 1}}, done, nil); len(next) != 0 {
		t.Errorf("the clock of an entry no longer active is kept: %+v", next)
	}
}
