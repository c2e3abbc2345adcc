package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
)

func queueRec(name string, active bool) store.QueueRecord {
	repo := repository.Ref{Host: "github.com", Owner: "Acme", Name: name}
	s := mergequeue.NewSnapshot(mergequeue.DefaultQueue(repo, "main"))
	if active {
		s.Entries = []mergequeue.Entry{{ID: "e1", PRNumber: 7, State: mergequeue.Pending}}
	}
	return store.QueueRecord{
		Key: store.QueueKey{Org: "acme", Repo: repo, Branch: "main"},
		ID:  "q-" + name, Snapshot: s,
	}
}

func TestQueueSaveIsConditional(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t, nil)
	r := queueRec("web", false)
	if err := s.CreateQueue(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateQueue(ctx, r); !errs.Is(err, errs.Conflict) {
		t.Fatalf("second create: %v, want conflict", err)
	}
	next := r
	next.Snapshot.Version = 1
	next.Snapshot.Queue.Concurrency = 3
	if err := s.SaveQueue(ctx, next, 0, store.QueueChanges{}); err != nil {
		t.Fatal(err)
	}
	stale := r
	stale.Snapshot.Version = 1
	if err := s.SaveQueue(ctx, stale, 0, store.QueueChanges{}); !errs.Is(err, errs.Conflict) {
		t.Fatalf("save on a stale version: %v, want conflict", err)
	}
	got, err := s.GetQueue(ctx, r.Key)
	if err != nil {
		t.Fatal(err)
	}
	if got.Snapshot.Queue.Concurrency != 3 || got.Snapshot.Version != 1 || got.ID != r.ID {
		t.Errorf("stored %+v", got)
	}
	// Case of github.com owner and name does not matter.
	k := r.Key
	k.Repo.Owner = "ACME"
	if _, err := s.GetQueue(ctx, k); err != nil {
		t.Errorf("lookup in another case: %v", err)
	}
	if err := s.DeleteQueue(ctx, r.Key, 0); !errs.Is(err, errs.Conflict) {
		t.Errorf("delete at a stale version: %v", err)
	}
	if err := s.DeleteQueue(ctx, r.Key, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetQueue(ctx, r.Key); !errs.Is(err, errs.NotFound) {
		t.Errorf("after delete: %v", err)
	}
}

// Only active queues are in the scheduler's index, visited a page at a time.
func TestActiveQueuesPaging(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t, nil)
	var want []string
	for i := range 7 {
		name := fmt.Sprintf("r%d", i)
		active := i%2 == 0
		if err := s.CreateQueue(ctx, queueRec(name, active)); err != nil {
			t.Fatal(err)
		}
		if active {
			want = append(want, strings.ToLower(name))
		}
	}
	var got []string
	cursor := ""
	for range 10 {
		page, next, err := s.ActiveQueues(ctx, cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range page {
			got = append(got, strings.ToLower(q.Key.Repo.Name))
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("active queues (-got +want):\n%s", diff)
	}
	qs, err := s.QueuesOfRepo(ctx, "acme", "R1")
	if err != nil || len(qs) != 1 || qs[0].Key.Repo.Name != "r1" {
		t.Errorf("QueuesOfRepo: %v %+v", err, qs)
	}
}

// Targets larger than an item are chunked and read back whole.
func TestImpactedTargetsChunked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t, time.Now)
	r := queueRec("web", true)
	if err := s.CreateQueue(ctx, r); err != nil {
		t.Fatal(err)
	}
	if _, found, err := s.GetImpactedTargets(ctx, r, 7, "abc"); found || err != nil {
		t.Fatalf("before: found=%v err=%v", found, err)
	}
	// Random names, which gzip cannot shrink below the 300 KB of one chunk:
	// 20,000 × 32 random hex digits is 640 KB, about 350 KB gzipped.
	rng := rand.New(rand.NewPCG(1, 2))
	var targets []string
	for i := range 20000 {
		targets = append(targets, fmt.Sprintf("//pkg/%016x%016x:t%d", rng.Uint64(), rng.Uint64(), i))
	}
	if err := s.PutImpactedTargets(ctx, r, 7, "ABC", store.ImpactedTargets{Targets: targets}); err != nil {
		t.Fatal(err)
	}
	got, found, err := s.GetImpactedTargets(ctx, r, 7, "abc")
	if err != nil || !found {
		t.Fatalf("found=%v err=%v", found, err)
	}
	if diff := cmp.Diff(got.Targets, targets); diff != "" {
		t.Errorf("targets differ (-got +want):\n%.400s", diff)
	}
	if got.Chunks < 2 {
		t.Errorf("the list was held in %d chunk items; the test means to read back several", got.Chunks)
	}
	if err := s.PutImpactedTargets(ctx, r, 7, "abc", store.ImpactedTargets{All: true}); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s.GetImpactedTargets(ctx, r, 7, "abc"); !got.All || len(got.Targets) != 0 {
		t.Errorf("after ALL: %+v", got)
	}
}

func TestGitHubDeliveryClaimedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t, nil)
	for i, want := range []bool{true, false} {
		got, err := s.ClaimGitHubDelivery(ctx, "d-1", time.Now())
		if err != nil || got != want {
			t.Errorf("claim %d: %v %v, want %v", i, got, err, want)
		}
	}
}

// TestLargeSaveWritesEverything: a save with more events than one
// transaction takes (100 actions) commits the snapshot with the first of
// them and writes the rest right after; every event reaches the outbox,
// and the entries and transitions it carries are stored too.
func TestLargeSaveWritesEverything(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t, nil)
	r := queueRec("large", true)
	if err := s.CreateQueue(ctx, r); err != nil {
		t.Fatal(err)
	}
	var ch store.QueueChanges
	for i := range 120 {
		ch.Events = append(ch.Events, store.Event{ID: fmt.Sprintf("evt_%03d", i), Org: "acme", Type: "t", Payload: "{}", CreatedAt: time.Unix(1_700_000_000, 0)})
	}
	at := time.Date(2026, 7, 23, 9, 0, 0, 0, time.UTC)
	ch.Entries = []mergequeue.Entry{{ID: "e1", PRNumber: 7, State: mergequeue.Cancelled, StateChangedAt: at}}
	ch.Transitions = []mergequeue.TransitionRecord{{Transition: mergequeue.Transition{Seq: 1, EntryID: "e1", PRNumber: 7, From: mergequeue.Pending, To: mergequeue.Cancelled, At: at}}}
	next := r
	next.Snapshot.Version = 1
	if err := s.SaveQueue(ctx, next, 0, ch); err != nil {
		t.Fatal(err)
	}
	evs, err := s.PendingEvents(ctx, "acme", 500)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 120 {
		t.Errorf("%d events in the outbox, want 120", len(evs))
	}
	got, err := s.GetQueue(ctx, r.Key)
	if err != nil {
		t.Fatal(err)
	}
	if got.Snapshot.Version != 1 {
		t.Errorf("snapshot version %d, want 1", got.Snapshot.Version)
	}
	stored, err := s.QueueEntry(ctx, store.QueueRecord{Key: r.Key, ID: r.ID}, 7)
	if err != nil || stored.Entry.State != mergequeue.Cancelled {
		t.Errorf("entry: %+v, %v", stored.Entry, err)
	}
	steps, err := s.PRTimeline(ctx, got, 7)
	if err != nil || len(steps) != 1 || steps[0].To != mergequeue.Cancelled {
		t.Errorf("timeline: %+v, %v", steps, err)
	}
}
