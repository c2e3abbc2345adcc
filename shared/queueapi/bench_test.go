package queueapi_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/queuesvc"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
)

// stillGitHub is a GitHub where nothing happens: every PR is an open
// draft, the target head never moves. It stands in for GitHub so that the
// benchmark measures the store side of a tick.
type stillGitHub struct{ queuesvc.Unconfigured }

func (stillGitHub) PullRequest(_ context.Context, _ github.Repo, n int) (github.PullRequest, error) {
	return github.PullRequest{Number: n, HeadSHA: "feed", BaseRef: "main", Open: true, Draft: true, Mergeability: github.Mergeable}, nil
}
func (stillGitHub) BranchHead(context.Context, github.Repo, string) (string, error) {
	return "base", nil
}
func (stillGitHub) RequiredChecks(context.Context, github.Repo, string) ([]github.RequiredCheck, error) {
	return []github.RequiredCheck{{Context: "ci"}}, nil
}

// seedQueues creates n queues; with a submitted (draft) PR each when busy.
func seedQueues(b testing.TB, st *store.Store, n int, busy bool) {
	b.Helper()
	ctx := context.Background()
	now := time.Date(2026, 7, 23, 0, 0, 0, 0, time.UTC)
	for i := range n {
		repo := repository.Ref{Host: "github.com", Owner: "acme", Name: fmt.Sprintf("r%04d", i)}
		s := mergequeue.NewSnapshot(mergequeue.DefaultQueue(repo, "main"))
		if busy {
			var err error
			s, _, err = mergequeue.Submit(s, mergequeue.SubmitRequest{PRNumber: 1}, now, uuid.NewString)
			if err != nil {
				b.Fatal(err)
			}
			// One step settles what the still GitHub shows, so ticks find nothing new.
			s, _ = mergequeue.Step(s, mergequeue.Observations{
				TargetHeadSHA: "base", BranchProtection: &mergequeue.BranchProtection{Contexts: []string{"ci"}},
				PRs: []mergequeue.PRObservation{{Number: 1, State: mergequeue.PROpen, HeadSHA: "feed", BaseBranch: "main", Draft: true, Mergeability: mergequeue.Mergeable}},
			}, now, uuid.NewString)
		}
		k := store.QueueKey{Org: "acme", Repo: repo, Branch: "main"}
		if err := st.CreateQueue(ctx, store.QueueRecord{Key: k, ID: uuid.NewString(), CreatedAt: now, Snapshot: s}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchTick(b *testing.B, busy bool) {
	db, table := storetest.NewTable(b)
	st := store.New(db, table, nil)
	seedQueues(b, st, 1000, busy)
	d := &queuesvc.Service{Store: st, GitHub: stillGitHub{}, Now: time.Now, NewID: uuid.NewString, PageSize: 25}
	ctx, usage := store.WithUsage(context.Background())
	b.ResetTimer()
	for b.Loop() {
		if _, err := d.Tick(ctx); err != nil {
			b.Fatal(err)
		}
	}
	calls, _ := usage.Snapshot()
	b.ReportMetric(float64(calls)/float64(b.N), "dynamodb-calls/tick")
}

// BenchmarkTick1000IdleQueues: 1,000 queues with nothing submitted: none
// is in the active index, so a tick reads the cursor and one empty page.
func BenchmarkTick1000IdleQueues(b *testing.B) { benchTick(b, false) }

// BenchmarkTick1000WaitingQueues: 1,000 queues each holding a PR that is
// not ready (a draft): a tick advances all of them, 16 at once, in pages
// of 25, each observed and stepped without a write.
func BenchmarkTick1000WaitingQueues(b *testing.B) { benchTick(b, true) }

// BenchmarkPingBaseline is one GetItem on the same DynamoDB Local: the
// unit the tick figures compare with.
func BenchmarkPingBaseline(b *testing.B) {
	db, table := storetest.NewTable(b)
	st := store.New(db, table, nil)
	ctx := context.Background()
	for b.Loop() {
		if err := st.Ping(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTickStepsEveryActiveQueue: with 120 active queues in pages of 25,
// one tick visits them all; with a budget spent after one page, ticks take
// turns from where the last stopped, and a round of them visits each queue
// once.
func TestTickStepsEveryActiveQueue(t *testing.T) {
	t.Parallel()
	db, table := storetest.NewTable(t)
	st := store.New(db, table, nil)
	seedQueues(t, st, 120, true)
	ctx := context.Background()
	d := &queuesvc.Service{Store: st, GitHub: stillGitHub{}, Now: time.Now, NewID: uuid.NewString, PageSize: 25}
	if n, err := d.Tick(ctx); err != nil || n != 120 {
		t.Fatalf("one tick visited %d (%v), want all 120", n, err)
	}
	d.TickBudget = time.Nanosecond // spent after the first page
	var got []int
	for range 6 {
		n, err := d.Tick(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, n)
	}
	if fmt.Sprint(got) != "[25 25 25 25 20 25]" {
		t.Errorf("ticks on a spent budget visited %v, want pages in turn: [25 25 25 25 20 25]", got)
	}
}
