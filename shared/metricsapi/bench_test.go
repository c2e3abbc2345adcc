package metricsapi_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/metricsapi"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
)

// BenchmarkMetrics100Queues reads the metrics of an organization with 100
// queues (10 repositories of 10 branches; each queue has 5 active entries
// and 60 transitions in the hour: 20 episodes submitted, tested and
// concluded) beside the baseline of one Query of one queue's transitions.
// ddb-calls/op is the DynamoDB calls of one request.
func BenchmarkMetrics100Queues(b *testing.B) {
	db, table := storetest.NewTable(b)
	now := time.Date(2026, 7, 23, 12, 0, 0, 0, time.UTC)
	s := store.New(db, table, func() time.Time { return now })
	ctx := context.Background()
	if _, err := s.CreateOrg(ctx, "acme", ""); err != nil {
		b.Fatal(err)
	}
	var first store.QueueRecord
	for r := range 10 {
		ref := repository.Ref{Host: "github.com", Owner: "acme", Name: fmt.Sprintf("repo%02d", r)}
		if _, err := s.UpdateRepo(ctx, "acme", ref, store.RepoSettings{}); err != nil {
			b.Fatal(err)
		}
		for br := range 10 {
			rec := benchQueue(b, s, ref, fmt.Sprintf("branch%02d", br), now)
			if r == 0 && br == 0 {
				first = rec
			}
		}
	}
	b.Run("baseline one Query", func(b *testing.B) {
		calls := 0
		for b.Loop() {
			c, u := store.WithUsage(ctx)
			if _, err := s.QueueTransitions(c, first, now.Add(-time.Hour)); err != nil {
				b.Fatal(err)
			}
			n, _ := u.Snapshot()
			calls = n
		}
		b.ReportMetric(float64(calls), "ddb-calls/op")
	})
	for _, p := range []int{1, metricsapi.DefaultParallel} {
		b.Run(fmt.Sprintf("metrics of 100 queues, %d in flight", p), func(b *testing.B) {
			h := &metricsapi.Handler{Store: s, Now: func() time.Time { return now }, Parallel: p}
			calls := 0
			for b.Loop() {
				c, u := store.WithUsage(ctx)
				qs, err := h.Queues(c, "acme", nil)
				if err != nil || len(qs) != 100 {
					b.Fatalf("%d queues, %v", len(qs), err)
				}
				n, _ := u.Snapshot()
				calls = n
			}
			b.ReportMetric(float64(calls), "ddb-calls/op")
		})
	}
}

// benchQueue stores a queue whose snapshot holds 5 active entries and
// whose last hour holds 20 concluded episodes (60 transitions).
func benchQueue(b *testing.B, s *store.Store, ref repository.Ref, branch string, now time.Time) store.QueueRecord {
	b.Helper()
	ctx := context.Background()
	k := store.QueueKey{Org: "acme", Repo: ref, Branch: branch}
	snap := mergequeue.NewSnapshot(mergequeue.DefaultQueue(ref, branch))
	rec := store.QueueRecord{Key: k, ID: "q-" + ref.Name + "-" + branch, CreatedAt: now.Add(-2 * time.Hour), Snapshot: snap}
	if err := s.CreateQueue(ctx, rec); err != nil {
		b.Fatal(err)
	}
	var ts []mergequeue.Transition
	seq := int64(0)
	add := func(id string, at time.Time, from, to mergequeue.PRState) {
		seq++
		ts = append(ts, mergequeue.Transition{Seq: seq, EntryID: id, Episode: 1, From: from, To: to, At: at})
	}
	for i := range 20 {
		id := fmt.Sprintf("e%02d", i)
		at := now.Add(-55*time.Minute + time.Duration(i)*2*time.Minute)
		add(id, at, mergequeue.NotReady, mergequeue.Pending)
		add(id, at.Add(time.Minute), mergequeue.Pending, mergequeue.Testing)
		add(id, at.Add(90*time.Second), mergequeue.Testing, mergequeue.Merged)
	}
	for i := range 5 {
		snap.Entries = append(snap.Entries, mergequeue.Entry{ID: fmt.Sprintf("a%d", i), PRNumber: 100 + i, Episode: 1, State: mergequeue.Pending})
	}
	snap.Version = 1
	next, recs := rec.Advance(snap, ts)
	if err := s.SaveQueue(ctx, next, 0, store.QueueChanges{Transitions: recs}); err != nil {
		b.Fatal(err)
	}
	return next
}
