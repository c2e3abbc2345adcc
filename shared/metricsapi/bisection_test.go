package metricsapi

import (
	"testing"
	"time"

	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/queuemetrics"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
)

// TestBisectionSeries: a batching queue has a bisection series beside its
// main one: the PRs testing in a batch being bisected, and the PRs whose
// conclusion a bisection run decided in the hour (the main series counts
// every conclusion). A queue that does not batch has none.
func TestBisectionSeries(t *testing.T) {
	now := time.Date(2026, 7, 23, 12, 0, 0, 0, time.UTC)
	q := mergequeue.DefaultQueue(repository.Ref{Host: "github.com", Owner: "acme", Name: "web"}, "main")
	q.Batch = true
	rec := store.QueueRecord{Key: store.QueueKey{Repo: q.Repo, Branch: "main"}, Snapshot: mergequeue.Snapshot{
		Queue: q,
		Entries: []mergequeue.Entry{
			{ID: "a", State: mergequeue.Testing, RunID: "batch"},
			{ID: "b", State: mergequeue.Testing, RunID: "batch"},
			{ID: "c", State: mergequeue.Testing, RunID: "other"},
		},
		Runs: []mergequeue.Run{
			{ID: "batch", Status: mergequeue.RunFailed, Bisect: &mergequeue.Bisection{Hi: 2}},
			{ID: "other", Status: mergequeue.RunInProgress},
		},
	}}
	at := now.Add(-10 * time.Minute)
	ts := []mergequeue.TransitionRecord{
		{Transition: mergequeue.Transition{EntryID: "x", From: mergequeue.TestsPassed, To: mergequeue.Merged, At: at, Bisection: true}},
		{Transition: mergequeue.Transition{EntryID: "y", From: mergequeue.PendingFailure, To: mergequeue.Failed, At: at, Bisection: true}},
		{Transition: mergequeue.Transition{EntryID: "z", From: mergequeue.TestsPassed, To: mergequeue.Merged, At: at}},
	}
	qs := queuesOf(rec, now, ts)
	if len(qs) != 2 || qs[0].Type != queuemetrics.QueueMain || qs[1].Type != queuemetrics.QueueBisection {
		t.Fatalf("series: %+v", qs)
	}
	if main, bis := qs[0], qs[1]; main.States[mergequeue.Testing] != 3 || len(main.Window.Concluded) != 3 ||
		bis.States[mergequeue.Testing] != 2 || len(bis.Window.Concluded) != 2 {
		t.Errorf("main: %v testing, %d concluded; bisection: %v testing, %d concluded; want 3, 3; 2, 2",
			main.States[mergequeue.Testing], len(main.Window.Concluded), bis.States[mergequeue.Testing], len(bis.Window.Concluded))
	}
	rec.Snapshot.Queue.Batch = false
	if qs := queuesOf(rec, now, ts); len(qs) != 1 {
		t.Errorf("a queue without batching has %d series", len(qs))
	}
}
